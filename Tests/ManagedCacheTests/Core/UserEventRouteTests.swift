import Foundation
import TestSupport
import Testing

@testable import ManagedCache

/// How an event's object reaches a user typed for `Object` (`UserEvent.route`): the exact type
/// directly, a subclass's instance or a bridged value through a cast, anything else as
/// `.decodingFailed` (ready) or dropped (preview).
@Suite struct UserEventRouteTests {
    class Shape: @unchecked Sendable {}  // no stored state: nothing to share unsafely
    final class Circle: Shape, @unchecked Sendable {}  // none either

    /// What `route(as:)` called for `event`.
    private func routed<Object>(_ event: UserEvent, as type: Object.Type) -> String {
        var calls: [String] = []
        event.route(
            as: type, ready: { object, _, _ in calls.append("ready \(Swift.type(of: object))") },
            failed: { calls.append("failed \($0.kind)") }, progress: { _ in calls.append("progress") },
            preview: { calls.append("preview \(Swift.type(of: $0))") })
        return calls.joined(separator: ", ")
    }

    @Test func eachObjectReachesTheUserAsItsTypeAllows() {
        let table: [(event: UserEvent, got: String, expected: String)] = [
            (.ready(Shape(), .memory), routed(.ready(Shape(), .memory), as: Shape.self), "ready Shape"),
            (.ready(Circle(), .memory), routed(.ready(Circle(), .memory), as: Shape.self), "ready Circle"),
            (.ready("text", .memory), routed(.ready("text", .memory), as: Shape.self), "failed decoding"),
            (.ready(Data([1]), .network), routed(.ready(Data([1]), .network), as: Data.self), "ready Data"),
            (.preview(Circle()), routed(.preview(Circle()), as: Shape.self), "preview Circle"),
            (.preview(Circle()), routed(.preview(Circle()), as: Circle.self), "preview Circle"),
            (.preview(7), routed(.preview(7), as: Shape.self), ""),
        ]
        for row in table { #expect(row.got == row.expected, "\(row.event)") }
    }

    /// Decodes nothing: the objects of these tests are put in the memory cache directly.
    struct ShapeDecoder: ObjectDecoding {
        var identifier: String { "test.shape" }
        func decode(_ data: LoadedData) throws -> Shape { Shape() }
    }

    /// A memory hit reaches the user inside `manage` without an event (`receiveMemoryHit`), by the
    /// same rules: its exact type and a subclass's instance as the object, another type as
    /// `.decodingFailed` (two decoders sharing an identifier).
    @Test func aMemoryHitReachesTheUserAsItsTypeAllows() {
        let manager = makeScriptedManager(loader: ScriptedDataLoader())
        let decoder = ShapeDecoder()
        let cached: [(path: String, object: any Sendable)] = [("exact", Shape()), ("subclass", Circle()), ("other", "text")]
        for (path, object) in cached {
            let key = ObjectKey(dataKey: request("hit/\(path)").dataKey, variant: decoder.identifier)
            manager.memoryCache.setValue(CachedObject(object: object, freshness: nil, cost: 1), forKey: key, cost: 1)
        }
        let users = cached.map { RecordingUser(request("hit/\($0.path)"), decoder: decoder) }
        for user in users { manager.manage(user) }
        #expect(users[0].objects.map { String(describing: type(of: $0)) } == ["Shape"])
        #expect(users[0].origins == [.memory])
        #expect(users[1].objects.map { String(describing: type(of: $0)) } == ["Circle"])
        #expect(users[2].objects.isEmpty)
        #expect(users[2].errors.map(\.kind) == [.decoding])
    }
}

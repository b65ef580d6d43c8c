import ExampleSupport
// Users that are not images, in the three shapes the README's recipes describe: a thread-safe
// user (a label whose mutable text sits behind a lock), a main-actor user (a view model with plain
// mutable properties, as a view controller or a cell would have), and an `async` caller with no
// user at all (or awaiting an `ObjectUser`'s delivery). The manager downloads the poem once and shares the decoded word count.
//
//     swift run CustomUser
import Foundation
import LoopbackServer
import ManagedCache

/// Decodes text into its word count.
struct WordCounter: ObjectDecoding {
    func decode(_ data: LoadedData) throws -> Int {
        String(decoding: try data.bytes(), as: UTF8.self).split(whereSeparator: \.isWhitespace).count
    }
}

// 1. A thread-safe user: called on whichever thread finished the work, so it must be `Sendable`;
//    its one mutable field sits behind a lock (`Locked`, an `NSLock`; `Mutex` needs iOS 18).
final class WordCountLabel: ManagedObjectUser {
    let objectRequest: ObjectRequest?
    let objectDecoder = WordCounter()
    let text = Locked("…")

    init(url: URL) { objectRequest = ObjectRequest(url: url) }

    func managedObjectReady(_ count: Int, origin: DataOrigin, request: ObjectRequest) {
        text.withLock { $0 = "\(count) words (\(origin))" }
    }

    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        text.withLock { $0 = "unavailable: \(error)" }
    }
}

// 2. A main-actor user: a `@MainActor final class` with plain mutable properties, no lock and no
//    `@unchecked Sendable`. The manager reads its request on the main actor and calls it there; a
//    memory hit arrives before `manage` returns. A `UIViewController`, a `UITableViewCell` or an
//    `ObservableObject` view model conforms the same way.
@MainActor final class WordCountViewModel: MainActorObjectUser {
    var objectRequest: ObjectRequest?
    let objectDecoder = WordCounter()
    private(set) var text = "…"
    private(set) var isLoading = false

    func show(_ url: URL, with manager: ObjectManager) {
        objectRequest = ObjectRequest(url: url)
        isLoading = true
        manager.manage(self)
    }

    func managedObjectReady(_ count: Int, origin: DataOrigin, request: ObjectRequest) {
        text = "\(count) words (\(origin))"
        isLoading = false
    }

    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        text = "unavailable: \(error)"
        isLoading = false
    }
}

let server = try LoopbackServer()
server.setRoute("/poem.txt", .ok(Data("the quick brown fox jumps over the lazy dog".utf8)))
server.setRoute("/haiku.txt", .ok(Data("an old silent pond a frog jumps into the pond splash silence again".utf8)))
server.setRoute("/missing.txt", .status(404))
let manager = ObjectManager()

/// Waits (bounded, letting the main actor run the callbacks) until `done` holds.
@MainActor func wait(until done: () -> Bool) async {
    let deadline = Date().addingTimeInterval(10)
    while !done(), Date() < deadline { try? await Task.sleep(nanoseconds: 10_000_000) }
}

print("thread-safe users:")
let labels = [
    WordCountLabel(url: server.url("/poem.txt")), WordCountLabel(url: server.url("/poem.txt")),
    WordCountLabel(url: server.url("/missing.txt")),
]
for label in labels { manager.manage(label) }
await wait { !labels.contains { $0.text.withLock { $0 } == "…" } }
for label in labels { print("  " + label.text.withLock { $0 }) }

print("main-actor users:")
let poemModel = WordCountViewModel()
poemModel.show(server.url("/poem.txt"), with: manager)  // in memory: shown before `show` returns
print("  poem, as `manage` returned: \(poemModel.text)")
let haikuModel = WordCountViewModel()
haikuModel.show(server.url("/haiku.txt"), with: manager)
print("  haiku, as `manage` returned: \(haikuModel.text)")
await wait { !haikuModel.isLoading }
print("  haiku, once loaded: \(haikuModel.text)")

print("an async caller:")
let count = try await manager.object(for: ObjectRequest(url: server.url("/haiku.txt")), decoder: WordCounter())
print("  haiku: \(count) words")

print("an ObjectUser awaited (no continuation or lock of your own):")
let poemUser = ObjectUser(request: ObjectRequest(url: server.url("/poem.txt")), decoder: WordCounter())
manager.manage(poemUser)  // `poemUser` stays alive in this scope: the manager holds it weakly
let delivery = try await poemUser.delivery()
print("  poem: \(delivery.object) words from \(delivery.origin), \(delivery.freshness)")
print("HTTP requests: poem \(server.requestCount(for: "/poem.txt")), haiku \(server.requestCount(for: "/haiku.txt"))")

/// One delivery of a shared object: the object, where it came from and whether it is known to be
/// current. What the `await` forms that tell everything return
/// (``ObjectManager/delivery(for:decoder:progress:)``, ``ObjectManager/dataDelivery(from:oid:)``),
/// what ``ObjectManager/deliveryEvents(for:decoder:)`` ends with, and what an ``ObjectUser`` holds
/// (``ObjectUser/delivery()``).
///
/// ```swift
/// import Foundation
/// import ManagedCache
///
/// struct Feed: Decodable, Sendable { var title: String }
///
/// let manager = ObjectManager()
/// let request = ObjectRequest(url: URL(string: "https://example.com/feed.json")!)
/// let delivery = try await manager.delivery(for: request, decoder: JSONObjectDecoder<Feed>())
/// print(delivery.object.title)
/// if delivery.freshness.isStale { print("may be out of date (from \(delivery.origin))") }
/// ```
public struct ObjectDelivery<Object: Sendable>: Sendable {
    /// The object every user of the key shares.
    public let object: Object
    /// Where it came from: memory, another user, the file cache, the network.
    public let origin: DataOrigin
    /// Whether it is known to be current: `.stale` when shown past its HTTP freshness (while it
    /// is revalidated, or because revalidating it failed).
    public let freshness: ObjectFreshness

    /// Creates a delivery.
    ///
    /// - Parameters:
    ///   - object: The shared object.
    ///   - origin: Where it came from.
    ///   - freshness: Whether it is known to be current. Default `.current`.
    public init(object: Object, origin: DataOrigin, freshness: ObjectFreshness = .current) {
        self.object = object
        self.origin = origin
        self.freshness = freshness
    }
}

extension ObjectDelivery: Equatable where Object: Equatable {}
extension ObjectDelivery: Hashable where Object: Hashable {}

extension ObjectDelivery: CustomStringConvertible {
    /// The object, then where it came from and whether it is current: `Feed(…) from network, current`.
    public var description: String { "\(object) from \(origin), \(freshness)" }
}

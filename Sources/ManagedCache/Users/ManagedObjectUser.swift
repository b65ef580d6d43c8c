import Foundation

/// Anything that uses a managed object: an image view, a JSON-backed model, a PDF page.
///
/// A user says what to load (`objectRequest`) and how to decode it (`objectDecoder`), and is told
/// when the shared object is ready or why it failed. Pass it to `ObjectManager.manage(_:)`. The
/// manager holds users **weakly**: a user that is deallocated simply disappears, with no need to
/// unregister. Re-managing a user with another request (cell reuse) detaches it from the old one
/// first; it never receives the old object afterwards.
///
/// Callbacks arrive on the thread `callbackDelivery` names. A memory-cache hit is delivered
/// synchronously, on the caller's thread, before `manage` returns (for `.mainQueue`, when that
/// thread is the main one). The user must be `Sendable`: keep mutable state behind a lock. A
/// `@MainActor` type (a view controller, a cell, a view model) conforms to `MainActorObjectUser`
/// instead.
///
/// ```swift
/// final class Greeting: ManagedObjectUser {
///     let objectRequest: ObjectRequest? = ObjectRequest(url: URL(string: "https://example.com/hello.txt")!)
///     let objectDecoder = DataDecoder()
///     func managedObjectReady(_ object: Data, origin: DataOrigin, request: ObjectRequest) { print(object.count) }
///     func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) { print(error) }
/// }
/// ```
public protocol ManagedObjectUser: AnyObject, Sendable {
    /// The decoder that turns bytes into this user's object type.
    associatedtype Decoder: ObjectDecoding

    /// What to load. Read once by each `manage` call; `nil` detaches the user.
    var objectRequest: ObjectRequest? { get }
    /// How to decode the bytes. Its `identifier` is part of the key.
    var objectDecoder: Decoder { get }
    /// Which thread the asynchronous callbacks arrive on. Default `.immediate`.
    var callbackDelivery: CallbackDelivery { get }

    /// The shared object for `request` is ready. `origin` says where it came from.
    func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, request: ObjectRequest)
    /// Loading `request` failed, or was cancelled; `error` says why.
    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest)
    /// Bytes arrived for `request`. Default: ignored.
    func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest)
}

extension ManagedObjectUser {
    public var callbackDelivery: CallbackDelivery { .immediate }
    public func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest) {}
}

/// The thread a user's asynchronous callbacks run on.
public enum CallbackDelivery: Sendable, Hashable {
    /// On whichever thread finished the work, as soon as it is done. For thread-safe users,
    /// `async` code and command-line programs.
    case immediate
    /// On the main queue (`DispatchQueue.main`), for UI users, whichever thread called `manage`.
    /// The manager checks again on the main queue that the user still wants this request (and is
    /// still alive) before calling it.
    case mainQueue
}

/// How much of a download has arrived.
public struct LoadProgress: Sendable, Hashable {
    /// Bytes received so far (counted by the manager: `URLSessionTask.progress` stays 0 on Linux).
    public var receivedBytes: Int
    /// The `Content-Length`, when the server sent one.
    public var expectedBytes: Int?

    /// Creates a progress value.
    public init(receivedBytes: Int, expectedBytes: Int?) {
        self.receivedBytes = receivedBytes
        self.expectedBytes = expectedBytes
    }

    /// `receivedBytes / expectedBytes`, between 0 and 1, when the size is known.
    public var fractionCompleted: Double? {
        guard let expectedBytes, expectedBytes > 0 else { return nil }
        return min(1, Double(receivedBytes) / Double(expectedBytes))
    }
}

import Foundation

/// Anything that uses a managed object: an image view, a JSON-backed model, a PDF page.
///
/// A user says what to load (`objectRequest`) and how to decode it (`objectDecoder`), and is told
/// when the shared object is ready or why it failed. Pass it to `ObjectManager.manage(_:)`. The
/// manager holds users **weakly**: a user that is deallocated simply disappears, with no need to
/// unregister. Re-managing a user with another request (cell reuse) detaches it from the old one
/// first; it never receives the old object afterwards. See <doc:Users> for the three kinds of
/// user and when to pick each.
///
/// Callbacks arrive on the thread `callbackDelivery` names. A memory-cache hit is delivered
/// synchronously, on the caller's thread, before `manage` returns (for `.mainQueue`, when that
/// thread is the main one). The user must be `Sendable`: keep mutable state behind a lock. A
/// `@MainActor` type (a view controller, a cell, a view model) conforms to `MainActorObjectUser`
/// instead.
///
/// ```swift
/// import Foundation
/// import ManagedCache
///
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

    /// The shared object is ready: the final callback of a successful `manage`. Called again
    /// when a revalidation brings a newer object while the user is still attached.
    ///
    /// - Parameters:
    ///   - object: The object every user of the key shares.
    ///   - origin: Where it came from (memory, another user, the file cache, the network).
    ///   - request: The request the user was managed with, which this answers.
    func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, request: ObjectRequest)
    /// The shared object is ready, with whether it is known to be current: implement
    /// this one as well to tell people when what they see may be out of date (shown while it is
    /// revalidated, or because the network failed: see ``ObjectFreshness``). Optional: the
    /// default calls ``managedObjectReady(_:origin:request:)``, which stays the one to implement
    /// otherwise.
    ///
    /// - Parameters:
    ///   - object: The object every user of the key shares.
    ///   - origin: Where it came from.
    ///   - freshness: `.current`, or `.stale` with why it could not be revalidated.
    ///   - request: The request the user was managed with, which this answers.
    func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, freshness: ObjectFreshness, request: ObjectRequest)
    /// Loading failed or was cancelled: the final callback of an unsuccessful `manage`. The user
    /// is detached; manage it again to retry.
    ///
    /// - Parameters:
    ///   - error: Why: ``ManagedCacheError/cancelled(_:)`` with
    ///     ``ManagedCacheError/CancellationReason/loadingBufferOverflow`` when newer loads pushed
    ///     this one out of the loading buffer.
    ///   - request: The request the user was managed with.
    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest)
    /// Bytes arrived. Optional: the default ignores progress.
    ///
    /// - Parameters:
    ///   - progress: The bytes received so far, and the announced total.
    ///   - request: The request the user was managed with.
    func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest)

    /// Whether this user wants previews of its object while it downloads (a progressive JPEG's
    /// first scans), through `managedObjectPreview(_:request:)`. Read by each `manage`, like the
    /// request. Default `false`: no previews are made or delivered for a user that does not ask.
    var wantsPreviews: Bool { get }
    /// A preview of the object for `request`, made from the bytes that have arrived, while the
    /// download goes on (only when `wantsPreviews` and the decoder makes previews: see
    /// `PreviewDecoding`). Previews come at most every `ObjectManager.Configuration.previewInterval`,
    /// never after the final callback, and are never cached or given to other users; the object
    /// itself (`managedObjectReady`) or a failure always follows. Default: ignored.
    ///
    /// - Parameters:
    ///   - preview: A preview made from the bytes that have arrived; not the object itself.
    ///   - request: The request the user was managed with.
    func managedObjectPreview(_ preview: Decoder.Object, request: ObjectRequest)
}

extension ManagedObjectUser {
    /// Calls ``managedObjectReady(_:origin:request:)``: freshness is ignored.
    ///
    /// - Parameters:
    ///   - object: The shared object.
    ///   - origin: Where it came from.
    ///   - freshness: Whether it is known to be current (ignored).
    ///   - request: The request it answers.
    public func managedObjectReady(_ object: Decoder.Object, origin: DataOrigin, freshness: ObjectFreshness, request: ObjectRequest) {
        managedObjectReady(object, origin: origin, request: request)
    }
    /// ``CallbackDelivery/immediate``: callbacks run on whichever thread finished the work.
    public var callbackDelivery: CallbackDelivery { .immediate }
    /// Ignores progress.
    ///
    /// - Parameters:
    ///   - progress: The bytes received so far.
    ///   - request: The request they belong to.
    public func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest) {}
    /// `false`: previews are not wanted.
    public var wantsPreviews: Bool { false }
    /// Ignores the preview.
    ///
    /// - Parameters:
    ///   - preview: A preview made from the bytes that have arrived; not the object itself.
    ///   - request: The request the user was managed with.
    public func managedObjectPreview(_ preview: Decoder.Object, request: ObjectRequest) {}
}

/// The thread a user's asynchronous callbacks run on.
public enum CallbackDelivery: Sendable, Hashable {
    /// On whichever thread finished the work, as soon as it is done. For thread-safe users,
    /// `async` code and command-line programs. The callback runs on one of the engine's few
    /// threads: it must not block waiting for another load (hand that wait to a task or a queue
    /// of its own).
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
    ///
    /// - Parameters:
    ///   - receivedBytes: Bytes received so far.
    ///   - expectedBytes: The announced total, or `nil` when unknown.
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

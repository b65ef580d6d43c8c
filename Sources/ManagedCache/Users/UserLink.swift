import Foundation
import ManagedCacheLocking

/// How the manager reaches one user: it holds the user **weakly**, remembers who it is and where
/// its callbacks run, and calls it. The manager's tables and every delivery in flight (including
/// one queued on the main queue) hold the link, never the user, so a user released before its
/// callback runs is not kept alive by the manager and is not called.
///
/// Immutable and `Sendable`: what it remembers was read from the user once, on the thread that
/// called `manage`. A user managed again with another `callbackDelivery` or `wantsPreviews` gets
/// a new link.
protocol UserLink: AnyObject, Sendable {
    /// The user's identity (its table key in the manager), read when it was managed.
    var userID: ObjectIdentifier { get }
    /// Where its callbacks run, read when it was managed.
    var delivery: CallbackDelivery { get }
    /// Whether the user wants previews, read when it was managed.
    var wantsPreviews: Bool { get }
    /// Whether the user is still alive.
    var isAlive: Bool { get }
    /// Calls the user, if it is still alive, with `event` for `request`. The caller runs on a
    /// thread `delivery` allows (the main queue for `.mainQueue`).
    func deliver(_ event: UserEvent, request: ObjectRequest)
}

/// The link to a thread-safe `ManagedObjectUser`.
final class ThreadSafeUserLink<User: ManagedObjectUser>: UserLink {
    weak let user: User?
    let userID: ObjectIdentifier
    let delivery: CallbackDelivery
    let wantsPreviews: Bool

    init(_ user: User, delivery: CallbackDelivery, wantsPreviews: Bool) {
        self.user = user
        userID = ObjectIdentifier(user)
        self.delivery = delivery
        self.wantsPreviews = wantsPreviews
    }

    var isAlive: Bool { MainQueueRelease.isAlive(user, delivery: delivery) }

    func deliver(_ event: UserEvent, request: ObjectRequest) {
        user?.receive(event, request: request)
    }
}

/// Where the last release of a UI user happens. Asking whether a weakly held user is alive loads
/// it strongly for a moment; off the main queue, if the app drops its last reference meanwhile,
/// that moment's release would be the last one and the user (a view) would deinitialise on this
/// thread, under the manager's lock. So a user delivered on the main queue that is found alive
/// off it is kept, and released on the main queue: its last release, whenever it comes, is
/// there. The references kept are released in batches, one block on the main queue per batch.
enum MainQueueRelease {
    private static let kept = Lock<[any AnyObject & Sendable]>([])

    /// Whether `user` is alive; when it is, `delivery` is `.mainQueue` and this is not the main
    /// queue, the strong reference the check took is released on the main queue.
    @inline(__always)
    static func isAlive<User: AnyObject & Sendable>(_ user: @autoclosure () -> User?, delivery: CallbackDelivery) -> Bool {
        guard delivery == .mainQueue, !MainQueue.isCurrent else { return user() != nil }
        guard let alive = user() else { return false }
        keep(alive)
        return true
    }

    /// Keeps `object` until the main queue's next batch.
    static func keep(_ object: any AnyObject & Sendable) {
        let first = kept.withLock { kept in
            kept.append(object)
            return kept.count == 1
        }
        if first { DispatchQueue.main.async { releaseKept() } }
    }

    /// Releases the references kept so far, after the lock (a user's deinit may take time).
    private static func releaseKept() {
        let batch = kept.withLock { kept in
            defer { kept.removeAll() }
            return kept
        }
        withExtendedLifetime(batch) {}
    }

    /// How many references wait for the main queue (for tests).
    static var keptCount: Int { kept.withLock { $0.count } }
}

/// Whether code runs on the main queue, where the main actor's work runs.
enum MainQueue {
    #if !canImport(Darwin)
    /// Marks the main queue. On Linux the main queue may be drained by a thread other than the
    /// process's first one (`dispatchMain`, test runners), which `Thread.isMainThread` does not
    /// recognise, while the main actor runs there.
    private static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()
    #endif

    /// Whether the caller runs on the main queue (on Apple platforms: the main thread).
    static var isCurrent: Bool {
        #if canImport(Darwin)
        Thread.isMainThread
        #else
        DispatchQueue.getSpecific(key: key) == true
        #endif
    }
}

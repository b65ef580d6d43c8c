import Foundation

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

    var isAlive: Bool { user != nil }

    func deliver(_ event: UserEvent, request: ObjectRequest) {
        user?.receive(event, request: request)
    }
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

#if canImport(UIKit)
import Foundation
import ManagedCache
import ManagedCacheLocking
import UIKit

// The shells of `BackgroundActivity` (in ManagedCache, where the choice between them is made and
// tested): UIKit background tasks for apps, `ProcessInfo` expiring activities for app extensions.

/// Finishing the file caches' writes before the system suspends the process.
extension JournaledFileCache {
    #if !os(watchOS)
    /// Makes every file cache of the process finish its writes (commits, removals, trims,
    /// compactions, closing) before the system suspends it: inside a UIKit background task in an
    /// app, inside a `ProcessInfo` expiring activity in an app extension or a widget (which have
    /// no `UIApplication`). Call it once, early: at launch in an app, at the entry point of an
    /// extension. Overlapping writes share one task.
    ///
    /// ```swift
    /// // In the app:
    /// JournaledFileCache.finishWritesInBackground(application: UIApplication.shared)
    /// // In an extension or a widget:
    /// JournaledFileCache.finishWritesInBackground(application: nil)
    /// ```
    ///
    /// - Parameter application: The app's `UIApplication.shared`; nil in an app extension.
    @MainActor
    public static func finishWritesInBackground(application: UIApplication?) {
        BackgroundActivity.install(
            applicationTasks: application.map { ApplicationBackgroundTasks(application: $0) },
            expiringActivities: ExpiringActivities())
    }
    #else
    /// Makes every file cache of the process finish its writes (commits, removals, trims,
    /// compactions, closing) inside a `ProcessInfo` expiring activity, before the system
    /// suspends it. Call it once, early.
    public static func finishWritesInBackground() {
        BackgroundActivity.install(applicationTasks: nil, expiringActivities: ExpiringActivities())
    }
    #endif
}

#if !os(watchOS)
/// UIKit background tasks of one app (`beginBackgroundTask(withName:expirationHandler:)` and
/// `endBackgroundTask(_:)` may be called from any thread: the SDK marks them nonisolated).
private final class ApplicationBackgroundTasks: BackgroundActivityStarting {
    /// Main-actor isolated, so Sendable; only its nonisolated methods are called here.
    let application: UIApplication
    /// The tasks begun and not ended yet: each is ended exactly once, by `end` or at expiry.
    private let active = Lock<Set<Int>>([])

    init(application: UIApplication) {
        self.application = application
    }

    func begin(named name: String, expired: @escaping @Sendable () -> Void) -> Int? {
        let begun = Lock(UIBackgroundTaskIdentifier.invalid)
        let identifier = application.beginBackgroundTask(withName: name) { [weak self] in
            // Shortly before the time runs out: a task not ended now gets the app killed.
            guard let self else { return }
            let task = begun.withLock { $0 }
            if task != .invalid { self.end(task.rawValue) }
            expired()
        }
        guard identifier != .invalid else { return nil }
        begun.withLock { $0 = identifier }
        active.withLock { _ = $0.insert(identifier.rawValue) }
        return identifier.rawValue
    }

    func end(_ token: Int) {
        guard active.withLock({ $0.remove(token) }) != nil else { return }
        application.endBackgroundTask(UIBackgroundTaskIdentifier(rawValue: token))
    }
}
#endif

/// `ProcessInfo` expiring activities: the activity lasts while its block runs, so the block
/// waits (on the system's queue) until `end`, or until the system says the process is about to
/// be suspended (the block is called again with `true`).
private final class ExpiringActivities: BackgroundActivityStarting {
    /// The activities under way, by token: signalled to let the holding block return.
    private let releases = Lock<[Int: DispatchSemaphore]>([:])
    private let counter = Lock(0)

    func begin(named name: String, expired: @escaping @Sendable () -> Void) -> Int? {
        let token = counter.withLock { count in
            count += 1
            return count
        }
        let release = DispatchSemaphore(value: 0)
        releases.withLock { $0[token] = release }
        ProcessInfo.processInfo.performExpiringActivity(withReason: name) { [weak self] isExpired in
            guard isExpired else {
                release.wait()  // the activity lasts until `end` (or the expiry) signals
                return
            }
            if self?.take(token) != nil {
                release.signal()
                expired()
            }
        }
        return token
    }

    func end(_ token: Int) {
        take(token)?.signal()
    }

    private func take(_ token: Int) -> DispatchSemaphore? {
        releases.withLock { $0.removeValue(forKey: token) }
    }
}
#endif

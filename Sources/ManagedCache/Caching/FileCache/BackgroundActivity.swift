import Foundation
import ManagedCacheLocking

/// Something that keeps the process running while it does a piece of work the system might
/// otherwise suspend it in the middle of: a UIKit background task in an app, an expiring activity
/// of `ProcessInfo` in an app extension (the shells in `ManagedCacheUIKit`).
package protocol BackgroundActivityStarting: Sendable {
    /// Begins an activity named `name`. `expired` runs when the system ends it early (the shell
    /// has ended it then). Returns a token for `end(_:)`, or nil when none could be begun.
    func begin(named name: String, expired: @escaping @Sendable () -> Void) -> Int?
    /// Ends the activity `begin(named:expired:)` returned `token` for.
    func end(_ token: Int)
}

/// Runs the file caches' writes (commits, removals, trims, compactions, closing) inside a
/// background activity where the platform has one, so that an app leaving the foreground, or an
/// extension about to be suspended, finishes the write it is in (and releases the journal lock)
/// before it is suspended.
///
/// Which mechanism a process uses is decided here, on every platform (`mechanism(for:installed:)`,
/// tested on Linux): an app extension (its bundle ends in `.appex`) cannot reach `UIApplication`
/// and uses expiring activities; an app uses UIKit background tasks, or expiring activities when
/// only those were installed; anything else (a command-line tool, a Linux server) uses none. The
/// platforms' shells are installed by `ManagedCacheUIKit` (``install(applicationTasks:expiringActivities:)``).
///
/// Overlapping writes share one activity: the first begins it, the last ends it, so a burst of
/// commits costs one background task, not one each.
package enum BackgroundActivity {
    /// What kind of process this is.
    package enum Host: Sendable, Equatable {
        /// An app (its bundle is an `.app`, or unknown but it has an application object).
        case application
        /// An app extension, a widget among them (its bundle ends in `.appex`).
        case appExtension
        /// Neither: a command-line tool, a server, the tests.
        case other
    }

    /// How the writes are kept running.
    package enum Mechanism: Sendable, Equatable {
        /// `UIApplication.beginBackgroundTask(withName:expirationHandler:)`.
        case applicationTask
        /// `ProcessInfo.performExpiringActivity(withReason:using:)`.
        case expiringActivity
        /// Nothing: the platform does not suspend processes, or nothing is installed.
        case none
    }

    /// Which shells are installed.
    package struct Installed: Sendable, Equatable {
        /// UIKit background tasks (an app gave its `UIApplication`).
        package var applicationTasks: Bool
        /// Expiring activities.
        package var expiringActivities: Bool

        /// Creates a value.
        package init(applicationTasks: Bool, expiringActivities: Bool) {
            self.applicationTasks = applicationTasks
            self.expiringActivities = expiringActivities
        }
    }

    /// The kind of process whose main bundle is at `bundlePath`, given whether it has an
    /// application object (an app gave one to the shell).
    package static func host(bundlePath: String, hasApplication: Bool) -> Host {
        var path = bundlePath
        while path.hasSuffix("/") { path.removeLast() }
        if path.hasSuffix(".appex") { return .appExtension }
        return path.hasSuffix(".app") || hasApplication ? .application : .other
    }

    /// The decision: which mechanism `host` uses with the shells `installed`.
    package static func mechanism(for host: Host, installed: Installed) -> Mechanism {
        switch host {
        case .appExtension:
            // `UIApplication.shared` does not exist in an extension.
            return installed.expiringActivities ? .expiringActivity : .none
        case .application:
            if installed.applicationTasks { return .applicationTask }
            return installed.expiringActivities ? .expiringActivity : .none
        case .other:
            return .none
        }
    }

    /// The installed shells and the activity under way.
    private struct State {
        var starter: (any BackgroundActivityStarting)?
        var users = 0
        var token: Int?
    }

    private static let state = Lock(State())

    /// Installs the shells a platform has (`ManagedCacheUIKit` does) and chooses between them for
    /// this process (see `mechanism(for:installed:)`). Later writes run inside the chosen one.
    ///
    /// - Parameters:
    ///   - applicationTasks: UIKit background tasks of the app's `UIApplication`, or nil.
    ///   - expiringActivities: `ProcessInfo` expiring activities, or nil.
    package static func install(
        applicationTasks: (any BackgroundActivityStarting)?, expiringActivities: (any BackgroundActivityStarting)?
    ) {
        let installed = Installed(applicationTasks: applicationTasks != nil, expiringActivities: expiringActivities != nil)
        let host = host(bundlePath: Bundle.main.bundlePath, hasApplication: applicationTasks != nil)
        let starter: (any BackgroundActivityStarting)? =
            switch mechanism(for: host, installed: installed) {
            case .applicationTask: applicationTasks
            case .expiringActivity: expiringActivities
            case .none: nil
            }
        state.withLock { $0.starter = starter }
    }

    /// A starter used instead of the installed one by the writes of the task that sets it (for
    /// the tests: other tests' caches are not affected). The count of writes under way stays the
    /// process's, so two tasks that set one must not write at the same time.
    @TaskLocal static var starterForTesting: (any BackgroundActivityStarting)?

    /// Runs `body` inside the activity of this process's mechanism, begun for it or shared with
    /// the writes under way; directly when there is none.
    static func run<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        guard let starter = enter() else { return try body() }
        defer { leave(starter) }
        return try body()
    }

    /// Counts one more write; begins the activity for the first. Nil when there is no mechanism.
    private static func enter() -> (any BackgroundActivityStarting)? {
        let testing = starterForTesting
        let (starter, begins) = state.withLock { state -> ((any BackgroundActivityStarting)?, Bool) in
            guard let starter = testing ?? state.starter else { return (nil, false) }
            state.users += 1
            return (starter, state.users == 1 && state.token == nil)
        }
        guard let starter, begins else { return starter }
        // Begun outside the lock: a shell may call into the system, which may take its time.
        let token = starter.begin(named: "ManagedCache file cache write") {
            state.withLock { $0.token = nil }  // the shell ended it
        }
        let orphan = state.withLock { state -> Int? in
            guard state.users > 0 else { return token }  // every write ended meanwhile
            state.token = token
            return nil
        }
        if let orphan { starter.end(orphan) }
        return starter
    }

    /// Counts one write less; ends the activity after the last.
    private static func leave(_ starter: any BackgroundActivityStarting) {
        let ending = state.withLock { state -> Int? in
            state.users -= 1
            guard state.users == 0, let token = state.token else { return nil }
            state.token = nil
            return token
        }
        if let ending { starter.end(ending) }
    }
}

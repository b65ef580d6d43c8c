import Foundation
import ManagedCacheLocking
import Testing

@testable import ManagedCache

/// A starter that records what it was asked.
private final class RecordingStarter: BackgroundActivityStarting {
    let begun = Lock(0)
    let ended = Lock<[Int]>([])
    let expiries = Lock<[@Sendable () -> Void]>([])

    func begin(named name: String, expired: @escaping @Sendable () -> Void) -> Int? {
        expiries.withLock { $0.append(expired) }
        return begun.withLock { count in
            count += 1
            return count
        }
    }

    func end(_ token: Int) {
        ended.withLock { $0.append(token) }
    }
}

/// Which mechanism keeps a process running while the file caches write, and that their writes
/// run inside it: the decision is platform-neutral, the Apple shells only begin and end.
///
/// Serialized: the count of writes under way and the activity's token are the process's, shared
/// by the tests that set a starter. Side by side, one test's write made the other's the second
/// under way, which then began no activity of its own (seen once in CI).
@Suite(.serialized) struct BackgroundActivityTests {
    /// The decision, as a table: (bundle path, has an application object, shells installed) → mechanism.
    @Test func theMechanismFollowsTheKindOfProcess() {
        let both = BackgroundActivity.Installed(applicationTasks: true, expiringActivities: true)
        let expiringOnly = BackgroundActivity.Installed(applicationTasks: false, expiringActivities: true)
        let nothing = BackgroundActivity.Installed(applicationTasks: false, expiringActivities: false)
        let table: [(String, Bool, BackgroundActivity.Installed, BackgroundActivity.Mechanism)] = [
            ("/var/containers/Bundle/Application/X/Reader.app", true, both, .applicationTask),
            ("/var/containers/Bundle/Application/X/Reader.app", false, expiringOnly, .expiringActivity),
            ("/var/containers/Bundle/Application/X/Reader.app/PlugIns/Share.appex", false, both, .expiringActivity),
            ("/var/containers/Bundle/Application/X/Reader.app/PlugIns/Widget.appex/", false, expiringOnly, .expiringActivity),
            ("/var/containers/Bundle/Application/X/Reader.app/PlugIns/Widget.appex", false, nothing, .none),
            ("/usr/local/bin", false, both, .none),
            ("/usr/local/bin", true, both, .applicationTask),
            ("/Applications/Reader.app", false, nothing, .none),
        ]
        for (path, hasApplication, installed, expected) in table {
            let host = BackgroundActivity.host(bundlePath: path, hasApplication: hasApplication)
            #expect(BackgroundActivity.mechanism(for: host, installed: installed) == expected, "\(path) \(installed)")
        }
        #expect(BackgroundActivity.host(bundlePath: "/x/Share.appex", hasApplication: true) == .appExtension)
    }

    /// A commit, a removal, a trim and closing each run inside an activity; writes that overlap
    /// share one; reads begin none.
    @Test func writesRunInsideOneActivityAndReadsInNone() throws {
        let starter = RecordingStarter()
        try BackgroundActivity.$starterForTesting.withValue(starter) { try writesAndReads(starter) }
    }

    private func writesAndReads(_ starter: RecordingStarter) throws {
        try withTemporaryDirectory { root in
            let cache = try FileCache(directory: root)
            #expect(cache.statistics.count == 0)  // the opening's install, if it ran in an activity, is over
            let afterOpening = starter.begun.withLock { $0 }
            var begun = afterOpening
            func beganOneMore() -> Bool {
                let now = starter.begun.withLock { $0 }
                defer { begun = now }
                return now > begun
            }
            try cache.store(Data("a".utf8), forKey: "a")
            #expect(beganOneMore())
            let entry = try #require(cache.entry(forKey: "a"))
            _ = try cache.readData(for: entry)
            #expect(!beganOneMore())  // reads: none
            cache.removeEntry(forKey: "a")
            #expect(beganOneMore())
            cache.trim()
            #expect(beganOneMore())
            cache.close()
            #expect(beganOneMore())
            // Every activity begun was ended.
            #expect(starter.ended.withLock { $0 }.count == starter.begun.withLock { $0 })
        }
    }

    /// An activity the system ended (expired) is not ended again; the next write begins another.
    @Test func anExpiredActivityIsNotEndedTwice() throws {
        let starter = RecordingStarter()
        BackgroundActivity.$starterForTesting.withValue(starter) { expireOnce(starter) }
    }

    private func expireOnce(_ starter: RecordingStarter) {
        let expiredInside = Lock(false)
        BackgroundActivity.run {
            for expiry in starter.expiries.withLock({ $0 }) { expiry() }
            expiredInside.withLock { $0 = true }
        }
        #expect(expiredInside.withLock { $0 })
        #expect(starter.ended.withLock { $0 }.isEmpty)
        BackgroundActivity.run {}
        #expect(starter.begun.withLock { $0 } == 2)
        #expect(starter.ended.withLock { $0 } == [2])
    }
}

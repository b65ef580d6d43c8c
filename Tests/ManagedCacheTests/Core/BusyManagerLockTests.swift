import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// `manage` never waits for the manager's lock past `manageLockWaitBudget`. A call that
/// finds it held that long returns at once; its user is attached, and answered, once the lock is
/// free, exactly as if it had waited. A memory hit is still delivered before `manage` returns, and
/// nothing decided for the user's earlier request reaches it afterwards.
@Suite(.offCooperativePool) struct BusyManagerLockTests {
    /// A manager whose `manage` waits at most 1 ms for its lock (the fixtures wait as long as it takes).
    private func makeManager(_ loader: ScriptedDataLoader, fileCache: (any FileCaching)? = nil) -> ObjectManager {
        makeScriptedManager(loader: loader) {
            $0.manageLockWaitBudget = 0.001
            if let fileCache {
                $0.fileCache = fileCache
                $0.policy.fileCacheDelivery = .synchronous
            }
        }
    }

    /// Calls `manage` on a thread of its own and waits (within the bound) for it to return:
    /// `false` when it did not, having waited for the manager's lock.
    private func managedWithoutWaiting(_ manager: ObjectManager, _ user: RecordingUser<BlobDecoder>) async -> Bool {
        let returned = Lock(false)
        Thread.detachNewThread {
            manager.manage(user)
            returned.withLock { $0 = true }
        }
        return await waitUntil { returned.withLock { $0 } }
    }

    /// Manages `user` on a thread of its own while the manager's lock is held: `manage` returns
    /// without waiting and without an answer; once the lock is free, the user gets its one final
    /// callback.
    private func expectAnsweredOnlyOnceTheLockIsFree(
        _ manager: ObjectManager, _ user: RecordingUser<BlobDecoder>, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let holding = MutexHolder(manager.state)
        defer { holding.release() }
        #expect(
            await managedWithoutWaiting(manager, user), "manage waited for the manager's lock", sourceLocation: sourceLocation)
        #expect(user.finalCallbackCount == 0, sourceLocation: sourceLocation)
        holding.release()
        #expect(await waitUntil { user.finalCallbackCount == 1 }, sourceLocation: sourceLocation)
    }

    /// Loads `path` with a user of its own, so that it is in the memory cache.
    private func warm(_ manager: ObjectManager, _ path: String) async -> RecordingUser<BlobDecoder> {
        let user = RecordingUser(request(path), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.finalCallbackCount == 1 })
        return user
    }

    @Test func aMemoryHitIsAnsweredAtOnceAndItsUserAttachedOnceTheLockIsFree() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("A".utf8)))
        let manager = makeManager(loader)
        let first = await warm(manager, "a")
        let user = RecordingUser(request("a"), decoder: BlobDecoder())
        let holding = MutexHolder(manager.state)
        defer { holding.release() }
        #expect(await managedWithoutWaiting(manager, user), "manage waited for the manager's lock")
        #expect(user.origins == [.memory])  // answered before `manage` returned
        holding.release()
        #expect(await waitUntil { manager.statistics.deferredCalls == 1 })
        #expect(manager.statistics.memoryHits == 1)
        #expect(manager.state.withLock { $0.attachments[UserKey(ObjectIdentifier(user))]?.key.dataKey } == request("a").dataKey)
        #expect(user.finalCallbackCount == 1)
        _ = first
    }

    @Test func aLoadLeftToTheHolderStartsOnceTheLockIsFree() async {
        let loader = ScriptedDataLoader()
        loader.script("b", .body(Data("B".utf8)))
        let manager = makeManager(loader)
        let user = RecordingUser(request("b"), decoder: BlobDecoder())
        let holding = MutexHolder(manager.state)
        defer { holding.release() }
        #expect(await managedWithoutWaiting(manager, user), "manage waited for the manager's lock")
        #expect(loader.requestCount("b") == 0)
        holding.release()
        #expect(await waitUntil { user.finalCallbackCount == 1 })
        #expect(user.origins == [.network])
        #expect(loader.requestCount("b") == 1)
        #expect(manager.statistics.deferredCalls == 1)
    }

    @Test func aRememberedFailureIsAnsweredOnceTheLockIsFree() async {
        let loader = ScriptedDataLoader()
        loader.script("gone", .failure(.httpStatus(code: 404)))
        let manager = makeManager(loader)
        _ = await warm(manager, "gone")
        let user = RecordingUser(request("gone"), decoder: BlobDecoder())
        await expectAnsweredOnlyOnceTheLockIsFree(manager, user)
        #expect(user.errors == [.recentlyFailed(.httpStatus(code: 404))])
        #expect(loader.requestCount("gone") == 1)
    }

    /// A reused cell: managed for a load still running, then for a memory hit while the lock is
    /// busy. From the moment `manage` returns, what was decided for the first request is stale,
    /// and the cell ends with the hit alone.
    @Test func aReusedUserHearsNothingMoreOfItsEarlierRequest() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("A".utf8)))
        loader.script("slow", .held(firstChunk: Data("S".utf8), rest: Data("LOW".utf8)))
        let manager = makeManager(loader)
        _ = await warm(manager, "a")
        let user = RecordingUser(request("slow"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { loader.activeCount("slow") == 1 })
        let id = ObjectIdentifier(user)
        let earlier = manager.state.withLock { state in state.attachments[UserKey(id)].map { ($0.currency, $0.attachment) } }
        let holding = MutexHolder(manager.state)
        defer { holding.release() }
        user.setRequest(request("a"))
        #expect(await managedWithoutWaiting(manager, user), "manage waited for the manager's lock")
        #expect(user.origins == [.memory])
        if let (currency, attachment) = earlier {
            #expect(!currency.isCurrent(attachment), "a callback decided for the first request would still reach the user")
        } else {
            Issue.record("the user had no record")
        }
        holding.release()
        loader.release("slow")
        #expect(await waitUntil { loader.activeCount("slow") == 0 && manager.activeLoadCount == 0 })
        #expect(user.objects.map(\.text) == ["A"])
        #expect(user.finalCallbackCount == 1)
    }

    /// Two calls for one user left while the lock is busy run in order: the user ends on its last
    /// request, and hears nothing of the first.
    @Test func callsLeftForOneUserRunInTheOrderTheyWereMade() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("A".utf8)))
        loader.script("b", .held(firstChunk: Data("B".utf8), rest: Data("B".utf8)))
        let manager = makeManager(loader)
        _ = await warm(manager, "a")
        let user = RecordingUser(request("b"), decoder: BlobDecoder())
        let holding = MutexHolder(manager.state)
        defer { holding.release() }
        #expect(await managedWithoutWaiting(manager, user), "manage waited for the manager's lock")
        user.setRequest(request("a"))
        #expect(await managedWithoutWaiting(manager, user), "manage waited for the manager's lock")
        #expect(user.origins == [.memory])
        holding.release()
        #expect(await waitUntil { manager.statistics.deferredCalls == 2 })
        #expect(manager.state.withLock { $0.attachments[UserKey(ObjectIdentifier(user))]?.key.dataKey } == request("a").dataKey)
        loader.release("b")
        #expect(await waitUntil { manager.activeLoadCount == 0 })
        #expect(user.objects.map(\.text) == ["A"])
        #expect(user.finalCallbackCount == 1)
    }

    /// `unmanage` waits for the lock (it has no budget), and the call left before it runs first:
    /// the user ends detached and hears nothing.
    @Test func unmanageAfterALeftCallDetachesTheUser() async {
        let loader = ScriptedDataLoader()
        loader.script("b", .held(firstChunk: Data("B".utf8), rest: Data("B".utf8)))
        let manager = makeManager(loader)
        let user = RecordingUser(request("b"), decoder: BlobDecoder())
        let holding = MutexHolder(manager.state)
        defer { holding.release() }
        #expect(await managedWithoutWaiting(manager, user), "manage waited for the manager's lock")
        let unmanaged = Lock(false)
        Thread.detachNewThread {
            manager.unmanage(user)
            unmanaged.withLock { $0 = true }
        }
        holding.release()
        #expect(await waitUntil { unmanaged.withLock { $0 } })
        #expect(manager.state.withLock { $0.attachments[UserKey(ObjectIdentifier(user))] } == nil)
        loader.release("b")
        #expect(await waitUntil { manager.activeLoadCount == 0 })
        #expect(user.finalCallbackCount == 0)
    }

    /// A synchronous file-cache hit whose manager is busy is read and delivered in the background, once.
    @Test(arguments: CacheKind.allCases)
    func aFileCacheHitWhileTheLockIsBusyIsDeliveredOnceInTheBackground(kind: CacheKind) async throws {
        let directory = TemporaryDirectory()
        let loader = ScriptedDataLoader()
        let fileCache = try kind.open(directory.url)
        try fileCache.store(Data("disk".utf8), forKey: request("a").dataKey, metadata: FileCacheMetadata())
        let manager = makeManager(loader, fileCache: fileCache)
        let user = RecordingUser(request("a"), decoder: BlobDecoder())
        await expectAnsweredOnlyOnceTheLockIsFree(manager, user)
        #expect(user.origins == [.fileCache])
        #expect(user.objects.first?.bytes == Data("disk".utf8))
        #expect(loader.requestCount("a") == 0)
    }
}

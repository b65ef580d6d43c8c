import Foundation
import ManagedCache
import TestSupport
import Testing

@Suite struct SharingTests {
    /// On two threads of its own: its tasks make a thousand `manage` calls without suspending.
    @Test(.ownThreads) func thousandUsersOfOneKeyShareOneRequestOneDecodeOneInstance() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .held(firstChunk: Data("hel".utf8), rest: Data("lo".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let decoder = BlobDecoder()
        let users = (0..<1_000).map { _ in RecordingUser(request("a"), decoder: decoder) }
        await withTaskGroup(of: Void.self) { group in
            for chunk in stride(from: 0, to: users.count, by: 100) {
                group.addTask { for user in users[chunk..<chunk + 100] { manager.manage(user) } }
            }
        }
        loader.release("a")
        #expect(await waitUntil { users.allSatisfy { $0.objects.count == 1 } })
        #expect(loader.requestCount("a") == 1)
        #expect(decoder.decodes.count == 1)
        let first = users[0].objects[0]
        #expect(users.allSatisfy { $0.objects[0] === first })
        #expect(first.text == "hello")
        let statistics = manager.statistics
        #expect(statistics.networkLoads == 1)
        #expect(statistics.coalescedJoins == 999)
    }

    @Test func differentURLsWithOneOidShareEverything() async {
        let loader = ScriptedDataLoader()
        loader.script("mirror1/pic", .held(firstChunk: Data("pi".utf8), rest: Data("c".utf8)))
        loader.script("mirror2/pic", .body(Data("other".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let decoder = BlobDecoder()
        let one = RecordingUser(request("mirror1/pic", oid: "pic-42"), decoder: decoder)
        let two = RecordingUser(request("mirror2/pic", oid: "pic-42"), decoder: decoder)
        manager.manage(one)
        manager.manage(two)
        loader.release("mirror1/pic")
        #expect(await waitUntil { one.objects.count == 1 && two.objects.count == 1 })
        #expect(one.objects[0] === two.objects[0])
        #expect(loader.requestCount("mirror1/pic") + loader.requestCount("mirror2/pic") == 1)
        #expect(decoder.decodes.count == 1)
    }

    @Test func twoDecodersOfOneURLShareTheDownloadButNotTheObject() async {
        let loader = ScriptedDataLoader()
        loader.script("doc", .held(firstChunk: Data("{".utf8), rest: Data("}".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let blobUser = RecordingUser(request("doc"), decoder: BlobDecoder())
        let dataUser = RecordingUser(request("doc"), decoder: DataDecoder())
        manager.manage(blobUser)
        manager.manage(dataUser)
        loader.release("doc")
        #expect(await waitUntil { blobUser.objects.count == 1 && dataUser.objects.count == 1 })
        #expect(loader.requestCount("doc") == 1)
        #expect(blobUser.objects[0].bytes == dataUser.objects[0])
    }

    @Test func memoryHitIsDeliveredBeforeManageReturns() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("A".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let first = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(first)
        #expect(await waitUntil { first.objects.count == 1 })

        let second = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(second)
        // No waiting: the object must already be there.
        #expect(second.objects.count == 1)
        #expect(second.origins == [.memory])
        #expect(second.objects[0] === first.objects[0])
        #expect(manager.statistics.memoryHits == 1)
    }

    @Test func liveHandlerIsFoundAfterItsObjectLeftTheMemoryCache() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("A".utf8)))
        let manager = makeScriptedManager(loader: loader, memoryCount: 0)
        let decoder = BlobDecoder()
        let holder = RecordingUser(request("a"), decoder: decoder)
        manager.manage(holder)
        #expect(await waitUntil { holder.objects.count == 1 })
        #expect(manager.memoryCache.count == 0)

        let latecomer = RecordingUser(request("a"), decoder: decoder)
        manager.manage(latecomer)
        #expect(latecomer.objects.count == 1)
        #expect(latecomer.origins == [.sharedObject])
        #expect(latecomer.objects[0] === holder.objects[0])
        #expect(loader.requestCount("a") == 1)
        #expect(decoder.decodes.count == 1)
    }
}

import Foundation
import ManagedCache
import TestSupport
import Testing

@Suite struct ManagerMemoryTests {
    @Test func memoryCacheHoldsDecodedObjectsWithTheirByteCost() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data(repeating: 1, count: 300)))
        let manager = makeScriptedManager(loader: loader)
        let user = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.objects.count == 1 })
        #expect(manager.memoryCache.totalCost == 300)
        let key = ObjectKey(dataKey: request("a").dataKey, variant: BlobDecoder().identifier)
        #expect((manager.memoryCache.value(forKey: key)?.object as? Blob) === user.objects[0])
    }

    @Test func memoryCacheIsLRUByCountInsideTheManager() async {
        let loader = ScriptedDataLoader()
        for path in ["a", "b", "c"] { loader.script(path, .body(Data(path.utf8))) }
        let manager = makeScriptedManager(loader: loader, memoryCount: 2)
        for path in ["a", "b"] {
            let user = RecordingUser(request(path), decoder: BlobDecoder())
            manager.manage(user)
            #expect(await waitUntil { user.objects.count == 1 })
        }
        // A hit on "a" protects it when "c" arrives.
        let hit = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(hit)
        #expect(hit.origins == [.memory])
        let third = RecordingUser(request("c"), decoder: BlobDecoder())
        manager.manage(third)
        #expect(await waitUntil { third.objects.count == 1 })
        #expect(manager.memoryCache.keysFromMostRecent.map(\.dataKey) == [request("c").dataKey, request("a").dataKey])
    }

    @Test func memoryPressureEmptiesTheCacheButUsersKeepTheirObjects() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("A".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let user = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.objects.count == 1 })
        manager.handleMemoryPressure()
        #expect(manager.memoryCache.count == 0)
        #expect(user.objects[0].text == "A")
        // The live handler still shares the object without a new request.
        let second = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(second)
        #expect(second.objects.first === user.objects[0])
        #expect(loader.requestCount("a") == 1)
    }

    @Test func removeObjectForcesAReloadOnceNoUserHoldsIt() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("A".utf8)))
        let manager = makeScriptedManager(loader: loader)
        do {
            let user = RecordingUser(request("a"), decoder: BlobDecoder())
            manager.manage(user)
            #expect(await waitUntil { user.objects.count == 1 })
        }
        manager.removeObject(for: request("a"), decoder: BlobDecoder())
        let again = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(again)
        #expect(await waitUntil { again.objects.count == 1 })
        #expect(loader.requestCount("a") == 2)
        #expect(again.origins == [.network])
    }

    @Test func cacheInMemoryOffKeepsNothingInTheMemoryCache() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("A".utf8)))
        let manager = makeScriptedManager(loader: loader) { $0.policy.cacheInMemory = false }
        let user = RecordingUser(request("a"), decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.objects.count == 1 })
        #expect(manager.memoryCache.count == 0)
    }

    @Test func cachedObjectAnswersSynchronouslyWithoutLoading() async {
        let loader = ScriptedDataLoader()
        loader.script("a", .body(Data("A".utf8)))
        let manager = makeScriptedManager(loader: loader)
        #expect(manager.cachedObject(for: request("a"), decoder: BlobDecoder()) == nil)
        #expect(loader.requestCount("a") == 0)
        _ = try? await manager.object(for: request("a"), decoder: BlobDecoder())
        #expect(manager.cachedObject(for: request("a"), decoder: BlobDecoder())?.text == "A")
    }
}

import Foundation
import LoopbackServer
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// A JSON model that can be stored (Encodable) and one that cannot.
private struct Note: Codable, Sendable, Equatable {
    let title: String
    let stars: Int
}

private struct ReadOnlyNote: Decodable, Sendable, Equatable {
    let title: String
}

/// A decoder whose objects are variants stored in the file cache under their own key.
private struct VariantBlobDecoder: ObjectDecoding {
    let decodes = Counter()
    let storedVariantDecodes = Counter()
    var identifier: String { "test.variant" }
    var storesVariant: Bool { true }

    func decode(_ data: LoadedData) throws -> Blob {
        decodes.increment()
        if data.isStoredVariant {
            storedVariantDecodes.increment()
            return Blob(try data.bytes())
        }
        return Blob(Data("variant of ".utf8) + (try data.bytes()))
    }

    func encodedVariant(of object: Blob) -> Data? { object.bytes }
    func encode(_ object: Blob) throws -> Data? { object.bytes }
}

/// What `store(_:for:decoder:…)` completions report, for tests that use the callback API.
private final class Completions: Sendable {
    private let results = Lock<[Result<Void, StoreError>]>([])
    func record(_ result: Result<Void, StoreError>) { results.withLock { $0.append(result) } }
    var all: [Result<Void, StoreError>] { results.withLock { $0 } }
}

/// An object the app has, stored under a key.
@Suite(.offCooperativePool) struct StoreTests {
    private func bytes(_ entry: FileCacheEntry?, in cache: any FileCaching) -> Data? {
        entry.flatMap { try? cache.readData(for: $0) }
    }

    @Test func aStoredObjectIsAMemoryHitForItsRequestAndForAnyRequestWithItsOid() async throws {
        let server = try LoopbackServer()
        server.setRoute("/a", .ok(Data("network".utf8)))
        let manager = makeNetworkManager()
        let stored = Data("stored".utf8)
        // In async code the async `store` is preferred: `completion: nil` picks the synchronous one.
        manager.store(stored, for: ObjectRequest(url: server.url("/a"), oid: "photo-1"), decoder: DataDecoder(), completion: nil)

        let otherURL = ObjectRequest(url: server.url("/elsewhere"), oid: "photo-1")
        #expect(manager.cachedObject(for: otherURL, decoder: DataDecoder()) == stored)
        #expect(manager.cachedObject(for: ObjectRequest(oid: "photo-1"), decoder: DataDecoder()) == stored)
        let user = RecordingUser(otherURL, decoder: DataDecoder())
        manager.manage(user)
        #expect(user.objects == [stored], "delivered inside manage: a memory hit")
        #expect(user.origins == [.memory])
        #expect(
            manager.cachedObject(for: ObjectRequest(url: server.url("/a")), decoder: DataDecoder()) == nil,
            "the oid is the key, not the URL")
        #expect(server.totalRequestCount == 0)
        #expect(manager.statistics.storedObjects == 1)
    }

    @Test func usersWaitingForTheKeyGetTheStoredObjectAndTheLoadIsCancelled() async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/slow", response: .ok(Data("network".utf8)))
        let manager = makeNetworkManager()
        let request = ObjectRequest(url: server.url("/slow"))
        let decoder = BlobDecoder()
        let users = (0..<3).map { _ in RecordingUser(request, decoder: decoder) }
        for user in users { manager.manage(user) }
        #expect(await waitUntil { gate.arrivals == 1 })

        let stored = Blob(Data("stored".utf8))
        manager.store(stored, for: request, decoder: decoder, completion: nil)
        #expect(await waitUntil { users.allSatisfy { $0.objects.count == 1 } })
        #expect(users.allSatisfy { $0.objects[0] === stored }, "one shared object, the stored one")
        #expect(users.allSatisfy { $0.origins == [.stored] })
        #expect(manager.activeLoadCount == 0, "nobody else wanted the download: it was cancelled")
        #expect(manager.bufferedLoadKeys.isEmpty)
        gate.open()
        #expect(decoder.decodes.count == 0)
        #expect(manager.cachedObject(for: request, decoder: decoder) === stored)
        #expect(users.allSatisfy { $0.finalCallbackCount == 1 })
    }

    @Test func aSupersededDownloadStillServesOtherDecodersButItsBytesDoNotLandOverTheStoredOnes() async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/photo", response: .ok(Data("network".utf8)))
        let directory = TemporaryDirectory()
        let fileCache = try FileCache(directory: directory.url)
        let manager = makeNetworkManager(fileCache: fileCache)
        let request = ObjectRequest(url: server.url("/photo"))
        let dataUser = RecordingUser(request, decoder: DataDecoder())
        let blobUser = RecordingUser(request, decoder: BlobDecoder(name: "other"))
        manager.manage(dataUser)
        manager.manage(blobUser)
        #expect(await waitUntil { gate.arrivals == 1 })

        let stored = Data("stored".utf8)
        try await manager.store(stored, for: request, decoder: DataDecoder(), toFileCache: true)
        #expect(dataUser.objects == [stored])
        #expect(bytes(fileCache.entry(forKey: request.dataKey), in: fileCache) == stored)
        #expect(manager.activeLoadCount == 1, "the other decoder still wants the download")

        gate.open()
        #expect(await waitUntil { blobUser.objects.count == 1 })
        #expect(blobUser.objects.first?.text == "network", "the other decoder got the bytes it asked for")
        #expect(blobUser.origins == [.network])
        // The download ended (its commit was decided) before its bytes were decoded for blobUser.
        #expect(bytes(fileCache.entry(forKey: request.dataKey), in: fileCache) == stored)
        #expect(dataUser.objects == [stored], "the stored key's users hear nothing of the superseded load")
        #expect(manager.cachedObject(for: request, decoder: DataDecoder()) == stored)
    }

    @Test func aStoredObjectInTheFileCacheServesALaterManagerWithoutADownload() async throws {
        let server = try LoopbackServer()
        server.setRoute("/doc", .ok(Data("network".utf8)))
        let directory = TemporaryDirectory()
        let request = ObjectRequest(url: server.url("/doc"))
        let writer = makeNetworkManager(fileCache: try FileCache(directory: directory.url))
        try await writer.store(Data("stored".utf8), for: request, decoder: DataDecoder(), toFileCache: true)

        let reader = makeNetworkManager(fileCache: try FileCache(directory: directory.url))
        let user = RecordingUser(request, decoder: DataDecoder())
        reader.manage(user)
        #expect(await waitUntil { user.objects.count == 1 })
        #expect(user.objects == [Data("stored".utf8)])
        #expect(user.origins == [.fileCache])
        #expect(server.requestCount(for: "/doc") == 0)
    }

    @Test func jsonModelsAreEncodedAndReadBackAndOthersStayInMemory() async throws {
        let directory = TemporaryDirectory()
        let fileCache = try FileCache(directory: directory.url)
        let manager = makeNetworkManager(fileCache: fileCache)
        let note = Note(title: "offline", stars: 4)
        let request = ObjectRequest(oid: "note-1")
        try await manager.store(note, for: request, decoder: JSONObjectDecoder<Note>(), toFileCache: true, cost: 64)
        let written = try #require(bytes(fileCache.entry(forKey: request.dataKey), in: fileCache))
        #expect(try JSONDecoder().decode(Note.self, from: written) == note)
        #expect(manager.memoryCache.totalCost == 64)

        let readOnly = ReadOnlyNote(title: "cannot encode")
        let other = ObjectRequest(oid: "note-2")
        await #expect(throws: StoreError.encodingUnsupported) {
            try await manager.store(readOnly, for: other, decoder: JSONObjectDecoder<ReadOnlyNote>(), toFileCache: true)
        }
        #expect(manager.cachedObject(for: other, decoder: JSONObjectDecoder<ReadOnlyNote>()) == readOnly)
        #expect(fileCache.entry(forKey: other.dataKey) == nil)
    }

    @Test func aDecoderWithoutEncodeStoresInMemoryOnlyAndSaysSo() async throws {
        let directory = TemporaryDirectory()
        let fileCache = try FileCache(directory: directory.url)
        let manager = makeNetworkManager(fileCache: fileCache)
        let request = ObjectRequest(oid: "blob")
        let blob = Blob(Data("in memory".utf8))
        let completions = Completions()
        manager.store(blob, for: request, decoder: BlobDecoder(), toFileCache: true) { completions.record($0) }
        #expect(manager.cachedObject(for: request, decoder: BlobDecoder()) === blob, "in memory before store returns")
        #expect(await waitUntil { completions.all.count == 1 })
        #expect(completions.all.first.map { if case .failure(.encodingUnsupported) = $0 { true } else { false } } == true)
        #expect(fileCache.statistics.count == 0)

        // Memory only, when asked: the completion runs at once.
        manager.store(blob, for: ObjectRequest(oid: "memory"), decoder: BlobDecoder()) { completions.record($0) }
        #expect(completions.all.count == 2)
        #expect((try? completions.all[1].get()) != nil)
    }

    @Test func askingForAFileCacheThatIsNotThereIsReportedAndAnEmptyKeyIsRefused() async throws {
        let manager = makeNetworkManager()
        await #expect(throws: StoreError.fileCacheUnavailable) {
            try await manager.store(Data("x".utf8), for: ObjectRequest(oid: "x"), decoder: DataDecoder(), toFileCache: true)
        }
        #expect(manager.cachedObject(for: ObjectRequest(oid: "x"), decoder: DataDecoder()) == Data("x".utf8))
        await #expect(throws: StoreError.invalidRequest(reason: "empty key")) {
            try await manager.store(Data("y".utf8), for: ObjectRequest(oid: ""), decoder: DataDecoder())
        }
        #expect(manager.memoryCache.count == 1)
        #expect(manager.statistics.storedObjects == 1)
    }

    @Test func usersSharingThePreviousObjectReceiveTheStoredOne() async throws {
        let server = try LoopbackServer()
        server.setRoute("/avatar", .ok(Data("old".utf8)))
        let manager = makeNetworkManager()
        let request = ObjectRequest(url: server.url("/avatar"), oid: "avatar-7")
        let user = RecordingUser(request, decoder: BlobDecoder())
        manager.manage(user)
        #expect(await waitUntil { user.objects.count == 1 })

        let edited = Blob(Data("edited".utf8))
        manager.store(edited, for: ObjectRequest(oid: "avatar-7"), decoder: BlobDecoder(), completion: nil)
        #expect(await waitUntil { user.objects.count == 2 })
        #expect(user.objects[1] === edited)
        #expect(user.origins == [.network, .stored])
    }

    @Test func theLaterOfTwoStoresIsWhatTheCachesKeep() async throws {
        let directory = TemporaryDirectory()
        let fileCache = try FileCache(directory: directory.url)
        let manager = makeNetworkManager(fileCache: fileCache)
        let request = ObjectRequest(oid: "twice")
        let completions = Completions()
        manager.store(Data("first".utf8), for: request, decoder: DataDecoder(), toFileCache: true) { completions.record($0) }
        manager.store(Data("second".utf8), for: request, decoder: DataDecoder(), toFileCache: true) { completions.record($0) }
        #expect(await waitUntil { completions.all.count == 2 })
        for result in completions.all {
            switch result {
            case .success, .failure(.superseded): break
            case .failure(let error): Issue.record("unexpected \(error)")
            }
        }
        #expect(bytes(fileCache.entry(forKey: request.dataKey), in: fileCache) == Data("second".utf8))
        #expect(manager.cachedObject(for: request, decoder: DataDecoder()) == Data("second".utf8))
        #expect(manager.state.withLock { $0.pendingStores.isEmpty }, "finished stores leave no gate behind")
    }

    @Test func aVariantDecoderStoresUnderTheVariantKeyAndALaterLoadDecodesTheStoredVariant() async throws {
        let server = try LoopbackServer()
        server.setRoute("/v", .ok(Data("original".utf8)))
        let directory = TemporaryDirectory()
        let request = ObjectRequest(url: server.url("/v"))
        let writerCache = try FileCache(directory: directory.url)
        let writer = makeNetworkManager(fileCache: writerCache)
        try await writer.store(Blob(Data("mine".utf8)), for: request, decoder: VariantBlobDecoder(), toFileCache: true)
        let variantKey = request.objectKey(variant: "test.variant").variantFileKey
        #expect(bytes(writerCache.entry(forKey: variantKey), in: writerCache) == Data("mine".utf8))
        #expect(writerCache.entry(forKey: request.dataKey) == nil, "the original bytes are not the stored object's")

        let decoder = VariantBlobDecoder()
        let reader = makeNetworkManager(fileCache: try FileCache(directory: directory.url))
        let object = try await reader.object(for: request, decoder: decoder)
        #expect(object.text == "mine")
        #expect(decoder.storedVariantDecodes.count == 1)
        #expect(server.requestCount(for: "/v") == 0)
    }

    @Test func storingForgetsTheKeysRememberedFailure() async throws {
        let server = try LoopbackServer()
        server.setRoute("/gone", .status(404))
        let directory = TemporaryDirectory()
        let manager = makeNetworkManager(fileCache: try FileCache(directory: directory.url)) {
            $0.policy.failureMemoryInterval = 600
        }
        let request = ObjectRequest(url: server.url("/gone"))
        await #expect(throws: ManagedCacheError.httpStatus(code: 404)) {
            try await manager.object(for: request, decoder: DataDecoder())
        }
        try await manager.store(Data("replacement".utf8), for: request, decoder: DataDecoder(), toFileCache: true)
        manager.removeObject(for: request, decoder: DataDecoder())  // memory only: the file keeps it
        #expect(try await manager.object(for: request, decoder: DataDecoder()) == Data("replacement".utf8))
        #expect(server.requestCount(for: "/gone") == 1, "answered by the file cache, not the failure memory")
    }

    @Test func anObjectMadeInTheBackgroundIsWhatWaitingUsersGet() async throws {
        let server = try LoopbackServer()
        server.setRoute("/made", .ok(Data("network".utf8)))
        let manager = makeNetworkManager()
        let request = ObjectRequest(url: server.url("/made"))
        let release = Lock(false)
        let made = Blob(Data("made".utf8))
        let task = Task {
            try await manager.store(for: request, decoder: BlobDecoder()) {
                waitUntilBlocking { release.withLock { $0 } }
                return made
            }
        }
        // Until it is made, the key waits for it: no download, no hit.
        #expect(await waitUntil { manager.state.withLock { $0.handlers[request.objectKey(variant: "test.blob.blob")] != nil } })
        let user = RecordingUser(request, decoder: BlobDecoder())
        manager.manage(user)
        #expect(manager.cachedObject(for: request, decoder: BlobDecoder()) == nil)
        #expect(user.objects.isEmpty)
        release.withLock { $0 = true }
        #expect(try await task.value === made)
        #expect(await waitUntil { user.objects.count == 1 })
        #expect(user.objects.first === made)
        #expect(user.origins == [.stored])
        #expect(manager.cachedObject(for: request, decoder: BlobDecoder()) === made)
        #expect(server.requestCount(for: "/made") == 0)
    }

    @Test func whenMakingFailsTheWaitingUsersFailAndTheNextManageLoads() async throws {
        let server = try LoopbackServer()
        server.setRoute("/made", .ok(Data("network".utf8)))
        let manager = makeNetworkManager { $0.policy.failureMemoryInterval = 600 }
        let request = ObjectRequest(url: server.url("/made"))
        let release = Lock(false)
        struct Refusal: Error {}
        let task = Task {
            try await manager.store(for: request, decoder: BlobDecoder()) { () throws -> Blob in
                waitUntilBlocking { release.withLock { $0 } }
                throw Refusal()
            }
        }
        #expect(await waitUntil { manager.state.withLock { $0.handlers[request.objectKey(variant: "test.blob.blob")] != nil } })
        let user = RecordingUser(request, decoder: BlobDecoder())
        manager.manage(user)
        release.withLock { $0 = true }
        await #expect(throws: StoreError.self) { try await task.value }
        #expect(await waitUntil { user.errors.count == 1 })
        guard case .decodingFailed = user.errors.first else {
            Issue.record("expected .decodingFailed, got \(user.errors)")
            return
        }
        manager.manage(user)
        #expect(await waitUntil { user.objects.count == 1 })
        #expect(user.objects.first?.text == "network", "a failed make is not remembered as a failure")
    }

    @Test func aUserOfTheOidAloneWaitsForAnObjectBeingMadeAndFailsOnlyWhenNothingHasIt() async throws {
        let manager = makeNetworkManager()
        let request = ObjectRequest(oid: "drawing")
        let release = Lock(false)
        let made = Blob(Data("drawn".utf8))
        manager.store(
            for: request, decoder: BlobDecoder(),
            making: {
                waitUntilBlocking { release.withLock { $0 } }
                return made
            }, completion: nil)
        // No loader handles the cache-only URL, but the object is on its way: the user waits.
        let user = RecordingUser(request, decoder: BlobDecoder())
        manager.manage(user)
        #expect(user.events.isEmpty)
        release.withLock { $0 = true }
        #expect(await waitUntil { user.objects.count == 1 })
        #expect(user.objects.first === made)

        let nothing = RecordingUser(ObjectRequest(oid: "never stored"), decoder: BlobDecoder())
        manager.manage(nothing)
        #expect(nothing.errors == [.invalidRequest(reason: "unsupported URL 'managedcache:stored'")])
    }

    @Test func aMemoryOnlyStoreOfAnotherDecoderLeavesAPendingWriteOfTheSameBytesAlone() async throws {
        let directory = TemporaryDirectory()
        let fileCache = try FileCache(directory: directory.url)
        let manager = makeNetworkManager(fileCache: fileCache)
        let request = ObjectRequest(oid: "shared-bytes")
        let completions = Completions()
        manager.store(Data("bytes".utf8), for: request, decoder: DataDecoder(), toFileCache: true) { completions.record($0) }
        manager.store(Blob(Data("bytes".utf8)), for: request, decoder: BlobDecoder(), completion: nil)
        #expect(await waitUntil { completions.all.count == 1 })
        #expect((try? completions.all[0].get()) != nil, "not superseded by another object key's memory-only store")
        #expect(bytes(fileCache.entry(forKey: request.dataKey), in: fileCache) == Data("bytes".utf8))
    }

    @Test func aClosedGateSkipsTheVariantOfASupersededDecode() throws {
        let directory = TemporaryDirectory()
        let fileCache = try FileCache(directory: directory.url)
        let manager = makeNetworkManager(fileCache: fileCache)
        let key = ObjectKey(dataKey: "k", variant: "test.variant")
        func job(gate: WriteGate) -> DecodeJob {
            DecodeJob(
                key: key, generation: 1, decoder: AnyObjectDecoder(VariantBlobDecoder()),
                data: LoadedData(data: Data("original".utf8), origin: .network), origin: .network, freshness: nil,
                writeGate: gate)
        }
        let closed = WriteGate()
        closed.close()
        manager.fileCacheReader.storeVariantIfNeeded(job(gate: closed), object: Blob(Data("superseded".utf8)))
        #expect(fileCache.entry(forKey: key.variantFileKey) == nil)
        manager.fileCacheReader.storeVariantIfNeeded(job(gate: WriteGate()), object: Blob(Data("current".utf8)))
        #expect(bytes(fileCache.entry(forKey: key.variantFileKey), in: fileCache) == Data("current".utf8))
    }
}

/// The gate that orders a load's writes against a store.
@Suite struct WriteGateTests {
    @Test func aClosedGateRefusesNewWritesAndReportsAWriteInProgressUntilItEnds() async {
        let gate = WriteGate()
        #expect(gate.begin())
        gate.close()
        #expect(!gate.isIdle, "the write that began before the close is still running")
        #expect(!gate.begin())
        #expect(!gate.write { Issue.record("a closed gate ran a write") })
        gate.end()
        #expect(gate.isIdle)
        await gate.waitUntilIdle()
        #expect(WriteGate.write(through: nil) {}, "no gate: nothing can supersede the write")
    }

    /// Preloading looks variants up under the key they are stored with: a decoder that stores
    /// variants gets its variant, and a decoder of originals is never given a variant's bytes.
    @Test func preloadFindsStoredVariantsAndNeverTakesThemForOriginals() async throws {
        let directory = TemporaryDirectory()
        let fileCache = try FileCache(directory: directory.url)
        let key = ObjectKey(dataKey: "k", variant: "test.variant")
        try fileCache.store(Data("original".utf8), forKey: "k", metadata: FileCacheMetadata())
        try fileCache.store(Data("the variant".utf8), forKey: key.variantFileKey, metadata: FileCacheMetadata())

        let decoder = VariantBlobDecoder()
        let manager = makeNetworkManager(fileCache: fileCache)
        #expect(await manager.preloadFromFileCache(.all, decoder: decoder).value == 1)
        #expect((manager.memoryCache.value(forKey: key)?.object as? Blob)?.bytes == Data("the variant".utf8))
        #expect(decoder.storedVariantDecodes.count == 1)

        let plain = makeNetworkManager(fileCache: fileCache)
        #expect(await plain.preloadFromFileCache(.all, decoder: BlobDecoder()).value == 1)
        #expect(plain.memoryCache.count == 1)
        let original = ObjectKey(dataKey: "k", variant: BlobDecoder().identifier)
        #expect((plain.memoryCache.value(forKey: original)?.object as? Blob)?.bytes == Data("original".utf8))
    }
}

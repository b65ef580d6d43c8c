import Foundation
import LoopbackServer
import ManagedCache
import TestSupport
import Testing

/// What changes between a user's first request and the one it is managed with again: all three
/// keep the key (the oid), so the user stays on the same handler.
enum RequestChange: String, CaseIterable, Sendable {
    /// A new signed URL for the same oid.
    case newURLSameOID
    /// The same URL with another `Authorization` header (not a key header).
    case changedHeader
    /// The same URL with another per-request policy override.
    case changedPolicy

    /// The request the user starts with.
    static func first(_ server: LoopbackServer) -> ObjectRequest {
        ObjectRequest(url: server.url("/photo?sig=1"), oid: "photo-7", headers: ["Authorization": "token-1"])
    }

    /// The request it is managed with again.
    func second(_ server: LoopbackServer) -> ObjectRequest {
        var request = Self.first(server)
        switch self {
        case .newURLSameOID: request.url = server.url("/photo?sig=2")
        case .changedHeader: request.headers["Authorization"] = "token-2"
        case .changedPolicy: request.policy.timeout = 25
        }
        return request
    }
}

/// One case of the re-manage matrix: what changes, and whether the first load has finished.
struct RemanageCase: Sendable, CustomTestStringConvertible {
    let change: RequestChange
    let firstLoadFinished: Bool
    var delivery: CallbackDelivery = .immediate

    var testDescription: String {
        "\(change.rawValue), first load \(firstLoadFinished ? "finished" : "running")\(delivery == .mainQueue ? ", main queue" : "")"
    }

    static let all: [RemanageCase] = RequestChange.allCases.flatMap { change in
        [false, true].map { RemanageCase(change: change, firstLoadFinished: $0) }
    }
    static let allWithMainQueue: [RemanageCase] =
        all
        + all.map {
            RemanageCase(change: $0.change, firstLoadFinished: $0.firstLoadFinished, delivery: .mainQueue)
        }
}

/// A user managed again with a new request of the same key, while the first load runs
/// or after it finished, is answered exactly once, for its current request, with the object.
/// The running load is joined (one request on the wire), whatever changed.
@Suite struct RemanageTests {
    let body = fixtureBody("photo-7", count: 20_000)

    @Test(arguments: RemanageCase.allWithMainQueue)
    func rawUserIsAnsweredOnceForItsCurrentRequest(_ testCase: RemanageCase) async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/photo", response: .ok(body))
        defer { gate.open() }
        let manager = makeNetworkManager()
        let first = RequestChange.first(server)
        let second = testCase.change.second(server)
        let user = RecordingUser(first, decoder: DataDecoder(), delivery: testCase.delivery)

        manager.manage(user)
        #expect(await waitUntil { gate.arrivals == 1 })
        if testCase.firstLoadFinished {
            gate.open()
            #expect(await waitUntil { user.objects.count == 1 })
        }
        user.setRequest(second)
        manager.manage(user)
        gate.open()

        #expect(await waitUntil { user.readyRequests.last == second })
        await settle(manager)
        let expected = testCase.firstLoadFinished ? [first, second] : [second]
        #expect(user.readyRequests == expected)
        #expect(user.objects.allSatisfy { $0 == body })
        #expect(user.errors.isEmpty)
        #expect(server.requestCount(for: "/photo") == 1)
        if testCase.delivery == .mainQueue, !testCase.firstLoadFinished {
            #expect(user.callbacksOnMainQueue.allSatisfy { $0 })
        }
    }

    @Test(arguments: RemanageCase.all)
    func objectUserBecomesReadyForItsCurrentRequest(_ testCase: RemanageCase) async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/photo", response: .ok(body))
        defer { gate.open() }
        let manager = makeNetworkManager()
        let readyCount = Counter()
        let user = ObjectUser(request: RequestChange.first(server), decoder: DataDecoder()) { _, _ in
            readyCount.increment()
        }

        manager.manage(user)
        #expect(await waitUntil { gate.arrivals == 1 })
        if testCase.firstLoadFinished {
            gate.open()
            #expect(await waitUntil { readyCount.count == 1 })
        }
        user.request = testCase.change.second(server)
        manager.manage(user)
        gate.open()

        #expect(await waitUntil { user.object == body })
        await settle(manager)
        #expect(readyCount.count == (testCase.firstLoadFinished ? 2 : 1))
        #expect(server.requestCount(for: "/photo") == 1)
    }

    @MainActor @Test(arguments: RemanageCase.all)
    func mainActorUserIsAnsweredOnceForItsCurrentRequest(_ testCase: RemanageCase) async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/photo", response: .ok(body))
        defer { gate.open() }
        let manager = makeNetworkManager()
        let first = RequestChange.first(server)
        let second = testCase.change.second(server)
        let controller = ArticleViewController(first)

        manager.manage(controller)
        #expect(await waitOnMainActor { gate.arrivals == 1 })
        if testCase.firstLoadFinished {
            gate.open()
            #expect(await waitOnMainActor { controller.shown.count == 1 })
        }
        controller.objectRequest = second
        manager.manage(controller)
        gate.open()

        #expect(await waitOnMainActor { controller.requests.last == second })
        await settle(manager)
        #expect(controller.requests == (testCase.firstLoadFinished ? [first, second] : [second]))
        #expect(controller.shown.allSatisfy { $0.bytes == body })
        #expect(controller.errors.isEmpty && controller.offMainCallbacks == 0)
        #expect(server.requestCount(for: "/photo") == 1)
    }

    @Test(arguments: RemanageCase.all)
    func asyncCallersOfBothRequestsGetTheObject(_ testCase: RemanageCase) async throws {
        let server = try LoopbackServer()
        let gate = GatedRoute(server, path: "/photo", response: .ok(body))
        defer { gate.open() }
        let manager = makeNetworkManager()
        let first = Task { try await manager.object(for: RequestChange.first(server), decoder: DataDecoder()) }
        #expect(await waitUntil { gate.arrivals == 1 })
        if testCase.firstLoadFinished {
            gate.open()
            #expect(try await first.value == body)
        }
        let second = Task { try await manager.object(for: testCase.change.second(server), decoder: DataDecoder()) }
        gate.open()

        #expect(try await second.value == body)
        #expect(try await first.value == body)
        #expect(server.requestCount(for: "/photo") == 1)
    }

    /// The issue's concurrent case: users re-managed from many tasks with a new signed URL of the
    /// same oid while loads run (a route answering after a short, varying delay). Every user ends
    /// ready with its oid's bytes; none is left loading.
    /// On two threads of its own: its thousand tasks would fill the cooperative pool, and the
    /// tasks of the tests beside it wait.
    @Test(.ownThreads) func usersReManagedConcurrentlyAreAllAnswered() async throws {
        let server = try LoopbackServer()
        server.setFallback { request in
            guard request.path.hasPrefix("/obj/") else { return nil }
            usleep(UInt32.random(in: 0...20_000))
            return .ok(fixtureBody(request.path, count: 2_000))
        }
        let manager = makeNetworkManager { $0.loadingBufferSize = 2_000 }
        let oids = 50
        let userCount = 1_000
        let users = (0..<userCount).map { _ in ObjectUser(decoder: DataDecoder()) }
        func signed(_ index: Int, _ signature: Int) -> ObjectRequest {
            ObjectRequest(url: server.url("/obj/\(index % oids)?sig=\(signature)"), oid: "obj-\(index % oids)")
        }
        await withTaskGroup(of: Void.self) { group in
            for (index, user) in users.enumerated() {
                group.addTask {
                    user.request = signed(index, 1)
                    manager.manage(user)
                    await Task.yield()
                    user.request = signed(index, 2)
                    manager.manage(user)
                }
            }
        }
        let settled = await waitUntil {
            users.allSatisfy { if case .loading = $0.phase { false } else { true } }
        }
        let stuck = users.filter { if case .loading = $0.phase { true } else { false } }.count
        #expect(settled, "\(stuck) of \(userCount) users still loading")
        for (index, user) in users.enumerated() {
            #expect(user.object == fixtureBody("/obj/\(index % oids)", count: 2_000), "user \(index): \(user.phase)")
        }
    }

    /// Waits until the manager has no load running and the main queue has run what was queued
    /// before now, so a duplicate callback would have arrived.
    private func settle(_ manager: ObjectManager) async {
        #expect(await waitUntil { manager.activeLoadCount == 0 })
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.main.async { continuation.resume() }
        }
    }
}

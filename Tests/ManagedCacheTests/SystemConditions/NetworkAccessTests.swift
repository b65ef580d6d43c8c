import Foundation
import LoopbackServer
import ManagedCache
import ManagedCacheLocking
import TestSupport
import Testing

/// Low Data Mode and expensive networks as a loader's policy.
@Suite struct NetworkAccessTests {
    @Test func presetsSayWhichNetworksLoadsMayUse() {
        #expect(NetworkAccess.unrestricted == NetworkAccess(allowsConstrainedNetwork: true, allowsExpensiveNetwork: true))
        #expect(NetworkAccess.respectsLowDataMode == NetworkAccess(allowsConstrainedNetwork: false, allowsExpensiveNetwork: true))
        #expect(NetworkAccess.inexpensiveOnly == NetworkAccess(allowsConstrainedNetwork: false, allowsExpensiveNetwork: false))
        #expect(URLSessionDataLoader().networkAccess == .unrestricted)
        #expect(URLSessionDataLoader(networkAccess: .inexpensiveOnly).networkAccess == .inexpensiveOnly)
    }

    /// Records what the loader tells a receiver.
    private final class Receiver: DataLoadReceiver {
        private let body = Lock(Data())
        var received: Data { body.withLock { $0 } }
        func didReceive(response: DataLoadResponse) throws {}
        func didReceive(_ chunk: Data) throws { body.withLock { $0.append(chunk) } }
    }

    @Test func theStrictestPolicyLoadsWhereNoNetworkIsConstrainedOrExpensive() async throws {
        // Linux has no Low Data Mode and no expensive networks, and loopback is neither anywhere.
        let server = try LoopbackServer()
        server.setRoute("/a", .ok(Data("payload".utf8)))
        let loader = URLSessionDataLoader(networkAccess: .inexpensiveOnly)
        let receiver = Receiver()
        let response = try await loader.load(DataLoadRequest(url: server.url("/a")), receiver: receiver)
        #expect(response.statusCode == 200)
        #expect(receiver.received == Data("payload".utf8))
    }
}

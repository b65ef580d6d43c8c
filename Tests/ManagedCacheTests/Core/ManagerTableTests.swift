import Foundation
import TestSupport
import Testing

@testable import ManagedCache

/// The manager's own tables stay bounded by what is alive, however users come and go.
@Suite struct ManagerTableTests {
    @Test func usersDeallocatedWithoutUnmanagingDoNotAccumulateInTheManager() async {
        let loader = ScriptedDataLoader()
        loader.script("shared", .body(Data("S".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let first = RecordingUser(request("shared"), decoder: BlobDecoder())
        manager.manage(first)
        #expect(await waitUntil { first.objects.count == 1 })

        // Rounds of 5,000 views of one key, alive together, then all released without
        // `unmanage`, as views are. One key means one handler: only the users' records could pile
        // up. The tables are swept in amortized time, so they may hold up to about twice the most
        // users alive at once, but no more however many rounds go by.
        let perRound = 5_000
        let rounds = 10
        var largest = (attachments: 0, listed: 0)
        for _ in 0..<rounds {
            var users = (0..<perRound).map { _ in RecordingUser(request("shared"), decoder: BlobDecoder()) }
            for user in users { manager.manage(user) }
            #expect(users.allSatisfy { $0.origins == [.memory] })
            users.removeAll()
            let sizes = manager.state.withLock { state in
                (state.attachments.count, state.handlers.values.reduce(0) { $0 + Array($1.users).count })
            }
            largest = (max(largest.attachments, sizes.0), max(largest.listed, sizes.1))
        }
        #expect(largest.attachments <= 2 * perRound + 64)
        #expect(largest.listed <= 2 * perRound + 64)
        #expect(loader.requestCount("shared") == 1)
    }
}

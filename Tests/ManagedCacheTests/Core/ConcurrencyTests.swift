import Foundation
import ManagedCache
import TestSupport
import Testing

@Suite struct ConcurrencyTests {
    @Test func concurrentManageFromTasksAndThreadsLosesNoCallback() async {
        let loader = ScriptedDataLoader()
        for index in 0..<40 { loader.script("k\(index)", .body(Data("v\(index)".utf8))) }
        let manager = makeScriptedManager(loader: loader, bufferSize: 64, memoryCount: 10)
        let users = (0..<400).map { RecordingUser(request("k\($0 % 40)"), decoder: BlobDecoder()) }
        let threads = 4
        let perThread = users.count / (2 * threads)
        // Half the users are managed from plain threads, half from tasks.
        let done = Counter()
        for thread in 0..<threads {
            let slice = Array(users[(thread * perThread)..<((thread + 1) * perThread)])
            Thread.detachNewThread {
                for user in slice { manager.manage(user) }
                done.increment()
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<threads {
                let start = users.count / 2 + worker * perThread
                let slice = Array(users[start..<(start + perThread)])
                group.addTask { for user in slice { manager.manage(user) } }
            }
        }
        #expect(await waitUntil { done.count == threads })
        #expect(await waitUntil { users.allSatisfy { $0.finalCallbackCount == 1 } })
        #expect(users.allSatisfy { $0.errors.isEmpty })
        for (index, user) in users.enumerated() {
            #expect(user.objects.first?.text == "v\(index % 40)")
        }
        #expect(loader.totalRequests <= 40 + 40)  // evictions from the memory cache may reload a key once
    }
}

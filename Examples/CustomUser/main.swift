// The smallest `ManagedObjectUser` that is not an image: a label that shows how many words a
// text file has. The manager downloads the text once and shares the decoded count.
//
//     swift run CustomUser
import Foundation
import LoopbackServer
import ManagedCache
import Synchronization

/// Decodes text into its word count.
struct WordCounter: ObjectDecoding {
    func decode(_ data: LoadedData) throws -> Int {
        String(decoding: try data.bytes(), as: UTF8.self).split(whereSeparator: \.isWhitespace).count
    }
}

/// The user: any class will do. It must be `Sendable`: its one mutable field sits in a `Mutex`.
final class WordCountLabel: ManagedObjectUser {
    let objectRequest: ObjectRequest?
    let objectDecoder = WordCounter()
    let text = Mutex("…")

    init(url: URL) { objectRequest = ObjectRequest(url: url) }

    func managedObjectReady(_ count: Int, origin: DataOrigin, request: ObjectRequest) {
        text.withLock { $0 = "\(count) words (\(origin))" }
    }

    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        text.withLock { $0 = "unavailable: \(error)" }
    }
}

let server = try LoopbackServer()
server.setRoute("/poem.txt", .ok(Data("the quick brown fox jumps over the lazy dog".utf8)))
server.setRoute("/missing.txt", .status(404))

let manager = ObjectManager()
let labels = [WordCountLabel(url: server.url("/poem.txt")), WordCountLabel(url: server.url("/poem.txt")),
              WordCountLabel(url: server.url("/missing.txt"))]
for label in labels { manager.manage(label) }

// Wait (bounded) until every label has its text.
let deadline = Date().addingTimeInterval(10)
while labels.contains(where: { $0.text.withLock { $0 } == "…" }), Date() < deadline { usleep(10_000) }
for label in labels { print(label.text.withLock { $0 }) }
print("HTTP requests for the poem: \(server.requestCount(for: "/poem.txt"))")

import Foundation
import ManagedCache
import ManagedCacheLocking
import TestSupport

/// A loader for `test://` URLs that sends a body in the chunks the test gives, one chunk each
/// time the test releases one, and fails instead of sending a chunk marked as a failure.
final class ChunkedLoader: DataLoading {
    private struct State {
        var chunks: [String: [Data?]] = [:]
        var released: [String: Int] = [:]
        var sent: [String: Int] = [:]
    }

    private let state = Lock(State())

    /// `path` answers with `chunks` (a `nil` chunk fails the load with a 503-like transport error).
    func script(_ path: String, chunks: [Data?]) { state.withLock { $0.chunks[path] = chunks } }
    /// Lets the next `count` chunks of `path` go.
    func release(_ path: String, count: Int = 1) { state.withLock { $0.released[path, default: 0] += count } }
    /// How many chunks of `path` have been handed to the receiver.
    func sent(_ path: String) -> Int { state.withLock { $0.sent[path] ?? 0 } }

    static func url(_ path: String) -> URL { URL(string: "test://host/\(path)")! }

    func canLoad(_ url: URL) -> Bool { url.scheme == "test" }

    func load(_ request: DataLoadRequest, receiver: any DataLoadReceiver) async throws -> DataLoadResponse {
        let path = String(request.url.path.dropFirst())
        let chunks = state.withLock { $0.chunks[path] } ?? []
        let length = chunks.reduce(0) { $0 + ($1?.count ?? 0) }
        let response = DataLoadResponse(statusCode: 200, expectedContentLength: length, url: request.url)
        try receiver.didReceive(response: response)
        for (index, chunk) in chunks.enumerated() {
            while state.withLock({ ($0.released[path] ?? 0) <= index }) {
                try await Task.sleep(nanoseconds: 2_000_000)
            }
            guard let chunk else { throw ManagedCacheError.transport(code: -1005, description: "the connection was lost") }
            try receiver.didReceive(chunk)
            state.withLock { $0.sent[path, default: 0] += 1 }
        }
        return response
    }
}

/// Decodes text; its previews are the complete lines so far ("a\nb\n" → "preview: a b"), a new
/// stage at each newline, and no more previews once "END" arrives. Counts the sessions it makes.
struct LinePreviewDecoder: PreviewDecoding {
    let sessions = Counter()

    var identifier: String { "test.lines" }

    func decode(_ data: LoadedData) throws -> String { String(decoding: try data.bytes(), as: UTF8.self) }

    func makePreviewSession() -> LinePreviewSession? {
        sessions.increment()
        return LinePreviewSession()
    }
}

final class LinePreviewSession: PreviewSession {
    private let text = Lock("")

    func append(_ chunk: Data) -> PreviewStep {
        let (before, after) = text.withLock { text -> (Int, Int) in
            let before = text.filter { $0 == "\n" }.count
            text += String(decoding: chunk, as: UTF8.self)
            return (before, text.filter { $0 == "\n" }.count)
        }
        if text.withLock({ $0.contains("END") }) { return .finished }
        return after > before ? .ready : .waiting
    }

    func makePreview() -> String? {
        let lines = text.withLock { $0.split(separator: "\n", omittingEmptySubsequences: false).dropLast() }
        return "preview: " + lines.joined(separator: " ")
    }
}

/// A user recording previews and final callbacks in order; `wantsPreviews` as created.
final class PreviewRecordingUser: ManagedObjectUser {
    enum Event: Sendable, Equatable {
        case preview(String)
        case ready(String)
        case failed
    }

    let objectRequest: ObjectRequest?
    let objectDecoder: LinePreviewDecoder
    let wantsPreviews: Bool
    private let recorded = Lock<[Event]>([])

    init(_ url: URL, decoder: LinePreviewDecoder, wantsPreviews: Bool) {
        objectRequest = ObjectRequest(url: url)
        objectDecoder = decoder
        self.wantsPreviews = wantsPreviews
    }

    var events: [Event] { recorded.withLock { $0 } }
    var previews: [String] { events.compactMap { if case .preview(let text) = $0 { text } else { nil } } }

    func managedObjectPreview(_ preview: String, request: ObjectRequest) { recorded.withLock { $0.append(.preview(preview)) } }
    func managedObjectReady(_ object: String, origin: DataOrigin, request: ObjectRequest) {
        recorded.withLock { $0.append(.ready(object)) }
    }
    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) { recorded.withLock { $0.append(.failed) } }
}

/// A manager over `loader` with no retries and no failure memory, previews at most every `interval`.
func makePreviewManager(_ loader: ChunkedLoader, interval: Double = 0) -> ObjectManager {
    var configuration = ObjectManager.Configuration()
    configuration.dataLoader = loader
    configuration.policy.retry = .none
    configuration.policy.failureMemoryInterval = 0
    configuration.previewInterval = interval
    // The loader holds each chunk until the test releases it: no idle timer may end the load
    // first on a starved machine (see makeNetworkManager).
    configuration.policy.timeout = 300
    return ObjectManager(configuration: configuration)
}

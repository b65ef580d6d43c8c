import Foundation
import ManagedCache
import ManagedCacheLocking

/// A `DataLoading` for the `test://` scheme whose answers a test scripts: fixed bodies, failures,
/// and loads held open until the test releases them (to make "still loading" deterministic).
public final class ScriptedDataLoader: DataLoading {
    /// How one path answers.
    public enum Script: Sendable {
        case body(Data)
        case failure(ManagedCacheError)
        /// Sends `firstChunk`, then waits for `release(path:)` before sending the rest.
        case held(firstChunk: Data, rest: Data)
    }

    private struct State {
        var scripts: [String: Script] = [:]
        var requests: [String: Int] = [:]
        var cancellations: [String: Int] = [:]
        var released: Set<String> = []
        var active: [String: Int] = [:]
    }

    private let state = Lock(State())

    public init() {}

    /// A `test://` URL for `path`.
    public static func url(_ path: String) -> URL { URL(string: "test://host/\(path)")! }

    public func script(_ path: String, _ script: Script) { state.withLock { $0.scripts[path] = script } }
    public func release(_ path: String) { state.withLock { _ = $0.released.insert(path) } }
    public func requestCount(_ path: String) -> Int { state.withLock { $0.requests[path] ?? 0 } }
    public func cancellationCount(_ path: String) -> Int { state.withLock { $0.cancellations[path] ?? 0 } }
    public func activeCount(_ path: String) -> Int { state.withLock { $0.active[path] ?? 0 } }
    public var totalRequests: Int { state.withLock { $0.requests.values.reduce(0, +) } }

    public func canLoad(_ url: URL) -> Bool { url.scheme == "test" }

    public func load(_ request: DataLoadRequest, receiver: any DataLoadReceiver) async throws -> DataLoadResponse {
        let path = String(request.url.path.dropFirst())
        let script = state.withLock { state -> Script? in
            state.requests[path, default: 0] += 1
            state.active[path, default: 0] += 1
            return state.scripts[path]
        }
        defer { state.withLock { $0.active[path, default: 1] -= 1 } }
        guard let script else { throw ManagedCacheError.httpStatus(code: 404) }
        func respond(length: Int) throws -> DataLoadResponse {
            let response = DataLoadResponse(statusCode: 200, expectedContentLength: length, url: request.url)
            try receiver.didReceive(response: response)
            return response
        }
        switch script {
        case .failure(let error):
            throw error
        case .body(let data):
            let response = try respond(length: data.count)
            if !data.isEmpty { try receiver.didReceive(data) }
            return response
        case .held(let first, let rest):
            let response = try respond(length: first.count + rest.count)
            try receiver.didReceive(first)
            while !state.withLock({ $0.released.contains(path) }) {
                do {
                    try await Task.sleep(nanoseconds: 2_000_000)
                } catch {
                    state.withLock { $0.cancellations[path, default: 0] += 1 }
                    throw ManagedCacheError.cancelled(.caller)
                }
            }
            try receiver.didReceive(rest)
            return response
        }
    }
}

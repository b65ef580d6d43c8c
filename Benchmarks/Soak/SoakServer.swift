import Foundation
import LoopbackServer
import ManagedCacheLocking

/// The soak's loopback server: a few hundred keys, most served well, some slowly, some answering
/// `404` or `503`, some resetting the connection mid-body on their first request (then served,
/// ranges honoured, so the next load resumes).
///
/// A key's route is its path: `/k/<index>`. What the key does depends on its index, so the
/// workload knows which outcome is right for each key.
enum SoakRoutes {
    enum Kind: Sendable {
        case ok, slow, notFound, unavailable, resetOnce
    }

    static func kind(ofKey index: Int) -> Kind {
        switch index % 20 {
        case 0: .notFound
        case 1: .unavailable
        case 2, 3: .resetOnce
        case 4, 5, 6, 7, 8, 9: .slow
        default: .ok
        }
    }

    /// The body of key `index`: `size(index)` deterministic bytes and a checksum the decoder checks.
    static func payload(ofKey index: Int) -> Data {
        let count = 8_000 + (index * 7_919) % 56_000
        var state = UInt64(index) &* 0x9E37_79B9_7F4A_7C15 | 1
        var bytes = [UInt8](repeating: 0, count: count)
        for position in bytes.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes[position] = UInt8(truncatingIfNeeded: state >> 33)
        }
        return Data(bytes)
    }

    static func start() throws -> LoopbackServer {
        // Keeps no request log: the soak measures the engine's memory, not the server's.
        let server = try LoopbackServer(configuration: .init(recordedRequestsPerPath: 0))
        let resetDone = Lock<Set<Int>>([])
        server.setFallback { request in
            let parts = request.path.split(separator: "/")
            guard parts.count == 2, parts[0] == "k", let index = Int(parts[1]) else { return nil }
            let ok = LoopbackResponse.ok(payload(ofKey: index)).caching(etag: "\"k\(index)\"")
            switch kind(ofKey: index) {
            case .ok: return ok
            case .slow: return ok.behaving(.drip(chunkSize: 4_000, interval: 0.02))
            case .notFound: return .status(404)
            case .unavailable: return .status(503)
            case .resetOnce:
                let first = resetDone.withLock { $0.insert(index).inserted }
                return first ? ok.behaving(.reset(afterBodyBytes: 4_000)) : ok.behaving(.drip(chunkSize: 8_000, interval: 0.01))
            }
        }
        return server
    }
}

import Foundation
import HeapProbe
import LoopbackServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `URLSession` itself leaves on the C heap per request, measured in the same process over
/// the same server: the soak's baseline for its memory check.
///
/// Why: FoundationNetworking as shipped with Swift 6.3.1 on Linux loses a few allocations on every
/// request (`CFURLSessionCurlHostIsEqual`, called by `_EasyHandle.set(url:)`, frees libcurl's
/// parsed URL with `curl_free` instead of `curl_url_cleanup`, so the URL's parts stay allocated;
/// fixed upstream in swift-corelibs-foundation by PR #5498). No client of `URLSession` can avoid
/// it, and Apple's `URLSession` does not have it. The soak measures it here rather than assuming
/// a figure, and reports the engine's growth beside it.
enum URLSessionLeakProbe {
    /// C-heap bytes per request kept by plain `URLSession` requests for `paths` (round robin),
    /// or `nil` where the C library cannot tell (not glibc).
    static func bytesPerRequest(server: LoopbackServer, paths: [String], requests: Int) -> Double? {
        guard heap_probe_bytes_in_use() >= 0, !paths.isEmpty else { return nil }
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        func run(_ count: Int, from offset: Int) {
            for index in 0..<count {
                let done = DispatchSemaphore(value: 0)
                let url = server.url(paths[(offset + index) % paths.count])
                session.dataTask(with: url) { _, _, _ in done.signal() }.resume()
                done.wait()
            }
        }
        run(200, from: 0)  // connections, buffers and caches set up once
        let before = heap_probe_bytes_in_use()
        run(requests, from: 200)
        let after = heap_probe_bytes_in_use()
        return Double(after - before) / Double(requests)
    }
}

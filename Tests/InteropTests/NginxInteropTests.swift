import Foundation
import ManagedCache
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The client against a real nginx: HTTP as an independent server speaks it,
/// through the real `ObjectManager`, `URLSessionDataLoader` and a `FileCache`. Each test starts
/// its own nginx (see `NginxServer`) and checks what nginx logged beside what the manager did.
/// Without nginx every test is skipped with the reason (`.ci/run` installs the Debian package).
/// Starting and stopping nginx blocks, hence `.offCooperativePool`; one test at a time
/// (`.serialized`), so that ten nginx start-ups and downloads do not land on a loaded machine at
/// once beside the rest of the suite. nginx is a child process: `.spawnsChildProcesses` keeps its
/// launches away from the file-cache tests that must be their directory's only user (see
/// `ChildProcessGate`; once nginx stopped in 5 ms instead of 5 s, a burst of launches made a
/// reopen test miss its clean-up).
@Suite(.offCooperativePool, .serialized, .spawnsChildProcesses) struct NginxInteropTests {
    /// `http` directives: `/resumable/` is slow (100 KB/s) for a first request and unthrottled
    /// for a `Range` request, so a test can interrupt the first at leisure and resume quickly.
    static let http = """
            map $http_range $resumable_rate { "" 100k; default 0; }
        """

    /// The `server` block's locations, shared by every test.
    static let locations = """
                location /resumable/ { limit_rate $resumable_rate; }
                # Stale at once: every load after the first revalidates (ETag and Last-Modified).
                location /stale/ { add_header Cache-Control "max-age=0"; }
                # The same without ETag: revalidation by Last-Modified alone.
                location /lastmodified/ { etag off; add_header Cache-Control "max-age=0"; }
                # Fresh for an hour (Cache-Control: max-age=3600 and Expires).
                location /fresh/ { expires 1h; }
                location /nostore/ { add_header Cache-Control "no-store"; }
                location /gzip/ { gzip on; gzip_min_length 1; gzip_types application/octet-stream text/plain; expires 1h; }
                location = /redirect/found { return 302 /redirect/moved; }
                location = /redirect/moved { return 301 /fresh/target.txt; }
                # 1 MB/s per connection (nginx sends the first second's worth at once).
                location /throttled/ { limit_rate 1m; }
        """

    static let skipReason: Comment = "nginx is not installed (Debian: apt-get install nginx; .ci/run installs it)"

    /// A text body of `count` bytes.
    static func text(_ seed: String, count: Int) -> Data {
        var text = ""
        var line = 0
        while text.utf8.count < count {
            text += "\(seed) line \(line): the quick brown fox jumps over the lazy dog\n"
            line += 1
        }
        return Data(text.utf8.prefix(count))
    }

    @Test(.enabled(if: NginxServer.isAvailable, skipReason))
    func etagRevalidationGets304WithNoBody() async throws {
        let nginx = try NginxServer(http: Self.http, locations: Self.locations)
        let body = Self.text("etag", count: 20_000)
        try nginx.publish(body, at: "/stale/doc.txt")
        let cacheDirectory = TemporaryDirectory()
        let fileCache = try FileCache(directory: cacheDirectory.url)
        let request = ObjectRequest(url: nginx.url("/stale/doc.txt"))

        let first = makeNetworkManager(fileCache: fileCache)
        #expect(try await first.object(for: request, decoder: DataDecoder()) == body)
        // A second manager (an app launched again): the file-cache entry is stale, so it asks.
        let second = makeNetworkManager(fileCache: fileCache)
        #expect(try await second.object(for: request, decoder: DataDecoder()) == body)
        #expect(second.statistics.notModified == 1)
        #expect(second.statistics.bytesDownloaded == 0)

        #expect(await waitUntil { nginx.requests(for: "/stale/doc.txt").count == 2 })
        let log = nginx.requests(for: "/stale/doc.txt")
        try #require(log.count == 2)
        #expect(log[0].status == 200 && log[0].bodyBytesSent == body.count)
        #expect(!log[0].etag.isEmpty)
        #expect(log[1].ifNoneMatch == log[0].etag, "the stored ETag is sent back")
        #expect(log[1].status == 304)
        #expect(log[1].bodyBytesSent == 0)
    }

    @Test(.enabled(if: NginxServer.isAvailable, skipReason))
    func lastModifiedRevalidationGets304WithNoBody() async throws {
        let nginx = try NginxServer(http: Self.http, locations: Self.locations)
        let body = Self.text("date", count: 20_000)
        try nginx.publish(body, at: "/lastmodified/doc.txt")
        try nginx.setModificationDate(Date(timeIntervalSince1970: 1_700_000_000), at: "/lastmodified/doc.txt")
        let cacheDirectory = TemporaryDirectory()
        let fileCache = try FileCache(directory: cacheDirectory.url)
        let request = ObjectRequest(url: nginx.url("/lastmodified/doc.txt"))

        #expect(try await makeNetworkManager(fileCache: fileCache).object(for: request, decoder: DataDecoder()) == body)
        let second = makeNetworkManager(fileCache: fileCache)
        #expect(try await second.object(for: request, decoder: DataDecoder()) == body)
        #expect(second.statistics.notModified == 1)

        #expect(await waitUntil { nginx.requests(for: "/lastmodified/doc.txt").count == 2 })
        let log = nginx.requests(for: "/lastmodified/doc.txt")
        try #require(log.count == 2)
        #expect(log[0].etag.isEmpty, "no ETag: only the date can revalidate")
        #expect(log[1].ifModifiedSince == "Tue, 14 Nov 2023 22:13:20 GMT")
        #expect(log[1].ifNoneMatch.isEmpty)
        #expect(log[1].status == 304)
        #expect(log[1].bodyBytesSent == 0)
    }

    @Test(.enabled(if: NginxServer.isAvailable, skipReason))
    func maxAgeServesFromTheFileCacheWithoutARequest() async throws {
        let nginx = try NginxServer(http: Self.http, locations: Self.locations)
        let body = Self.text("fresh", count: 10_000)
        try nginx.publish(body, at: "/fresh/doc.txt")
        let cacheDirectory = TemporaryDirectory()
        let fileCache = try FileCache(directory: cacheDirectory.url)
        let request = ObjectRequest(url: nginx.url("/fresh/doc.txt"))

        #expect(try await makeNetworkManager(fileCache: fileCache).object(for: request, decoder: DataDecoder()) == body)
        #expect(await waitUntil { nginx.requests(for: "/fresh/doc.txt").count == 1 })
        let second = makeNetworkManager(fileCache: fileCache)
        #expect(try await second.object(for: request, decoder: DataDecoder()) == body)
        #expect(second.statistics.networkRequests == 0, "fresh for an hour: no request")
        #expect(second.statistics.fileCacheHits == 1)
        #expect(nginx.requests(for: "/fresh/doc.txt").count == 1)
    }

    @Test(.enabled(if: NginxServer.isAvailable, skipReason))
    func noStoreIsNeverWrittenToDisk() async throws {
        let nginx = try NginxServer(http: Self.http, locations: Self.locations)
        let body = Self.text("secret", count: 10_000)
        try nginx.publish(body, at: "/nostore/doc.txt")
        let cacheDirectory = TemporaryDirectory()
        let fileCache = try FileCache(directory: cacheDirectory.url)
        let request = ObjectRequest(url: nginx.url("/nostore/doc.txt"))

        #expect(try await makeNetworkManager(fileCache: fileCache).object(for: request, decoder: DataDecoder()) == body)
        #expect(fileCache.entry(forKey: request.url.absoluteString) == nil)
        let second = makeNetworkManager(fileCache: fileCache)
        #expect(try await second.object(for: request, decoder: DataDecoder()) == body)
        #expect(second.statistics.networkRequests == 1, "nothing stored: asked again")
        #expect(await waitUntil { nginx.requests(for: "/nostore/doc.txt").count == 2 })
        #expect(nginx.requests(for: "/nostore/doc.txt").map(\.status) == [200, 200])
    }

    /// Starts a download of `/resumable/` (100 KB/s), stops it after some bytes, and returns the partial download's size.
    private func interruptedDownload(_ nginx: NginxServer, path: String, fileCache: FileCache) async throws -> Int {
        let manager = makeNetworkManager(fileCache: fileCache) { $0.policy.finishLoadingWithoutUsers = false }
        let user = RecordingUser(ObjectRequest(url: nginx.url(path)), decoder: DataDecoder())
        manager.manage(user)
        #expect(await waitUntil { (user.progress.last?.receivedBytes ?? 0) >= 100_000 })
        manager.unmanage(user)
        let key = nginx.url(path).absoluteString
        #expect(await waitUntil { fileCache.partialDownload(forKey: key) != nil })
        let partial = try #require(fileCache.partialDownload(forKey: key))
        #expect(user.objects.isEmpty)
        return partial.byteCount
    }

    @Test(.enabled(if: NginxServer.isAvailable, skipReason))
    func anInterruptedDownloadResumesWithIfRangeAndGets206() async throws {
        let nginx = try NginxServer(http: Self.http, locations: Self.locations)
        let body = fixtureBody("resume", count: 3_000_000)
        try nginx.publish(body, at: "/resumable/big.bin")
        let cacheDirectory = TemporaryDirectory()
        let fileCache = try FileCache(directory: cacheDirectory.url)
        let kept = try await interruptedDownload(nginx, path: "/resumable/big.bin", fileCache: fileCache)

        let data = try await makeNetworkManager(fileCache: fileCache)
            .object(for: ObjectRequest(url: nginx.url("/resumable/big.bin")), decoder: DataDecoder())
        #expect(data == body)
        #expect(await waitUntil { nginx.requests(for: "/resumable/big.bin").count == 2 })
        let log = nginx.requests(for: "/resumable/big.bin")
        try #require(log.count == 2)
        #expect(log[1].range == "bytes=\(kept)-")
        #expect(log[1].ifRange == log[0].etag)
        #expect(log[1].status == 206)
        #expect(log[1].bodyBytesSent == body.count - kept)
    }

    @Test(.enabled(if: NginxServer.isAvailable, skipReason))
    func aChangedFileGets200AndACleanRestart() async throws {
        let nginx = try NginxServer(http: Self.http, locations: Self.locations)
        let old = fixtureBody("old", count: 3_000_000)
        try nginx.publish(old, at: "/resumable/big.bin")
        let cacheDirectory = TemporaryDirectory()
        let fileCache = try FileCache(directory: cacheDirectory.url)
        let kept = try await interruptedDownload(nginx, path: "/resumable/big.bin", fileCache: fileCache)

        // A new version: another size and another modification time, so another ETag (nginx
        // makes it from both).
        let new = fixtureBody("new", count: 2_500_000)
        try nginx.publish(new, at: "/resumable/big.bin")
        try nginx.setModificationDate(Date().addingTimeInterval(-3_600), at: "/resumable/big.bin")
        let data = try await makeNetworkManager(fileCache: fileCache)
            .object(for: ObjectRequest(url: nginx.url("/resumable/big.bin")), decoder: DataDecoder())
        #expect(data == new, "the new version whole, not the old one's first bytes with the new one's rest")
        #expect(await waitUntil { nginx.requests(for: "/resumable/big.bin").count == 2 })
        let log = nginx.requests(for: "/resumable/big.bin")
        try #require(log.count == 2)
        #expect(log[1].range == "bytes=\(kept)-")
        #expect(log[1].ifRange == log[0].etag)
        #expect(log[1].status == 200)
        #expect(log[1].bodyBytesSent == new.count)
    }

    @Test(.enabled(if: NginxServer.isAvailable, skipReason))
    func gzipEncodedBodiesArriveDecodedAndAreStoredDecoded() async throws {
        let nginx = try NginxServer(http: Self.http, locations: Self.locations)
        let body = Self.text("gzip", count: 200_000)
        try nginx.publish(body, at: "/gzip/doc.txt")
        let cacheDirectory = TemporaryDirectory()
        let fileCache = try FileCache(directory: cacheDirectory.url)
        let request = ObjectRequest(url: nginx.url("/gzip/doc.txt"))

        #expect(try await makeNetworkManager(fileCache: fileCache).object(for: request, decoder: DataDecoder()) == body)
        #expect(await waitUntil { nginx.requests(for: "/gzip/doc.txt").count == 1 })
        let line = try #require(nginx.requests(for: "/gzip/doc.txt").first)
        #expect(line.acceptEncoding.contains("gzip"))
        #expect(line.contentEncoding == "gzip")
        #expect(line.bodyBytesSent < body.count / 4, "compressed on the wire")
        // What the file cache holds is the decoded body.
        let second = makeNetworkManager(fileCache: fileCache)
        #expect(try await second.object(for: request, decoder: DataDecoder()) == body)
        #expect(second.statistics.fileCacheHits == 1)
    }

    @Test(.enabled(if: NginxServer.isAvailable, skipReason))
    func redirectsAreFollowedAndTheObjectIsCachedUnderTheRequestedURL() async throws {
        let nginx = try NginxServer(http: Self.http, locations: Self.locations)
        let body = Self.text("target", count: 5_000)
        try nginx.publish(body, at: "/fresh/target.txt")
        let cacheDirectory = TemporaryDirectory()
        let fileCache = try FileCache(directory: cacheDirectory.url)
        let request = ObjectRequest(url: nginx.url("/redirect/found"))

        #expect(try await makeNetworkManager(fileCache: fileCache).object(for: request, decoder: DataDecoder()) == body)
        #expect(await waitUntil { nginx.accessLog.count == 3 })
        #expect(nginx.accessLog.map(\.uri) == ["/redirect/found", "/redirect/moved", "/fresh/target.txt"])
        #expect(nginx.accessLog.map(\.status) == [302, 301, 200])
        #expect(fileCache.entry(forKey: request.url.absoluteString) != nil)
        let second = makeNetworkManager(fileCache: fileCache)
        #expect(try await second.object(for: request, decoder: DataDecoder()) == body)
        #expect(second.statistics.networkRequests == 0, "the final response's max-age applies")
    }

    @Test(.enabled(if: NginxServer.isAvailable, skipReason))
    func aThrottledLargeDownloadStreamsToTheEndWithinTheIdleTimeout() async throws {
        let nginx = try NginxServer(http: Self.http, locations: Self.locations)
        let body = fixtureBody("throttled", count: 3_000_000)
        try nginx.publish(body, at: "/throttled/large.bin")
        let cacheDirectory = TemporaryDirectory()
        let fileCache = try FileCache(directory: cacheDirectory.url)
        // nginx's limit_rate sends in bursts about a second apart: an idle timeout of 5 s is
        // never reached, although the whole download takes longer than 2 s.
        let manager = makeNetworkManager(fileCache: fileCache) { $0.policy.timeout = 5 }
        let user = RecordingUser(ObjectRequest(url: nginx.url("/throttled/large.bin")), decoder: DataDecoder())
        manager.manage(user)

        #expect(await waitUntil { user.objects.count + user.errors.count == 1 })
        #expect(user.errors.isEmpty)
        #expect(user.objects.first == body)
        let received = user.progress.map(\.receivedBytes)
        #expect(received.count > 10, "delivered in pieces as they arrived")
        #expect(zip(received, received.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(user.progress.last == LoadProgress(receivedBytes: body.count, expectedBytes: body.count))
        #expect(fileCache.entry(forKey: user.objectRequest!.url.absoluteString)?.byteCount == body.count)
        #expect(await waitUntil { nginx.accessLog.count == 1 })
        #expect(nginx.accessLog.first?.bodyBytesSent == body.count)
    }

    @Test(.enabled(if: NginxServer.isAvailable, skipReason))
    func nginxIsStoppedByItsPID() throws {
        let nginx = try NginxServer(http: Self.http, locations: Self.locations)
        let pid = try #require(nginx.pid)
        #expect(kill(pid, 0) == 0, "running")
        nginx.stop()
        #expect(kill(pid, 0) != 0, "gone")
    }
}

import Foundation
import Testing

@testable import ManagedCache

/// The stale-if-error decision as a table, without I/O: which failures a stale copy may hide,
/// which responses never are shown stale, and the bounds (the response's `stale-if-error`, the
/// policy's default maximum), at a fixed "now".
@Suite struct StaleIfErrorDecisionTests {
    static let now = Date(timeIntervalSince1970: 2_000_000_000)
    static let hour = 3_600.0

    /// A copy that expired `staleFor` seconds before `now`.
    static func copy(staleFor: Double, staleIfError: Double? = nil, mustRevalidate: Bool = false) -> HTTPFreshness {
        HTTPFreshness(
            freshUntil: now.addingTimeInterval(-staleFor), etag: "\"v1\"", mustRevalidate: mustRevalidate,
            staleIfError: staleIfError)
    }

    static func policy(_ staleIfError: StaleIfErrorPolicy = .fromServer(defaultMaximumStaleness: nil)) -> LoadPolicy {
        var policy = LoadPolicy()
        policy.staleIfError = staleIfError
        return policy
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let freshness: HTTPFreshness
        let failure: ManagedCacheError
        let policy: LoadPolicy
        let expected: StaleIfError.Decision
        var testDescription: String { name }
    }

    static let refused = ManagedCacheError.transport(code: -1004, description: "Could not connect to the server.")
    static let reset = ManagedCacheError.transport(code: -1005, description: "The network connection was lost.")
    static let offline = ManagedCacheError.transport(code: -1009, description: "The Internet connection appears to be offline.")
    static let stalled = ManagedCacheError.timedOut(seconds: 30)

    static let rows: [Row] = [
        // The failures stale-if-error covers: the network, and 500/502/503/504 (RFC 5861).
        Row(name: "refused", freshness: copy(staleFor: hour), failure: refused, policy: policy(), expected: .deliverStale),
        Row(name: "reset", freshness: copy(staleFor: hour), failure: reset, policy: policy(), expected: .deliverStale),
        Row(name: "offline", freshness: copy(staleFor: hour), failure: offline, policy: policy(), expected: .deliverStale),
        Row(
            name: "stalled past the idle timeout", freshness: copy(staleFor: hour), failure: stalled, policy: policy(),
            expected: .deliverStale),
        Row(name: "500", freshness: copy(staleFor: hour), failure: .httpStatus(code: 500), policy: policy(), expected: .deliverStale),
        Row(name: "502", freshness: copy(staleFor: hour), failure: .httpStatus(code: 502), policy: policy(), expected: .deliverStale),
        Row(name: "503", freshness: copy(staleFor: hour), failure: .httpStatus(code: 503), policy: policy(), expected: .deliverStale),
        Row(name: "504", freshness: copy(staleFor: hour), failure: .httpStatus(code: 504), policy: policy(), expected: .deliverStale),
        // What the server answered otherwise is never hidden; what is no failed revalidation neither.
        Row(
            name: "404", freshness: copy(staleFor: hour), failure: .httpStatus(code: 404), policy: policy(),
            expected: .deliverFailure(.notAnError)),
        Row(
            name: "403", freshness: copy(staleFor: hour), failure: .httpStatus(code: 403), policy: policy(),
            expected: .deliverFailure(.notAnError)),
        Row(
            name: "408", freshness: copy(staleFor: hour), failure: .httpStatus(code: 408), policy: policy(),
            expected: .deliverFailure(.notAnError)),
        Row(
            name: "429", freshness: copy(staleFor: hour), failure: .httpStatus(code: 429), policy: policy(),
            expected: .deliverFailure(.notAnError)),
        Row(
            name: "501", freshness: copy(staleFor: hour), failure: .httpStatus(code: 501), policy: policy(),
            expected: .deliverFailure(.notAnError)),
        Row(
            name: "505", freshness: copy(staleFor: hour), failure: .httpStatus(code: 505), policy: policy(),
            expected: .deliverFailure(.notAnError)),
        Row(
            name: "cancelled", freshness: copy(staleFor: hour), failure: .cancelled(.caller), policy: policy(),
            expected: .deliverFailure(.notAnError)),
        Row(
            name: "too large", freshness: copy(staleFor: hour), failure: .tooLarge(limit: 10), policy: policy(),
            expected: .deliverFailure(.notAnError)),
        Row(
            name: "undecodable", freshness: copy(staleFor: hour), failure: .decodingFailed(reason: "x"), policy: policy(),
            expected: .deliverFailure(.notAnError)),
        Row(
            name: "recently failed", freshness: copy(staleFor: hour), failure: .recentlyFailed(.httpStatus(code: 404)),
            policy: policy(), expected: .deliverFailure(.notAnError)),
        // must-revalidate / no-cache: never stale, whatever the failure, bound or policy.
        Row(
            name: "must-revalidate, refused", freshness: copy(staleFor: hour, mustRevalidate: true), failure: refused,
            policy: policy(), expected: .deliverFailure(.mustRevalidate)),
        Row(
            name: "must-revalidate with stale-if-error, 503", freshness: copy(staleFor: 1, staleIfError: 86_400, mustRevalidate: true),
            failure: .httpStatus(code: 503), policy: policy(), expected: .deliverFailure(.mustRevalidate)),
        // The policy can turn it off.
        Row(
            name: "never", freshness: copy(staleFor: 1, staleIfError: 86_400), failure: refused, policy: policy(.never),
            expected: .deliverFailure(.turnedOff)),
        // The response's stale-if-error bounds the staleness, over the policy's default.
        Row(
            name: "within stale-if-error", freshness: copy(staleFor: hour, staleIfError: 2 * hour), failure: refused,
            policy: policy(), expected: .deliverStale),
        Row(
            name: "exactly at stale-if-error", freshness: copy(staleFor: hour, staleIfError: hour), failure: refused,
            policy: policy(), expected: .deliverStale),
        Row(
            name: "past stale-if-error", freshness: copy(staleFor: 2 * hour, staleIfError: hour), failure: refused,
            policy: policy(), expected: .deliverFailure(.tooStale)),
        Row(
            name: "stale-if-error=0", freshness: copy(staleFor: 1, staleIfError: 0), failure: reset, policy: policy(),
            expected: .deliverFailure(.tooStale)),
        Row(
            name: "stale-if-error wider than the default", freshness: copy(staleFor: 2 * hour, staleIfError: 3 * hour),
            failure: refused, policy: policy(.fromServer(defaultMaximumStaleness: hour)), expected: .deliverStale),
        Row(
            name: "stale-if-error narrower than the default", freshness: copy(staleFor: 2 * hour, staleIfError: hour),
            failure: refused, policy: policy(.fromServer(defaultMaximumStaleness: 3 * hour)),
            expected: .deliverFailure(.tooStale)),
        // Without stale-if-error, the policy's default maximum; none by default.
        Row(
            name: "a year stale, no bound", freshness: copy(staleFor: 365 * 86_400), failure: offline, policy: policy(),
            expected: .deliverStale),
        Row(
            name: "within the default maximum", freshness: copy(staleFor: hour), failure: refused,
            policy: policy(.fromServer(defaultMaximumStaleness: 2 * hour)), expected: .deliverStale),
        Row(
            name: "past the default maximum", freshness: copy(staleFor: 3 * hour), failure: refused,
            policy: policy(.fromServer(defaultMaximumStaleness: 2 * hour)), expected: .deliverFailure(.tooStale)),
        // A copy with no expiry, or not yet expired, is not stale at all.
        Row(
            name: "no expiry", freshness: HTTPFreshness(etag: "\"v1\""), failure: refused,
            policy: policy(.fromServer(defaultMaximumStaleness: 0)), expected: .deliverStale),
        Row(
            name: "not yet expired", freshness: copy(staleFor: -hour), failure: refused,
            policy: policy(.fromServer(defaultMaximumStaleness: 0)), expected: .deliverStale),
    ]

    @Test(arguments: rows)
    func decision(_ row: Row) {
        let decided = StaleIfError.decide(freshness: row.freshness, failure: row.failure, now: Self.now, policy: row.policy)
        #expect(decided == row.expected, "\(row.name)")
    }

    @Test func thePolicyIsSetPerManagerAndOverriddenPerRequest() {
        var manager = LoadPolicy()
        #expect(manager.staleIfError == .fromServer(defaultMaximumStaleness: nil))
        manager.staleIfError = .fromServer(defaultMaximumStaleness: 86_400)
        #expect(manager.applying(PolicyOverrides()).staleIfError == .fromServer(defaultMaximumStaleness: 86_400))
        #expect(manager.applying(PolicyOverrides(staleIfError: .never)).staleIfError == .never)
        // A request's overrides, set at creation or later, and cleared again.
        var request = ObjectRequest(url: URL(string: "https://example.com/a")!)
        #expect(request.policy(over: manager).staleIfError == .fromServer(defaultMaximumStaleness: 86_400))
        request.policy.staleIfError = .never
        #expect(request.policy(over: manager).staleIfError == .never)
        request.policy = PolicyOverrides()
        #expect(request.policy(over: manager).staleIfError == .fromServer(defaultMaximumStaleness: 86_400))
        let created = ObjectRequest(url: URL(string: "https://example.com/b")!, policy: PolicyOverrides(staleIfError: .never))
        #expect(created.policy(over: manager).staleIfError == .never)
    }
}

/// Reading `stale-if-error` and the directives around it from response headers, and keeping them
/// in a file-cache entry's metadata.
@Suite struct StaleIfErrorDirectiveTests {
    @Test func staleIfErrorIsReadFromCacheControl() {
        #expect(HTTPCacheDirectives(headers: ["cache-control": "max-age=60, stale-if-error=86400"]).staleIfError == 86_400)
        #expect(HTTPCacheDirectives(headers: ["cache-control": "Stale-If-Error=\"120\""]).staleIfError == 120)
        #expect(HTTPCacheDirectives(headers: ["cache-control": "stale-if-error=-5"]).staleIfError == 0)
        #expect(HTTPCacheDirectives(headers: ["cache-control": "stale-if-error=soon"]).staleIfError == nil)
        #expect(HTTPCacheDirectives(headers: ["cache-control": "stale-if-error"]).staleIfError == nil)
        #expect(HTTPCacheDirectives(headers: ["cache-control": "max-age=60"]).staleIfError == nil)
    }

    /// `proxy-revalidate` and `s-maxage` speak to shared caches only (RFC 9111, sections 5.2.2.8
    /// and 5.2.2.10); the manager is a private cache.
    @Test func sharedCacheDirectivesDoNotApplyToThisPrivateCache() {
        let received = Date(timeIntervalSince1970: 1_000_000)
        let proxy = HTTPCacheDirectives(headers: ["cache-control": "max-age=60, proxy-revalidate"])
        #expect(!proxy.mustRevalidate)
        let shared = HTTPCacheDirectives(headers: ["cache-control": "s-maxage=600, max-age=60"])
        #expect(!shared.mustRevalidate)
        #expect(shared.freshUntil(receivedAt: received, policy: .fromServer(defaultMaxAge: nil)) == received.addingTimeInterval(60))
    }

    /// A comma inside a quoted argument does not start a directive of its own.
    @Test func quotedArgumentsKeepTheirCommas() {
        let directives = HTTPCacheDirectives(headers: ["cache-control": "private=\"Set-Cookie, must-revalidate\", max-age=30"])
        #expect(!directives.mustRevalidate)
        #expect(directives.maxAge == 30)
        let qualified = HTTPCacheDirectives(headers: ["cache-control": "no-cache=\"Set-Cookie, Vary\", stale-if-error=60"])
        #expect(qualified.noCache)
        #expect(qualified.staleIfError == 60)
    }

    @Test func theStoredMetadataKeepsStaleIfErrorAndOldEntriesReadAsUnset() {
        let freshness = HTTPFreshness(
            freshUntil: Date(timeIntervalSince1970: 1_000), etag: "\"a\"", mustRevalidate: false, staleIfError: 3_600)
        let metadata = FileCacheMetadata(contentType: "image/png").with(freshness)
        #expect(metadata.freshness == freshness)
        // An entry written before the field existed: no `stale-if-error` in its user info.
        let old = FileCacheMetadata(contentType: "image/png", freshUntil: Date(timeIntervalSince1970: 1_000))
        #expect(old.freshness.staleIfError == nil)
        #expect(!old.freshness.mustRevalidate)
        // A damaged value reads as unset rather than as a bound.
        let damaged = FileCacheMetadata(userInfo: ["stale-if-error": "nan"])
        #expect(damaged.freshness.staleIfError == nil)
    }

    /// A `304` that repeats neither `Cache-Control` nor `Expires` makes the stored response fresh
    /// for its own lifetime again, counted from the validation (RFC 9111, 4.2 and 4.3.4): a
    /// `max-age=0` entry stays stale, a `max-age=60` one is fresh for 60 s more, and an entry that
    /// kept no lifetime keeps its old end rather than becoming fresh for good.
    @Test func a304WithoutExpiryRestartsTheStoredLifetime() {
        let policy = FreshnessPolicy.fromServer(defaultMaxAge: nil)
        let first = Date(timeIntervalSince1970: 1_000_000)
        let later = first.addingTimeInterval(500)
        let bare = DataLoadResponse(statusCode: 304, headers: ["etag": "\"v1\""], expectedContentLength: 0, url: nil)
        for (maxAge, expected) in [(0.0, later), (60.0, later.addingTimeInterval(60))] {
            let stored = HTTPFreshness(
                response: DataLoadResponse(
                    statusCode: 200, headers: ["cache-control": "max-age=\(Int(maxAge))", "etag": "\"v1\""],
                    expectedContentLength: 0, url: nil),
                receivedAt: first, policy: policy)
            #expect(stored.freshUntil == first.addingTimeInterval(maxAge))
            let fromDisk = FileCacheMetadata().with(stored).freshness
            let revalidated = HTTPFreshness(response: bare, receivedAt: later, policy: policy, previous: fromDisk)
            #expect(revalidated.freshUntil == expected, "max-age=\(maxAge)")
            #expect(revalidated.isStale(at: later, policy: policy) == (maxAge == 0))
        }
        let withoutLifetime = HTTPFreshness(freshUntil: first, etag: "\"v1\"")
        let kept = HTTPFreshness(response: bare, receivedAt: later, policy: policy, previous: withoutLifetime)
        #expect(kept.freshUntil == first)
        let expires = DataLoadResponse(
            statusCode: 304, headers: ["expires": HTTPCacheDirectives.formatHTTPDate(later.addingTimeInterval(30))],
            expectedContentLength: 0, url: nil)
        let replaced = HTTPFreshness(response: expires, receivedAt: later, policy: policy, previous: withoutLifetime)
        #expect(replaced.freshUntil == later.addingTimeInterval(30))
    }

    /// A `304` without `Cache-Control` leaves the stored directives in force (RFC 9111, 4.3.4);
    /// one with `Cache-Control` replaces them.
    @Test func a304KeepsStoredDirectivesUnlessItRepeatsCacheControl() {
        let received = Date(timeIntervalSince1970: 1_000_000)
        let stored = HTTPFreshness(freshUntil: received, etag: "\"v1\"", mustRevalidate: true, staleIfError: 600)
        let bare = DataLoadResponse(statusCode: 304, headers: ["etag": "\"v1\""], expectedContentLength: 0, url: nil)
        let kept = HTTPFreshness(response: bare, receivedAt: received, policy: .fromServer(defaultMaxAge: nil), previous: stored)
        #expect(kept.mustRevalidate)
        #expect(kept.staleIfError == 600)
        let repeated = DataLoadResponse(statusCode: 304, headers: ["cache-control": "max-age=60"], expectedContentLength: 0, url: nil)
        let replaced = HTTPFreshness(
            response: repeated, receivedAt: received, policy: .fromServer(defaultMaxAge: nil), previous: stored)
        #expect(!replaced.mustRevalidate)
        #expect(replaced.staleIfError == nil)
        #expect(replaced.etag == "\"v1\"")
    }
}

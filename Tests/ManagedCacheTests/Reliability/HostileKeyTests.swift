import Foundation
import ManagedCache
import ManagedCacheLocking
import TestSupport
import Testing

/// More than 10,000 generated oids and URLs through a manager with a
/// `FileCache` (path traversal, absolute paths, NUL and control characters, very long keys,
/// Unicode normalization and case variants, percent-encoding tricks, key-separator injection):
/// no file is ever created outside the cache root, no key is ever served another key's bytes
/// (from the network or, with the network off, from disk), and URLs that cannot be loaded fail
/// with `.invalidRequest`.
@Suite(.offCooperativePool) struct HostileKeyTests {
    /// One generated request, or a URL string that `URL(string:)` refused.
    struct Case: Sendable {
        let index: Int
        let label: String
        let request: ObjectRequest
        /// Whether the manager must refuse it with `.invalidRequest`.
        let expectsInvalid: Bool
    }

    /// Serves every request with the bytes of the case named by its `X-Case` header, so a user
    /// that receives another case's bytes is caught. Can be switched off (every load fails).
    final class CaseLoader: DataLoading {
        private let state = Lock((online: true, requests: 0))

        var online: Bool {
            get { state.withLock { $0.online } }
            set { state.withLock { $0.online = newValue } }
        }

        var requests: Int { state.withLock { $0.requests } }

        func canLoad(_ url: URL) -> Bool { true }

        func load(_ request: DataLoadRequest, receiver: any DataLoadReceiver) async throws -> DataLoadResponse {
            let online = state.withLock { state -> Bool in
                state.requests += 1
                return state.online
            }
            guard online else { throw ManagedCacheError.transport(code: -1009, description: "offline") }
            guard let index = request.headers["X-Case"].flatMap(Int.init) else {
                throw ManagedCacheError.httpStatus(code: 400)
            }
            let body = HostileKeyTests.body(index)
            let response = DataLoadResponse(
                statusCode: 200, headers: ["content-type": FramedBody.contentType],
                expectedContentLength: body.count, url: request.url)
            try receiver.didReceive(response: response)
            try receiver.didReceive(body)
            return response
        }
    }

    static func payload(_ index: Int) -> Data { FramedBody.payload(seed: "case-\(index)", count: 24 + index % 97) }
    static func body(_ index: Int) -> Data { FramedBody.wrap(payload(index)) }

    /// The schemes the manager under test can load: the router's built-in ones (with a host for
    /// http and https) and the custom `hostile` scheme.
    static func isLoadable(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "hostile", "file": return true
        case "http", "https": return url.host?.isEmpty == false
        default: return false
        }
    }

    // MARK: Generating the cases

    /// Oids: every hostile key of the file-cache tests, traversal towards a marker name, absolute
    /// paths, control characters, long keys, normalization forms, case variants, separator
    /// injection, random strings.
    static func hostileOids(token: String) -> [String] {
        var oids = FileCacheHostileKeyTests.hostileKeys()
        let targets = ["mc-escape-\(token)", "tmp/mc-escape-\(token)", "inner/mc-escape-\(token)", "etc/passwd"]
        let climbs = [
            "../", "..\\", "./../", "%2e%2e%2f", "%2E%2E/", "..%2f", "%252e%252e%252f", "..%c0%af", "....//", "..;/", "..\u{2215}",
            "\u{FF0E}\u{FF0E}/",
        ]
        for climb in climbs {
            for depth in 1...8 {
                for target in targets { oids.append(String(repeating: climb, count: depth) + target) }
            }
        }
        // portability-lint: allow hostile key strings, no path is read
        for prefix in ["/", "//", "\\", "file://", "/tmp/", "/dev/", "/proc/self/", "C:\\", "~/"] {
            for target in targets + ["null", "mem", "fd/0", "shadow"] { oids.append(prefix + target) }
        }
        let controls: [Unicode.Scalar] =
            (0..<32).map { Unicode.Scalar(UInt8($0)) } + ["\u{7F}", "\u{85}", "\u{2028}", "\u{2029}", "\u{FEFF}"]
        for scalar in controls {
            let character = String(Character(scalar))
            oids += [
                "a\(character)b", character, "x/\(character)/../mc-escape-\(token)", "\(character)\(character)\(character)",
                "../\(character)mc-escape-\(token)",
            ]
        }
        for length in [254, 255, 256, 1_023, 1_024, 4_095, 4_096, 4_097, 65_536] {
            for unit in ["a", "/", "é", "../", "\u{1F600}", "%2F"] {
                oids.append(String(String(repeating: unit, count: length / unit.utf8.count + 1).prefix(length)))
            }
        }
        let words = [
            "café", "Å", "Ångström", "ñandú", "Ωmega", "ﬁle", "Straße", "İstanbul", "ǅemal", "한국어", "e\u{301}", "ḱṷṓn", "ﾊﾝｶｸ", "①②③",
            "x\u{0327}\u{0301}",
        ]
        for word in words {
            oids += [
                word, word.precomposedStringWithCanonicalMapping, word.decomposedStringWithCanonicalMapping,
                word.precomposedStringWithCompatibilityMapping, word.decomposedStringWithCompatibilityMapping,
                word.uppercased(), word.lowercased(), word.capitalized,
            ]
        }
        for word in ["Photo", "PHOTO", "photo", "pHoTo", "ß", "SS", "ss", "ﬀ", "FF", "İ", "i\u{307}", "K", "\u{212A}", "Ω", "\u{2126}"] {
            oids += [word, "img/\(word).png", "IMG/\(word).PNG"]
        }
        // Key-separator injection: an oid spelling another request's key-header suffix or a variant key.
        for value in ["image/png", "image/webp", "", "=", "\u{1F}"] {
            oids += ["sep\u{1F}accept=\(value)", "sep\u{1F}variant=test.framed", "sep\u{1F}accept=\(value)\u{1F}x=y"]
        }
        var generator = SplitMix(state: 6)
        let alphabet: [Unicode.Scalar] = [
            "/", ".", "\\", "\0", "a", "Z", "~", ":", "%", " ", "é", "\u{301}", "\u{1F}", "=", "?", "#", "2", "e", "f",
        ]
        while oids.count < 6_000 {
            var oid = ""
            for _ in 0..<(1 + Int(generator.next() % 48)) {
                if generator.next() % 4 == 0, let scalar = Unicode.Scalar(UInt32(generator.next() % 0x2FFFF)) {
                    oid.unicodeScalars.append(scalar)
                } else {
                    oid.unicodeScalars.append(alphabet[Int(generator.next() % UInt64(alphabet.count))])
                }
            }
            oids.append(oid)
        }
        return oids
    }

    /// URL strings: traversal and percent-encoding tricks in paths, queries and fragments, case
    /// variants of schemes and hosts, user info, ports, long paths, and schemes that cannot be
    /// loaded; plus random ones.
    static func hostileURLStrings(token: String) -> [String] {
        var strings: [String] = []
        let paths = [
            "/../../mc-escape-\(token)", "/%2e%2e/%2e%2e/mc-escape-\(token)", "/%252e%252e%252fmc-escape-\(token)",
            "/..%2f..%2fmc-escape-\(token)", "/..%c0%af..%c0%afmc-escape-\(token)", "/a%00b", "/a%0Ab", "/a%2Fb", "/a/b",
            "/A/B", "/a//b", "/a/./b", "/a/../b", "/%41", "/A", "/caf%C3%A9", "/cafe%CC%81", "/caf%c3%a9", "/~user",
            "/?../../mc-escape-\(token)", "/#../../mc-escape-\(token)", "/;jsessionid=1", "/%", "/%zz", "/%%32%65",
            "/" + String(repeating: "a", count: 5_000), "/" + String(repeating: "../", count: 700) + "mc-escape-\(token)",
            "/\u{202E}gpj.exe", "/%E2%80%AEgpj.exe", "/%EF%BC%8E%EF%BC%8E/x", "/index.html%3F..%2F", "",
        ]
        let hosts = [
            "h", "H", "example.com", "EXAMPLE.COM", "ExAmPlE.cOm", "user:pass@h", "user%2F:p%40ss@h", "h:8080", "h:0",
            "[::1]", "127.0.0.1", "0x7f.1", "xn--caf-dma.com", "h.", "%68",
        ]
        for scheme in ["hostile", "HOSTILE", "Hostile", "http", "HTTP", "https"] {
            for host in hosts {
                for path in paths { strings.append("\(scheme)://\(host)\(path)") }
            }
        }
        // Cannot be loaded: no scheme, schemes nobody handles, http without a host.
        let unloadable = [
            "ftp://h/x", "gopher://h/x", "javascript:alert(1)", "data:text/plain,hi", "mailto:a@b.c", "about:blank",
            "ws://h/x", "wss://h/x", "sftp://h/x", "jar:file:///x!/y", "relative/path", "/absolute/path", "//h/no-scheme",
            "?query-only", "#fragment-only", "http:///no-host", "https:///no-host", "http:no-slashes", "http:", "https:",
            "HTTP:///NO-HOST", "x-unknown://h/y", "hostile-not://h/x", "h:80/x",
        ]
        for string in unloadable {
            strings.append(string)
            strings.append(string + "/../../mc-escape-\(token)")
        }
        var generator = SplitMix(state: 7)
        let schemes = ["hostile", "http", "https", "HTTP", "ftp", "x-unknown", "", "file"]
        let pieces = [
            "/", "..", ".", "%2e", "%2f", "%2F", "%00", "%25", "a", "B", "é", "?", "#", "=", "&", ";", "~", "%C3%A9", "\u{0301}",
            "mc-escape-\(token)",
        ]
        while strings.count < 6_000 {
            let scheme = schemes[Int(generator.next() % UInt64(schemes.count))]
            let host = hosts[Int(generator.next() % UInt64(hosts.count))]
            var path = ""
            for _ in 0..<(1 + Int(generator.next() % 20)) { path += pieces[Int(generator.next() % UInt64(pieces.count))] }
            strings.append(scheme.isEmpty ? "\(host)/\(path)" : "\(scheme)://\(host)/\(path)")
        }
        return strings
    }

    /// Every case, each a distinct request (by its oid or URL and its key headers, compared byte
    /// for byte: not by its data key, whose distinctness is under test); returns also how many URL
    /// strings `URL(string:)` refused and how many duplicates were dropped.
    static func cases(token: String) -> (cases: [Case], unparsable: Int, duplicates: Int) {
        var cases: [Case] = []
        var seen = Set<[UInt8]>()
        var unparsable = 0
        var duplicates = 0
        func add(_ label: String, _ make: (Int) -> ObjectRequest) {
            let index = cases.count
            let request = make(index)
            guard seen.insert(identity(of: request)).inserted else {
                duplicates += 1
                return
            }
            let invalid = request.dataKey.isEmpty || !isLoadable(request.url)
            cases.append(Case(index: index, label: label, request: request, expectsInvalid: invalid))
        }
        for oid in hostileOids(token: token) {
            add("oid") { ObjectRequest(url: URL(string: "hostile://h/oid/\($0)")!, oid: oid, headers: ["X-Case": "\($0)"]) }
        }
        // Two requests whose keys are built from an oid plus a key header: they must not meet
        // the oids above that spell the same suffix.
        for value in ["image/png", "image/webp", "", "="] {
            add("key header") {
                ObjectRequest(
                    url: URL(string: "hostile://h/kh/\($0)")!, oid: "sep",
                    headers: ["X-Case": "\($0)", "Accept": value], keyHeaders: ["Accept"])
            }
        }
        for string in hostileURLStrings(token: token) {
            guard let url = URL(string: string) else {
                unparsable += 1
                continue
            }
            add("url") { ObjectRequest(url: url, headers: ["X-Case": "\($0)"]) }
        }
        return (cases, unparsable, duplicates)
    }

    /// What makes two requests the same request: the bytes of the oid or URL and of each key
    /// header's name and value, with separators (0xFE, 0xFF) that UTF-8 never contains.
    static func identity(of request: ObjectRequest) -> [UInt8] {
        var bytes = Array((request.oid ?? request.url.absoluteString).utf8) + [0xFF]
        for name in request.keyHeaders.sorted() {
            let value = request.headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value ?? ""
            bytes += Array(name.lowercased().utf8) + [0xFE] + Array(value.utf8) + [0xFF]
        }
        return bytes
    }

    // MARK: The test

    @Test func tenThousandHostileKeysStayInsideTheCacheAndNeverShareData() async throws {
        let tally = ReliabilityTally(item: "hostile keys")
        let token = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        let (cases, unparsable, duplicates) = Self.cases(token: token)
        #expect(cases.count >= 10_000)
        let sandbox = TemporaryDirectory(prefix: "reliability-hostile")
        let root = sandbox.appending("inner/cache")
        let canary = sandbox.appending("canary")
        try FileManager.default.createDirectory(at: canary, withIntermediateDirectories: true)
        let loader = CaseLoader()
        let router = DefaultDataLoader(http: loader, file: loader, custom: ["hostile": loader])
        do {
            let fileCache = try FileCache(directory: root)
            var configuration = ObjectManager.Configuration()
            configuration.fileCache = fileCache
            configuration.dataLoader = router
            configuration.loadingBufferSize = 1 << 20  // every load runs: none is pushed out
            configuration.loadRateLimit = nil  // and at once: 11,750 keys at 80 a second took 2 minutes
            configuration.policy.retry = .none
            let manager = ObjectManager(configuration: configuration)

            // From the network, then with the network off from disk only.
            await Self.serve(cases, manager: manager, round: "network", tally: tally)
            loader.online = false
            manager.removeAllObjects()
            await Self.serve(cases.filter { !$0.expectsInvalid }, manager: manager, round: "disk", tally: tally)
            tally.check(
                fileCache.statistics.count == cases.filter { !$0.expectsInvalid }.count, "file cache",
                "\(fileCache.statistics.count) entries for \(cases.filter { !$0.expectsInvalid }.count) keys")
        }

        // Nothing outside the root: in the sandbox, beside it, or anywhere a traversal could reach.
        let outside = regularFiles(under: sandbox.url).filter { !$0.hasPrefix("inner/cache/") }
        tally.check(outside.isEmpty, "file system", "files outside the cache root: \(outside.prefix(5))")
        tally.check(
            ((try? FileManager.default.contentsOfDirectory(atPath: sandbox.url.path)) ?? []).sorted() == ["canary", "inner"],
            "file system", "the sandbox holds more than the cache")
        tally.check(
            ((try? FileManager.default.contentsOfDirectory(atPath: canary.path)) ?? ["?"]).isEmpty, "file system",
            "something reached the canary directory beside the cache")
        let escaped = Self.namesContaining(
            token,
            around: [
                sandbox.url, sandbox.url.deletingLastPathComponent(), URL(fileURLWithPath: "/"),
                URL(fileURLWithPath: "/tmp"), URL(fileURLWithPath: "/etc"),
                URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
            ])
        tally.check(escaped.isEmpty, "file system", "escaped names: \(escaped)")
        let names = regularFiles(under: root.appendingPathComponent("ready"))
        tally.check(
            names.allSatisfy { $0.count == 49 && $0.allSatisfy { "0123456789abcdef-".contains($0) } }, "file system",
            "an entry file is not named by its digest")
        let rootNames = Set((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [])
        tally.check(
            rootNames.isSubset(of: ["journal", "journal.lookup", "lock", "session.lock", "sessions", "partial", "loading", "ready"]),
            "file system",
            "unexpected names in the root: \(rootNames)")

        tally.add(cases.count + unparsable, to: "keys tried")
        tally.add(unparsable, to: "URL strings refused by URL(string:)")
        tally.add(duplicates, to: "duplicates dropped")
        tally.report()
        #expect(tally.figure("served another key's data") == 0)
        #expect(tally.failureCount == 0)
    }

    /// Manages every case in batches (each user once, never unmanaged) and checks what it got.
    private static func serve(_ cases: [Case], manager: ObjectManager, round: String, tally: ReliabilityTally) async {
        let decoder = FramedDecoder()
        for figure in ["served another key's data"] { tally.add(0, to: figure) }
        for start in stride(from: 0, to: cases.count, by: 400) {
            let batch = Array(cases[start..<min(cases.count, start + 400)])
            let users = batch.map { RecordingUser($0.request, decoder: decoder) }
            for user in users { manager.manage(user) }
            let done = await waitUntil { users.allSatisfy { $0.finalCallbackCount >= 1 } }
            tally.check(done, "\(round) batch \(start)", "users not told within \(waitBound) s (a hang)")
            for (testCase, user) in zip(batch, users) {
                let name = "\(round) \(testCase.label) \(testCase.index)"
                tally.addCase(name)
                tally.check(user.finalCallbackCount == 1, name, "\(user.finalCallbackCount) final callbacks")
                if testCase.expectsInvalid {
                    let refused: Bool
                    if case .invalidRequest? = user.errors.first { refused = true } else { refused = false }
                    tally.check(
                        refused, name,
                        "\(testCase.request.url.absoluteString.prefix(80)) gave \(user.errors) \(user.objects.count) objects, expected .invalidRequest"
                    )
                    if refused { tally.add(1, to: "unloadable refused") }
                    continue
                }
                guard let object = user.objects.first else {
                    tally.check(false, name, "key \(testCase.request.dataKey.debugDescription.prefix(80)) failed: \(user.errors)")
                    continue
                }
                if object.bytes == payload(testCase.index) {
                    tally.add(1, to: "served right from \(round)")
                } else {
                    tally.add(1, to: "served another key's data")
                    tally.check(false, name, "key \(testCase.request.dataKey.debugDescription.prefix(80)) got another key's bytes")
                }
                if round == "disk" {
                    tally.check(user.origins == [.fileCache], name, "origin \(user.origins) with the network off")
                }
            }
        }
    }

    /// Names containing `token` directly in `directories`, or anywhere below the first one.
    private static func namesContaining(_ token: String, around directories: [URL]) -> [String] {
        var found: [String] = []
        for (position, directory) in directories.enumerated() {
            let names: [String]
            if position == 0 {
                names = (FileManager.default.enumerator(atPath: directory.path)?.allObjects as? [String]) ?? []
            } else {
                names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            }
            found += names.filter { $0.contains(token) }.map { directory.path + "/" + $0 }
        }
        return found
    }
}

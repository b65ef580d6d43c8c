import Foundation

/// Routes each URL to the loader for its scheme: `http`/`https` to a `URLSessionDataLoader`,
/// `file` to a `FileURLDataLoader`, and any scheme you add to your own `DataLoading`.
///
/// ```swift
/// struct BundleLoader: DataLoading {  // "asset://name" reads a resource of the app
///     func canLoad(_ url: URL) -> Bool { url.scheme == "asset" }
///     func load(_ request: DataLoadRequest, receiver: any DataLoadReceiver) async throws -> DataLoadResponse {
///         let data = try Data(contentsOf: Bundle.main.bundleURL.appendingPathComponent(request.url.host ?? ""))
///         let response = DataLoadResponse(statusCode: nil, expectedContentLength: data.count, url: request.url)
///         try receiver.didReceive(response: response)
///         try receiver.didReceive(data)
///         return response
///     }
/// }
/// var configuration = ObjectManager.Configuration()
/// configuration.dataLoader = DefaultDataLoader(custom: ["asset": BundleLoader()])
/// ```
public struct DefaultDataLoader: DataLoading {
    private let http: any DataLoading
    private let file: any DataLoading
    private let custom: [String: any DataLoading]
    /// Whether `custom` routes `http` or `https` itself (then every URL is parsed).
    private let customRoutesHTTP: Bool

    /// Creates a router.
    ///
    /// - Parameters:
    ///   - http: The loader for `http` and `https`. Default: a new ``URLSessionDataLoader``.
    ///   - file: The loader for `file`. Default: a ``FileURLDataLoader``.
    ///   - custom: Loaders by lowercase scheme; they take precedence over the built-in ones.
    ///     Default none.
    public init(
        http: any DataLoading = URLSessionDataLoader(), file: any DataLoading = FileURLDataLoader(),
        custom: [String: any DataLoading] = [:]
    ) {
        self.http = http
        self.file = file
        self.custom = custom
        customRoutesHTTP = custom["http"] != nil || custom["https"] != nil
    }

    /// Whether a loader is routed for the URL's scheme (and, for http and https, it has a host).
    ///
    /// - Parameter url: The URL of a request about to load.
    /// - Returns: `true` when a loader handles it.
    public func canLoad(_ url: URL) -> Bool { loader(for: url) != nil }

    /// Loads the request with the loader for its scheme.
    ///
    /// - Parameters:
    ///   - request: What to fetch.
    ///   - receiver: Receives the response and the body.
    /// - Returns: The response, once the body is complete.
    /// - Throws: ``ManagedCacheError/invalidRequest(reason:)`` when no loader handles the scheme;
    ///   else what that loader throws.
    public func load(_ request: DataLoadRequest, receiver: any DataLoadReceiver) async throws -> DataLoadResponse {
        guard let loader = loader(for: request.url) else {
            throw ManagedCacheError.invalidRequest(reason: "no loader for scheme '\(request.url.scheme ?? "")'")
        }
        return try await loader.load(request, receiver: receiver)
    }

    private func loader(for url: URL) -> (any DataLoading)? {
        // The common case from the URL's string, without parsing it: `URL.scheme` and `URL.host`
        // were 7 % of a `manage` call that starts a load on Linux (`manage-latency` benchmark).
        if !customRoutesHTTP, Self.isHTTPWithPlainHost(url.absoluteString) { return http }
        guard let scheme = url.scheme?.lowercased() else { return nil }
        if let loader = custom[scheme] { return loader }
        switch scheme {
        case "http", "https": return url.host?.isEmpty == false ? http : nil
        case "file": return file
        default: return nil
        }
    }

    /// Whether `string` is `http://` or `https://` (in any case) followed by a host of letters,
    /// digits, dots and hyphens that ends the string or is followed by `/`, `:`, `?` or `#`: then
    /// `URL.host` is that host, not empty. `false` leaves the URL to the full parse (user info,
    /// an IPv6 literal, a percent-escaped host, no host).
    static func isHTTPWithPlainHost(_ string: String) -> Bool {
        var bytes = string.utf8.makeIterator()
        for expected in "http".utf8 {
            guard let byte = bytes.next(), byte | 0x20 == expected else { return false }
        }
        var next = bytes.next()
        if let byte = next, byte | 0x20 == UInt8(ascii: "s") { next = bytes.next() }
        guard next == UInt8(ascii: ":"), bytes.next() == UInt8(ascii: "/"), bytes.next() == UInt8(ascii: "/") else {
            return false
        }
        var hostLength = 0
        while let byte = bytes.next() {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"):
                hostLength += 1
            case UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "?"), UInt8(ascii: "#"):
                return hostLength > 0
            default:
                return false
            }
        }
        return hostLength > 0
    }
}

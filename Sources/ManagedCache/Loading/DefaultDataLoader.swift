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
        guard let scheme = url.scheme?.lowercased() else { return nil }
        if let loader = custom[scheme] { return loader }
        switch scheme {
        case "http", "https": return url.host?.isEmpty == false ? http : nil
        case "file": return file
        default: return nil
        }
    }
}

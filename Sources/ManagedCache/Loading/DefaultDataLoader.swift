import Foundation

/// Routes each URL to the loader for its scheme: `http`/`https` to a `URLSessionDataLoader`,
/// `file` to a `FileURLDataLoader`, and any scheme you add to your own `DataLoading`.
///
/// ```swift
/// let loader = DefaultDataLoader(custom: ["asset": MyAssetLoader()])
/// ```
public struct DefaultDataLoader: DataLoading {
    private let http: any DataLoading
    private let file: any DataLoading
    private let custom: [String: any DataLoading]

    /// Creates a router; `http` defaults to a new `URLSessionDataLoader`, `custom` maps extra
    /// lowercase schemes to their loaders (they take precedence over the built-in ones).
    public init(
        http: any DataLoading = URLSessionDataLoader(), file: any DataLoading = FileURLDataLoader(),
        custom: [String: any DataLoading] = [:]
    ) {
        self.http = http
        self.file = file
        self.custom = custom
    }

    public func canLoad(_ url: URL) -> Bool { loader(for: url) != nil }

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

import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The raw `URLSession` the network baselines use: configured like the manager's
/// `URLSessionDataLoader` (ephemeral, no URL cache, `maximumConnectionsPerHost` connections per host).
enum BaselineSession {
    /// A new session; invalidate it when done.
    static func make(maximumConnectionsPerHost: Int = 6) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = maximumConnectionsPerHost
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        return URLSession(configuration: configuration)
    }
}

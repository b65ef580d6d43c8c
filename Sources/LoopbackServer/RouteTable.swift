import Foundation
import ManagedCacheLocking

/// The server's routes: fixed responses and handlers by exact path, plus a fallback.
///
/// Lookup order for a request: a route registered with the full target (`/a?v=2`), then one
/// registered with the bare path (`/a`), then the fallback, then a `404`. Handlers run outside
/// the lock, so a slow handler never holds up other connections.
final class RouteTable: Sendable {
    private enum Route {
        case fixed(LoopbackResponse)
        case dynamic(@Sendable (LoopbackRequest) -> LoopbackResponse)
    }

    private struct State {
        var routes: [String: Route] = [:]
        var fallback: (@Sendable (LoopbackRequest) -> LoopbackResponse?)?
    }

    private let state = Lock(State())

    /// Answers `path` (optionally with `?query`) with a fixed response.
    func setRoute(_ path: String, _ response: LoopbackResponse) {
        state.withLock { $0.routes[path] = .fixed(response) }
    }

    /// Answers `path` (optionally with `?query`) by calling `handler` for each request.
    func setHandler(_ path: String, _ handler: @escaping @Sendable (LoopbackRequest) -> LoopbackResponse) {
        state.withLock { $0.routes[path] = .dynamic(handler) }
    }

    /// Answers requests no route matches; a `nil` from it means `404`.
    func setFallback(_ handler: (@Sendable (LoopbackRequest) -> LoopbackResponse?)?) {
        state.withLock { $0.fallback = handler }
    }

    /// Forgets every route and the fallback.
    func removeAll() {
        state.withLock { $0 = State() }
    }

    /// The response for `request`.
    func response(for request: LoopbackRequest) -> LoopbackResponse {
        let (route, fallback) = state.withLock { state -> (Route?, (@Sendable (LoopbackRequest) -> LoopbackResponse?)?) in
            let withQuery = request.query.isEmpty ? nil : state.routes[request.target]
            return (withQuery ?? state.routes[request.path], state.fallback)
        }
        switch route {
        case .fixed(let response):
            return response
        case .dynamic(let handler):
            return handler(request)
        case nil:
            return fallback?(request) ?? .status(404, body: Data("no route for \(request.path)\n".utf8))
        }
    }
}

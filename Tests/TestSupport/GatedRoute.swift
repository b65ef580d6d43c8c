import Foundation
import LoopbackServer
import ManagedCacheLocking

/// A loopback route that holds every request until the test opens it: a server slow enough to
/// keep a load running for as long as a test needs, without a timer deciding anything.
///
/// The server runs one thread per connection, so holding one request blocks only that
/// connection. The hold ends by itself only after `holdBound` seconds (ten times `waitBound`), so a
/// test that forgets to open it still ends. Not sooner: the gate's thread runs on time while the
/// test that holds it can wait its turn for minutes on a loaded machine under a sanitizer (a
/// run of the AddressSanitizer suite beside two builds took 250 s, and gates held for 60 s let
/// requests through before their tests looked).
///
/// ```swift
/// let gate = GatedRoute(server, path: "/slow", response: .ok(body))
/// manager.manage(user)
/// #expect(await waitUntil { gate.arrivals == 1 })   // the load is on the wire, and held
/// gate.open()
/// ```
public final class GatedRoute: Sendable {
    private struct State {
        var isOpen = false
        var arrivals = 0
    }

    private let state = Lock(State())

    /// Installs the gate as the handler of `path` on `server`; every request gets `response`
    /// once the gate is open.
    public init(_ server: LoopbackServer, path: String, response: LoopbackResponse) {
        // The server keeps the gate alive; the gate does not keep the server.
        server.setHandler(path) { [self] _ in
            state.withLock { $0.arrivals += 1 }
            waitUntilBlocking(timeout: GatedRoute.holdBound) { state.withLock { $0.isOpen } }
            return response
        }
    }

    /// The longest a request is held, in seconds.
    public static let holdBound = 10 * waitBound

    /// How many requests reached the route (held or answered).
    public var arrivals: Int { state.withLock { $0.arrivals } }

    /// Lets every held and later request through.
    public func open() { state.withLock { $0.isOpen = true } }
}

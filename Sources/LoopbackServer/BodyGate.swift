import ManagedCacheLocking

/// Splits a response body at chosen offsets and holds each piece after the first until the test
/// lets it go: a download that stops exactly where a test wants it to (after a JPEG scan, say)
/// for as long as the test needs, with no timer deciding anything.
///
/// ```swift
/// let gate = BodyGate(breaks: [300, 420])          // pieces 0..<300, 300..<420, 420...
/// server.setRoute("/p.jpg", .ok(jpeg).behaving(.gated(gate)))
/// // the client gets the first 300 bytes; then, piece by piece:
/// gate.release()
/// #expect(await waitUntil { gate.piecesSent == 2 })
/// ```
///
/// One gate serves one request at a time: a second request through it waits for the same
/// releases. A gate never released holds its connection until the server stops.
public final class BodyGate: Sendable, Equatable {
    private struct State {
        var released = 0
        var sent = 0
    }

    /// The offsets where pieces start (after the first), as given.
    public let breaks: [Int]
    private let state = Lock(State())

    /// A gate splitting bodies at `breaks` (offsets past the body's end are ignored).
    public init(breaks: [Int]) {
        self.breaks = breaks
    }

    /// Lets the next `count` held pieces go.
    public func release(_ count: Int = 1) {
        state.withLock { $0.released += max(0, count) }
    }

    /// Lets every piece go, now and later.
    public func releaseAll() {
        state.withLock { $0.released = Int.max / 2 }
    }

    /// How many pieces have been written to the socket (the first one included).
    public var piecesSent: Int { state.withLock { $0.sent } }

    /// Whether piece `index` (from 0) may be sent: the first always, the others once released.
    func maySend(piece index: Int) -> Bool {
        index == 0 || state.withLock { $0.released >= index }
    }

    /// Records that a piece was written.
    func didSend() {
        state.withLock { $0.sent += 1 }
    }

    /// The ranges of `count` body bytes the breaks cut out, in order.
    func pieces(ofLength count: Int) -> [Range<Int>] {
        var starts = [0]
        for offset in breaks.sorted() where offset > (starts.last ?? 0) && offset < count { starts.append(offset) }
        return starts.enumerated().map { index, start in
            start..<(index + 1 < starts.count ? starts[index + 1] : count)
        }
    }

    /// Gates are the same only when they are the same object.
    public static func == (lhs: BodyGate, rhs: BodyGate) -> Bool { lhs === rhs }
}

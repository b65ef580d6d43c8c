import Dispatch
import ManagedCacheLocking

/// The decoded frames of one animation, kept within a byte limit and shared by every view that
/// shows the image (each with its own playhead). Frames are decoded on demand, one at a time, on
/// the buffer's own serial queue (never on the thread that asks), and each frame is decoded once
/// however many views want it at the same time.
///
/// Asking never waits: `frame(at:)` returns the frame if it is held, or `nil` after starting its
/// decode; the view keeps its current frame and asks again at the next screen refresh. When a new
/// frame would go over the limit, the frames evicted first are those needed last, in playing
/// order from the frame needed next: after a view is handed frame `i`, the next needed is `i + 1`
/// and `i` itself is needed last (the view has it on screen; it plays again a loop later), so a
/// prefetched next frame replaces the frame just shown even when the buffer has room for a single
/// frame; a frame asked for and not held yet is the one needed next until it is handed out. This
/// is what a buffer smaller than the animation needs to avoid decoding every frame twice per loop
/// and to show each prefetched frame on time.
///
/// Generic over the frame type so the platform-neutral logic is tested on Linux; on Apple
/// platforms `Frame` is a `CGImage` made by ImageIO.
final class AnimationFrameBuffer<Frame: Sendable>: Sendable {
    /// A decoded frame and the bytes it occupies.
    struct Decoded: Sendable {
        var frame: Frame
        var byteCount: Int
    }

    private struct State {
        var frames: [Int: Decoded] = [:]
        var byteCount = 0
        var inFlight: Set<Int> = []
        /// The frame needed soonest: the one after the frame last handed out, or the frame last
        /// asked for while it is not held.
        var nextNeeded = 0
        var decodeCount = 0
    }

    /// How many frames the animation has.
    let frameCount: Int
    /// The most bytes of frames kept.
    let byteLimit: Int
    private let state = Lock(State())
    private let queue: DispatchQueue
    private let decode: @Sendable (Int) -> Decoded?

    /// - Parameters:
    ///   - frameCount: The animation's frames.
    ///   - byteLimit: The most bytes of decoded frames kept (`AnimationFrameBudget`).
    ///   - queue: Where frames are decoded, one at a time (made serial if it is not).
    ///   - decode: Decodes frame `index`, or returns `nil` when it cannot (the frame is then asked
    ///     for again later).
    init(frameCount: Int, byteLimit: Int, queue: DispatchQueue, decode: @escaping @Sendable (Int) -> Decoded?) {
        self.frameCount = frameCount
        self.byteLimit = byteLimit
        self.queue = DispatchQueue(label: "ManagedCacheUIKit.AnimationFrameBuffer", target: queue)
        self.decode = decode
    }

    /// The frame at `index` if it is held; otherwise `nil`, and its decode starts in the
    /// background (once, however many views ask).
    func frame(at index: Int) -> Frame? {
        guard (0..<frameCount).contains(index) else { return nil }
        let (frame, starts) = state.withLock { state -> (Frame?, Bool) in
            if let held = state.frames[index] {
                state.nextNeeded = (index + 1) % frameCount
                return (held.frame, false)
            }
            state.nextNeeded = index
            return (nil, state.inFlight.insert(index).inserted)
        }
        if starts { startDecode(index) }
        return frame
    }

    /// Starts decoding `index` in the background unless it is held or already being decoded (a
    /// view asks for the next frame ahead of time).
    func prefetch(_ index: Int) {
        guard (0..<frameCount).contains(index) else { return }
        let starts = state.withLock { state in
            state.frames[index] == nil && state.inFlight.insert(index).inserted
        }
        if starts { startDecode(index) }
    }

    /// Bytes of frames held now (never more than `byteLimit`, except for a single frame larger
    /// than the limit).
    var byteCount: Int { state.withLock { $0.byteCount } }

    /// The indices of the frames held now.
    var heldFrames: Set<Int> { state.withLock { Set($0.frames.keys) } }

    /// How many decodes have run (a frame evicted and decoded again counts twice).
    var decodeCount: Int { state.withLock { $0.decodeCount } }

    /// Whether a decode is running or waiting.
    var isDecoding: Bool { state.withLock { !$0.inFlight.isEmpty } }

    private func startDecode(_ index: Int) {
        queue.async { [self] in
            let decoded = decode(index)
            state.withLock { state in
                state.inFlight.remove(index)
                state.decodeCount += 1
                if let decoded { _insert(decoded, at: index, in: &state) }
            }
        }
    }

    /// Keeps `decoded` as frame `index`, evicting the frames needed last until it fits. The new
    /// frame itself is dropped if it is needed later than every frame held. Assumes the lock is held.
    private func _insert(_ decoded: Decoded, at index: Int, in state: inout State) {
        let anchor = state.nextNeeded
        func distance(_ frame: Int) -> Int { (frame - anchor + frameCount) % frameCount }
        while state.byteCount + decoded.byteCount > byteLimit, !state.frames.isEmpty {
            guard let victim = state.frames.keys.max(by: { distance($0) < distance($1) }) else { break }
            if distance(index) > distance(victim), state.byteCount > 0 { return }
            if let removed = state.frames.removeValue(forKey: victim) { state.byteCount -= removed.byteCount }
        }
        state.frames[index] = decoded
        state.byteCount += decoded.byteCount
    }
}

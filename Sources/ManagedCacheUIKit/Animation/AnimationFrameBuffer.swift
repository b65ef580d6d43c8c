import Dispatch
import ManagedCache
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
/// Under memory pressure the buffer gives frames back (`trim(_:)`, as `MemoryPressure.trim`
/// says): every live buffer is registered with `AnimationFrameBuffers`, which the process's
/// memory signals reach.
///
/// Generic over the frame type so the platform-neutral logic is tested on Linux; on Apple
/// platforms `Frame` is a `CGImage` made by ImageIO.
final class AnimationFrameBuffer<Frame: Sendable>: FrameBufferTrimming {
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
    ///   - registry: Where memory signals reach it. Default the process's.
    init(
        frameCount: Int, byteLimit: Int, queue: DispatchQueue, registry: AnimationFrameBuffers = .shared,
        decode: @escaping @Sendable (Int) -> Decoded?
    ) {
        self.frameCount = frameCount
        self.byteLimit = byteLimit
        self.queue = DispatchQueue(label: "ManagedCacheUIKit.AnimationFrameBuffer", target: queue)
        self.decode = decode
        registry.register(self)
    }

    /// Gives frames back: all of them (`.empty`), all but the one needed next (`.keepNextFrame`),
    /// or none (`.keepAll`). Views keep the frame they show; a frame dropped is decoded again
    /// when it is asked for.
    func trim(_ trim: MemoryTrim.FrameBufferTrim) {
        let dropped = state.withLock { state -> [Int: Decoded] in
            let kept: Int?
            switch trim {
            case .keepAll: return [:]
            case .keepNextFrame: kept = state.nextNeeded
            case .empty: kept = nil
            }
            var dropped = state.frames
            state.frames = [:]
            state.byteCount = 0
            if let kept, let frame = dropped.removeValue(forKey: kept) {
                state.frames[kept] = frame
                state.byteCount = frame.byteCount
            }
            return dropped
        }
        _ = dropped  // released here, outside the lock
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

/// A frame buffer that gives frames back under memory pressure.
protocol FrameBufferTrimming: AnyObject, Sendable {
    func trim(_ trim: MemoryTrim.FrameBufferTrim)
}

/// Every live animation frame buffer of the process (held weakly), trimmed on each memory signal
/// as `MemoryPressure.trim` says.
final class AnimationFrameBuffers: Sendable {
    /// The process's buffers, reached by its memory signals.
    static let shared = AnimationFrameBuffers(center: .shared)

    private struct Entry {
        weak var buffer: (any FrameBufferTrimming)?
    }

    private let buffers = Lock<[ObjectIdentifier: Entry]>([:])
    private let subscription = Lock<MemoryPressureSubscription?>(nil)

    /// Buffers trimmed on the pressures `center` delivers.
    init(center: MemoryPressureCenter) {
        let subscription = center.subscribe { [weak self] pressure in self?.trimAll(pressure.trim.frameBuffers) }
        self.subscription.withLock { $0 = subscription }
    }

    /// Trims `buffer` on every memory signal from now on, for as long as it lives.
    func register(_ buffer: any FrameBufferTrimming) {
        buffers.withLock { buffers in
            buffers = buffers.filter { $0.value.buffer != nil }
            buffers[ObjectIdentifier(buffer)] = Entry(buffer: buffer)
        }
    }

    /// The buffers alive now.
    var count: Int { buffers.withLock { $0.values.filter { $0.buffer != nil }.count } }

    /// Trims every live buffer (outside the registry's lock).
    func trimAll(_ trim: MemoryTrim.FrameBufferTrim) {
        let live = buffers.withLock { $0.values.compactMap(\.buffer) }
        for buffer in live { buffer.trim(trim) }
    }
}

import Dispatch
import ManagedCache
import TestSupport
import Testing

@testable import ManagedCacheUIKit

/// Memory signals reach the frame buffers of animations on screen and trim them as
/// `MemoryPressure.trim` says. A center and registry of the test's own: a pressure posted to the
/// process's center would trim the buffers of every other test running.
@Suite struct FrameBufferTrimTests {
    /// A buffer of six frames of 100 bytes with every frame decoded, frame 2 handed to a view
    /// (so frame 3 is the one needed next).
    private func filledBuffer(registry: AnimationFrameBuffers) async -> AnimationFrameBuffer<String> {
        let buffer = AnimationFrameBuffer<String>(frameCount: 6, byteLimit: 1000, queue: .global(), registry: registry) {
            AnimationFrameBuffer<String>.Decoded(frame: "frame \($0)", byteCount: 100)
        }
        for index in 0..<6 { buffer.prefetch(index) }
        #expect(await waitUntil { buffer.heldFrames.count == 6 && !buffer.isDecoding })
        #expect(buffer.frame(at: 2) == "frame 2")
        return buffer
    }

    @Test func aWarningKeepsOnlyTheNextFrameAndCriticalKeepsNone() async {
        let center = MemoryPressureCenter()
        let registry = AnimationFrameBuffers(center: center)
        let buffer = await filledBuffer(registry: registry)
        center.post(.warning)
        #expect(buffer.heldFrames == [3])
        #expect(buffer.byteCount == 100)
        center.post(.critical)
        #expect(buffer.heldFrames.isEmpty)
        #expect(buffer.byteCount == 0)
        // A trimmed frame is decoded again when asked for.
        #expect(buffer.frame(at: 4) == nil)
        #expect(await waitUntil { buffer.frame(at: 4) == "frame 4" })
    }

    @Test func movingToTheBackgroundEmptiesEveryBuffer() async {
        let center = MemoryPressureCenter()
        let registry = AnimationFrameBuffers(center: center)
        let first = await filledBuffer(registry: registry)
        let second = await filledBuffer(registry: registry)
        #expect(registry.count == 2)
        center.post(.background)
        #expect(first.heldFrames.isEmpty && second.heldFrames.isEmpty)
    }

    @Test func keepAllTrimsNothing() async {
        let buffer = await filledBuffer(registry: AnimationFrameBuffers(center: MemoryPressureCenter()))
        buffer.trim(.keepAll)
        #expect(buffer.heldFrames.count == 6)
    }

    @Test func theRegistryHoldsBuffersWeakly() async {
        let center = MemoryPressureCenter()
        let registry = AnimationFrameBuffers(center: center)
        do {
            let buffer = await filledBuffer(registry: registry)
            #expect(registry.count == 1)
            withExtendedLifetime(buffer) {}
        }
        // Freed once its last decode block has returned: the registry does not keep it.
        #expect(await waitUntil { registry.count == 0 })
        center.post(.critical)  // reaches no freed buffer
    }
}

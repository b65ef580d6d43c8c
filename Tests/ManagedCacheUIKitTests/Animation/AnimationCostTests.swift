import Foundation
import LoopbackServer
import ManagedCache
import ManagedCacheUIKit
import TestSupport
import Testing

/// An animated image's memory-cache cost counts its frame buffer: a list of GIFs
/// cannot grow the memory past the cache's limit.
@Suite struct AnimationCostTests {
    private func fixture(_ name: String) throws -> Data {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"))
        return try Data(contentsOf: url)
    }

    @Test func smallAnimationsKeepEveryFrameButTheFirst() throws {
        // 24 × 16 pixels, 4 frames: the bitmap (first frame) plus three buffered frames.
        let image = try ImageDecoder().decodeImage(fixture("timed.gif"))
        let frameBytes = 24 * 16 * 4
        #expect(image.decodedByteCount == frameBytes)
        #expect(image.frameBufferByteLimit == 3 * frameBytes)
        #expect(image.memoryCost == 4 * frameBytes)
        #expect(ImageDecoder().cost(of: image, byteCount: 1) == 4 * frameBytes)
    }

    @Test func aSmallLimitStillKeepsTwoFrames() throws {
        var decoder = ImageDecoder()
        decoder.animationBufferByteLimit = 100
        let image = try decoder.decodeImage(fixture("timed.gif"))
        #expect(image.frameBufferByteLimit == 2 * image.decodedByteCount)
        decoder.animationBufferByteLimit = 0
        #expect(try decoder.decodeImage(fixture("timed.gif")).frameBufferByteLimit == 2 * image.decodedByteCount)
    }

    @Test func stillImagesCostTheirBitmapOnly() throws {
        let image = try ImageDecoder().decodeImage(fixture("still.gif"))
        #expect(image.frameBufferByteLimit == 0)
        #expect(image.memoryCost == image.decodedByteCount)
    }

    @Test func theMemoryCacheChargesTheFrameBuffer() async throws {
        let server = try LoopbackServer()
        let body = try fixture("timed.png")
        server.setRoute("/timed.png", .ok(body, contentType: "image/png"))
        let manager = makeNetworkManager()
        let image = try await manager.image(for: server.url("/timed.png"))
        // 16 × 12 pixels, 3 frames.
        #expect(image.memoryCost == 3 * 16 * 12 * 4)
        #expect(manager.memoryCache.totalCost == image.memoryCost)
    }
}

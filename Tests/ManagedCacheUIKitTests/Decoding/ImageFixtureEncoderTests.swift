import Foundation
import ImageFixtures
import ManagedCacheUIKit
import Testing

@Suite struct ImageFixtureEncoderTests {
    @Test(arguments: [(1, 1), (3, 2), (64, 64), (300, 200), (512, 512)])
    func anEncodedPNGValidatesAndRoundTripsItsSize(_ size: (width: Int, height: Int)) throws {
        let data = ImageFixtureEncoder.png(width: size.width, height: size.height) { x, y in
            (UInt8(x & 0xFF), UInt8(y & 0xFF), 0x80, 0xFF)
        }
        #expect(ImageValidator.detectFormat(data) == .png)
        let info = try ImageValidator.validate(data)
        #expect(info == ImageInfo(format: .png, pixelWidth: size.width, pixelHeight: size.height))
    }

    @Test func anEncodedPNGCarriesExactlyThePixelsAskedFor() throws {
        let width = 300
        let height = 250  // over 65,535 bytes of scanlines, so several stored blocks
        func color(_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8, UInt8) {
            (UInt8(x % 251), UInt8(y % 241), UInt8((x * y) % 256), UInt8((x + y) % 256))
        }
        let png = PNGChunkList(ImageFixtureEncoder.png(width: width, height: height) { x, y in color(x, y) })
        let scanlines = try StoredDeflateReader.inflate(zlib: png.zlibStream)
        let rowLength = 1 + 4 * width
        try #require(scanlines.count == rowLength * height)
        for y in 0..<height {
            #expect(scanlines[y * rowLength] == 0, "row \(y) uses no filter")
            for x in 0..<width {
                let offset = y * rowLength + 1 + 4 * x
                let expected = color(x, y)
                let actual = (scanlines[offset], scanlines[offset + 1], scanlines[offset + 2], scanlines[offset + 3])
                guard actual == expected else {
                    Issue.record("pixel (\(x), \(y)) is \(actual), not \(expected)")
                    return
                }
            }
        }
    }

    @Test func thePixelClosureIsCalledOncePerPixelRowByRow() {
        var visited: [Int] = []
        _ = ImageFixtureEncoder.png(width: 3, height: 2) { x, y in
            visited.append(y * 3 + x)
            return (0, 0, 0, 0)
        }
        #expect(visited == Array(0..<6))
    }

    @Test func patternPNGsAreDeterministicAndDifferBySeed() throws {
        let first = ImageFixtureEncoder.patternPNG(width: 64, height: 64, seed: 1)
        #expect(first == ImageFixtureEncoder.patternPNG(width: 64, height: 64, seed: 1))
        let distinct = Set((0..<50).map { ImageFixtureEncoder.patternPNG(width: 16, height: 16, seed: $0) })
        #expect(distinct.count == 50)
        for seed in [Int.min, -1, 0, 12_345, Int.max] {
            let info = try ImageValidator.validate(ImageFixtureEncoder.patternPNG(width: 96, height: 40, seed: seed))
            #expect(info == ImageInfo(format: .png, pixelWidth: 96, pixelHeight: 40))
        }
    }
}

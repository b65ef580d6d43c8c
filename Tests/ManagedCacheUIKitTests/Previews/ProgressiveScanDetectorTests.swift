import Foundation
import ManagedCache
import Testing

@testable import ManagedCacheUIKit

/// Scan boundaries of the real progressive JPEG (Pillow, Fixtures/progressive.jpg) found from
/// partial bytes.
@Suite struct ProgressiveScanDetectorTests {
    /// Where the marker after each of the file's ten scans starts (the last one is EOI), as a
    /// separate marker walk (Python, when the fixture was made) found them.
    static let scanEnds = [295, 413, 472, 631, 769, 967, 990, 1074, 1213, 1474]

    static func fixture(_ name: String) throws -> Data {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"))
        return try Data(contentsOf: url)
    }

    @Test func aScanIsCompleteWhenTheMarkerAfterItArrives() throws {
        let data = try Self.fixture("progressive.jpg")
        var detector = ProgressiveScanDetector()
        // One byte at a time: the count goes up exactly when the marker's code byte arrives.
        for length in 1...data.count {
            detector.advance(over: data.prefix(length))
            let expected = Self.scanEnds.filter { $0 + 2 <= length }.count
            #expect(detector.completedScans == expected, "after \(length) bytes")
        }
        #expect(detector.kind == .progressive)
        #expect(detector.reachedEnd)
        #expect(!detector.isSearching)
        #expect(detector.pixelSize == PixelSize(width: 64, height: 48))
    }

    @Test func allAtOnceGivesTheSameAnswer() throws {
        var detector = ProgressiveScanDetector()
        detector.advance(over: try Self.fixture("progressive.jpg").prefix(1000))
        #expect(detector.completedScans == 7)  // scans 1 to 7 end by byte 992
        #expect(detector.isSearching)
    }

    @Test(arguments: ["baseline.jpg", "rotated.jpg", "rgba.png", "animated.gif", "lossy.webp"])
    func otherImagesEndTheSearchAtTheirHeader(_ name: String) throws {
        let data = try Self.fixture(name)
        var detector = ProgressiveScanDetector()
        detector.advance(over: data.prefix(400))
        #expect(detector.kind == .other)
        #expect(detector.completedScans == 0)
        #expect(!detector.isSearching)
    }

    @Test func theSearchWaitsForASegmentCutInTheMiddle() throws {
        let data = try Self.fixture("progressive.jpg")
        var detector = ProgressiveScanDetector()
        detector.advance(over: data.prefix(160))  // inside SOF2 (at 158)
        #expect(detector.kind == .unknown)
        #expect(detector.pixelSize == nil)
        detector.advance(over: data.prefix(200))
        #expect(detector.kind == .progressive)
        #expect(detector.pixelSize == PixelSize(width: 64, height: 48))
    }
}

import Foundation
import ManagedCache
import ManagedCacheUIKit
import Testing

/// `ImageDecoder`'s preview session on Linux: a stage per completed scan, previews
/// marked as such and carrying the complete scans so far as a whole file, nothing kept for other images.
@Suite struct ProgressivePreviewSessionTests {
    private let scanEnds = ProgressiveScanDetectorTests.scanEnds

    @Test func eachCompletedScanIsAStageAndTheEndFinishes() throws {
        let data = try ProgressiveScanDetectorTests.fixture("progressive.jpg")
        let session = try #require(ImageDecoder().makePreviewSession())
        #expect(session.makePreview() == nil)  // nothing complete yet
        // Chunks ending just after each scan's next marker: nine stages, then the end.
        var start = 0
        for (index, end) in scanEnds.enumerated() {
            let step = session.append(data[start..<(end + 2)])
            start = end + 2
            if index < scanEnds.count - 1 {
                #expect(step == .ready, "scan \(index + 1)")
                let preview = try #require(session.makePreview())
                #expect(preview.isPreview)
                #expect(preview.preview == ImagePreview(completedScans: index + 1, receivedBytes: end + 2))
                // The complete scans closed with EOI: a whole JPEG file, as coarse as its scans.
                let file = try #require(preview.encodedData)
                #expect(file == data.prefix(end) + [0xFF, 0xD9])
                let info = try ImageValidator.validate(file)
                #expect(info.format == .jpeg && info.pixelWidth == 64 && info.pixelHeight == 48)
                #expect(preview.pixelSize == PixelSize(width: 64, height: 48))
            } else {
                #expect(step == .finished)  // EOI: the image itself follows
            }
        }
    }

    @Test func aChunkWithinAScanChangesNothing() throws {
        let data = try ProgressiveScanDetectorTests.fixture("progressive.jpg")
        let session = try #require(ImageDecoder().makePreviewSession())
        #expect(session.append(data.prefix(250)) == .waiting)  // inside the first scan
        #expect(session.append(data[250..<300]) == .ready)
        #expect(session.append(data[300..<350]) == .waiting)
    }

    @Test(arguments: ["baseline.jpg", "rgba.png"])
    func otherImagesFinishAtOnce(_ name: String) throws {
        let data = try ProgressiveScanDetectorTests.fixture(name)
        let session = try #require(ImageDecoder().makePreviewSession())
        #expect(session.append(data) == .finished)
    }

    @Test func aFrameOverThePixelLimitMakesNoPreviews() throws {
        let data = try ProgressiveScanDetectorTests.fixture("progressive.jpg")
        let session = try #require(ImageDecoder(maximumPixelCount: 100).makePreviewSession())
        #expect(session.append(data.prefix(400)) == .finished)
    }

    @Test func previewsGoThroughTheFormatLikeTheImage() throws {
        let data = try ProgressiveScanDetectorTests.fixture("progressive.jpg")
        let format = ImageCacheFormat(name: "marked") { $0.addingTransformation("marked") }
        let session = try #require(ImageDecoder(format: format).makePreviewSession())
        #expect(session.append(data.prefix(500)) == .ready)
        let preview = try #require(session.makePreview())
        #expect(preview.transformations == ["marked"])
        #expect(preview.preview?.completedScans == 3)
    }
}

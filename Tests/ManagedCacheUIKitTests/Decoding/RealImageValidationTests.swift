import Foundation
import ManagedCacheUIKit
import Testing

@Suite struct RealImageValidationTests {
    @Test(arguments: RealImageFixture.all)
    func realEncoderOutputValidatesWithItsFormatSizeAndFrameCount(_ fixture: RealImageFixture) throws {
        let info = try ImageValidator.validate(fixture.data())
        #expect(info == fixture.expected)
        #expect(info.isAnimated == (fixture.expected.frameCount > 1))
    }

    @Test(arguments: RealImageFixture.all)
    func detectFormatRecognisesEachRealFile(_ fixture: RealImageFixture) throws {
        #expect(ImageValidator.detectFormat(try fixture.data()) == fixture.expected.format)
    }

    @Test(arguments: RealImageFixture.all)
    func aSliceOfLargerDataValidatesLikeTheFileItself(_ fixture: RealImageFixture) throws {
        // Data slices keep their parent's indices; the validator must not assume they start at 0.
        let padded = Data([0xAA, 0xBB, 0xCC]) + (try fixture.data()) + Data([0xDD])
        let slice = padded[3..<(padded.count - 1)]
        #expect(slice.startIndex == 3)
        #expect(try ImageValidator.validate(slice) == fixture.expected)
    }

    @Test(arguments: RealImageFixture.all)
    func harmlessTrailingBytesAfterTheEndAreTolerated(_ fixture: RealImageFixture) throws {
        // Cameras leave bytes after JPEG EOI, some servers after PNG IEND or the GIF trailer,
        // and bytes past a WebP's declared RIFF size are outside the image.
        let data = try fixture.data() + Data(repeating: 0, count: 16)
        #expect(try ImageValidator.validate(data) == fixture.expected)
    }
}

import Foundation
import ManagedCacheUIKit
import Testing

/// A photo stored sideways with an EXIF orientation (5–8) is planned, sized and
/// costed upright.
@Suite struct OrientationTests {
    @Test func aSidewaysPhotoIsUprightInSizeAndInItsResizePlan() throws {
        let data = try RealImageFixture.named("rotated.jpg")
        let info = try ImageValidator.validate(data)
        #expect(info.orientation == .right)
        #expect(info.orientedPixelSize == PixelSize(width: 48, height: 64))

        let image = try ImageDecoder().decodeImage(data)
        #expect(image.pixelSize == PixelSize(width: 48, height: 64))
        // A portrait target fits a portrait image without cropping it to landscape.
        let format = ImageCacheFormat(name: "portrait", size: PixelSize(width: 24, height: 32), scaleMode: .aspectFit)
        let plan = try #require(format.resizePlan(forSource: info.orientedPixelSize))
        #expect(plan.canvasSize == PixelSize(width: 24, height: 32))
    }

    @Test func everyOrientationSwapsExactlyWhenItTurnsAQuarter() {
        let stored = PixelSize(width: 4, height: 3)
        for orientation in ImageOrientation.allCases {
            let upright = orientation.orientedSize(of: stored)
            #expect(upright == (orientation.rawValue >= 5 ? PixelSize(width: 3, height: 4) : stored))
        }
    }

    @Test func aTruncatedOrGarbledEXIFBlockNeverBreaksValidation() throws {
        let data = try RealImageFixture.named("rotated.jpg")
        // Garble the EXIF segment (APP1) one byte at a time: the validator never reads outside it
        // (a trap would end the test run) and either still reports this 64×48 JPEG, with some
        // orientation, or throws its typed error.
        let bytes = [UInt8](data)
        let start = try #require((2..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xE1 })
        let length = Int(bytes[start + 2]) << 8 | Int(bytes[start + 3])
        var outcomes = (valid: 0, rejected: 0)
        for index in (start + 4)..<(start + 2 + length) {
            var damaged = data
            damaged[index] ^= 0xFF
            if let info = try? ImageValidator.validate(damaged) {
                #expect(info.format == .jpeg && info.pixelWidth == 64 && info.pixelHeight == 48)
                outcomes.valid += 1
            } else {
                outcomes.rejected += 1
            }
        }
        #expect(outcomes.valid + outcomes.rejected == length - 2)
    }
}

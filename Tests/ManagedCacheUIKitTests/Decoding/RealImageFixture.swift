import Foundation
import ManagedCacheUIKit
import Testing

/// An image file made by a real encoder (Pillow, see Fixtures/make_fixtures.py), with what the
/// validator must report for it.
struct RealImageFixture: Sendable, CustomTestStringConvertible {
    let fileName: String
    let expected: ImageInfo

    var testDescription: String { fileName }

    /// The file's bytes, loaded through the test bundle's resources.
    func data() throws -> Data {
        let url = try #require(
            Bundle.module.url(forResource: fileName, withExtension: nil, subdirectory: "Fixtures"),
            "Fixture \(fileName) is missing from the test bundle"
        )
        return try Data(contentsOf: url)
    }

    static let all: [RealImageFixture] = [
        RealImageFixture(fileName: "rgba.png", expected: ImageInfo(format: .png, pixelWidth: 37, pixelHeight: 23)),
        RealImageFixture(fileName: "palette.png", expected: ImageInfo(format: .png, pixelWidth: 40, pixelHeight: 30)),
        RealImageFixture(
            fileName: "animated.png",
            expected: ImageInfo(format: .png, pixelWidth: 16, pixelHeight: 12, frameCount: 3)
        ),
        RealImageFixture(fileName: "baseline.jpg", expected: ImageInfo(format: .jpeg, pixelWidth: 64, pixelHeight: 48)),
        RealImageFixture(fileName: "progressive.jpg", expected: ImageInfo(format: .jpeg, pixelWidth: 64, pixelHeight: 48)),
        RealImageFixture(
            fileName: "rotated.jpg",
            expected: ImageInfo(format: .jpeg, pixelWidth: 64, pixelHeight: 48, orientation: .right)
        ),
        RealImageFixture(fileName: "still.gif", expected: ImageInfo(format: .gif, pixelWidth: 32, pixelHeight: 24)),
        RealImageFixture(
            fileName: "animated.gif",
            expected: ImageInfo(format: .gif, pixelWidth: 24, pixelHeight: 16, frameCount: 3)
        ),
        RealImageFixture(fileName: "lossy.webp", expected: ImageInfo(format: .webp, pixelWidth: 48, pixelHeight: 32)),
        RealImageFixture(
            fileName: "lossy-alpha.webp",
            expected: ImageInfo(format: .webp, pixelWidth: 30, pixelHeight: 20)
        ),
        RealImageFixture(fileName: "lossless.webp", expected: ImageInfo(format: .webp, pixelWidth: 33, pixelHeight: 17)),
        RealImageFixture(
            fileName: "animated.webp",
            expected: ImageInfo(format: .webp, pixelWidth: 20, pixelHeight: 12, frameCount: 3)
        ),
    ]

    static func named(_ fileName: String) throws -> Data {
        let fixture = try #require(all.first { $0.fileName == fileName })
        return try fixture.data()
    }
}

/// Runs the validator and returns the typed error it threw, or `nil` if it accepted the bytes.
func validationError(_ data: Data) -> ImageValidationError? {
    do {
        _ = try ImageValidator.validate(data)
        return nil
    } catch {
        return error
    }
}

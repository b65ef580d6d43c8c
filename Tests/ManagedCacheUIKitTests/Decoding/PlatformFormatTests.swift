import Foundation
import ManagedCacheUIKit
import Testing

/// Formats the structural validators do not know (HEIC, AVIF, TIFF, …) are judged by
/// a platform decoder (ImageIO on Apple platforms); on Linux they are unknown. The decision and the
/// mapping from ImageIO's type identifiers are platform-neutral.
@Suite struct PlatformFormatTests {
    @Test func imageIOTypeIdentifiersMapToFormats() {
        #expect(ImageFormat(typeIdentifier: "public.heic") == .heic)
        #expect(ImageFormat(typeIdentifier: "public.heif") == .heic)
        #expect(ImageFormat(typeIdentifier: "public.avif") == .avif)
        #expect(ImageFormat(typeIdentifier: "public.tiff") == .tiff)
        #expect(ImageFormat(typeIdentifier: "public.jpeg") == .jpeg)
        #expect(ImageFormat(typeIdentifier: "org.webmproject.webp") == .webp)
        #expect(ImageFormat(typeIdentifier: "com.microsoft.bmp") == .other)
    }

    @Test func onlyTheFourKnownFormatsAreValidatedStructurally() {
        #expect([ImageFormat.png, .jpeg, .gif, .webp].allSatisfy { $0.isStructurallyValidated })
        #expect(![ImageFormat.heic, .avif, .tiff, .other].contains { $0.isStructurallyValidated })
    }

    @Test func aHEICFileIsUnknownToTheStructuralValidator() {
        // An ISO-BMFF `ftyp` box with the `heic` brand: what an iPhone photo starts with.
        var heic = Data([0, 0, 0, 24]) + Data("ftypheic".utf8) + Data([0, 0, 0, 0]) + Data("mif1heic".utf8)
        heic += Data(repeating: 0, count: 64)
        #expect(throws: ImageValidationError.unknownFormat) { try ImageValidator.validate(heic) }
        // So on Linux the default decoder rejects it with a typed error; on Apple platforms
        // `ImageIODecoding.inspect` hands such bytes to ImageIO instead.
        #expect(throws: ImageDecodingError.self) { try ImageDecoder().decodeImage(heic) }
    }
}

/// A resized bitmap keeps an opaque source opaque and an RGB source's colour space.
@Suite struct RedrawLayoutTests {
    @Test func opaqueStaysOpaqueAndRGBSpacesAreKept() {
        let opaqueP3 = RedrawLayout(sourceHasAlpha: false, sourceIsRGB: true)
        #expect(!opaqueP3.hasAlpha && opaqueP3.keepsColorSpace)
        let translucent = RedrawLayout(sourceHasAlpha: true, sourceIsRGB: true)
        #expect(translucent.hasAlpha)
        let grey = RedrawLayout(sourceHasAlpha: false, sourceIsRGB: false)
        #expect(!grey.keepsColorSpace)
    }
}

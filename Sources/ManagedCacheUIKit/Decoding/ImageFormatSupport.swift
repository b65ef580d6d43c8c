/// How bytes are inspected, from the format their signature names and the formats the platform's
/// decoder reads: the one place that decides between the package's own validators, the platform
/// decoder and a typed "unsupported format".
///
/// | signature | the platform decoder reads it | route |
/// | --- | --- | --- |
/// | PNG, JPEG, GIF, WebP | any | `structural` (the package's validators, everywhere) |
/// | AVIF, HEIC (their `ftyp` brands) | yes (ImageIO: HEIC from iOS 11, AVIF from iOS 16 / macOS 13) | `platformDecoder` |
/// | AVIF, HEIC | no (Linux; AVIF before iOS 16 / macOS 13) | `unsupported` → ``ImageDecodingError/unsupportedFormat(_:)`` |
/// | none | a platform decoder exists | `platformDecoder` (it may read TIFF, BMP, …; it judges the bytes) |
/// | none | no platform decoder (Linux) | `unknown` → ``ImageValidationError/unknownFormat`` |
enum ImageFormatSupport {
    /// Where bytes go.
    enum Route: Sendable, Equatable {
        /// The package's structural validator of the format.
        case structural(ImageFormat)
        /// The platform's decoder (ImageIO), which checks the bytes as it reads them.
        case platformDecoder
        /// A format recognised by its signature that nothing here can decode.
        case unsupported(ImageFormat)
        /// No known signature and no platform decoder to ask.
        case unknown
    }

    /// The route of bytes whose signature names `detected` (`nil`: none), where the platform's
    /// decoder reads `platformReads` (empty: there is none) and `hasPlatformDecoder` says whether
    /// there is one at all.
    static func route(for detected: ImageFormat?, platformReads: Set<ImageFormat>, hasPlatformDecoder: Bool) -> Route {
        guard let detected else { return hasPlatformDecoder ? .platformDecoder : .unknown }
        if detected.isStructurallyValidated { return .structural(detected) }
        return hasPlatformDecoder && platformReads.contains(detected) ? .platformDecoder : .unsupported(detected)
    }
}

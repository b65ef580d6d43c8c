import Foundation

/// Recognises image formats and checks image bytes structurally, with no platform decoder.
///
/// On Linux, Foundation cannot decode images, and a response body cut short without a
/// Content-Length still arrives as a "complete" download. `validate(_:)` walks the container
/// structure of PNG, JPEG, GIF and WebP far enough to reject truncated or corrupt bytes with a
/// typed error before anything caches them; it does not decompress pixel data.
///
/// ```swift
/// let body = Data([0x89, 0x50, 0x4E, 0x47])  // the start of a PNG, cut short
/// do {
///     let info = try ImageValidator.validate(body)
///     print(info.format, info.pixelWidth, info.pixelHeight)
/// } catch {
///     print("Rejected image: \(error)")  // truncated(png)
/// }
/// ```
public enum ImageValidator {
    /// The format whose signature ("magic bytes") `data` starts with, or `nil` if none does:
    /// PNG, JPEG, GIF and WebP by their first 12 bytes at most, AVIF and HEIC/HEIF by the brands
    /// of their leading `ftyp` box (its first 56 bytes at most). Checks nothing else.
    ///
    /// - Parameter data: Bytes that may be an image.
    /// - Returns: PNG, JPEG, GIF, WebP, AVIF or HEIC, or `nil`.
    public static func detectFormat(_ data: Data) -> ImageFormat? {
        let head = [UInt8](data.prefix(max(ImageSignature.longestLength, ISOBaseMediaBrands.headLength)))
        if let signature = ImageSignature.all.first(where: { $0.isMatched(by: head) }) { return signature.format }
        return ISOBaseMediaBrands.recognise(head)?.format
    }

    /// Checks that `data` is a complete, structurally sound PNG, JPEG, GIF or WebP image and
    /// returns its format, size and frame count. AVIF and HEIC are not validated here (only a
    /// platform decoder reads them): their bytes throw `.unknownFormat`.
    ///
    /// - Parameter data: Bytes that should be a complete image.
    /// - Returns: The format, stored pixel size, frame count and EXIF orientation.
    /// - Throws: `ImageValidationError` saying why the bytes were rejected: `.empty`,
    ///   `.unknownFormat`, `.truncated` (also for a lone prefix of a signature),
    ///   `.checksumMismatch`, `.missingEndMarker`, `.malformed` or `.invalidDimensions`.
    public static func validate(_ data: Data) throws(ImageValidationError) -> ImageInfo {
        guard !data.isEmpty else { throw .empty }
        guard let format = detectFormat(data) else {
            let head = [UInt8](data.prefix(ImageSignature.longestLength))
            if let started = ImageSignature.all.first(where: { $0.isStarted(by: head) }) {
                throw .truncated(started.format)
            }
            throw .unknownFormat
        }
        let outcome = data.withUnsafeBytes { buffer in
            Result { () throws(ImageValidationError) -> ImageInfo in
                let reader = ImageByteReader(bytes: buffer, format: format)
                switch format {
                case .png: return try PNGStructureValidator.validate(reader)
                case .jpeg: return try JPEGStructureValidator.validate(reader)
                case .gif: return try GIFStructureValidator.validate(reader)
                case .webp: return try WebPStructureValidator.validate(reader)
                case .heic, .avif, .tiff, .other: throw .unknownFormat  // no structural validator
                }
            }
        }
        return try outcome.get()
    }
}

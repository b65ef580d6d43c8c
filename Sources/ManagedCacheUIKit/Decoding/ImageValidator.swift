import Foundation

/// Recognises image formats and checks image bytes structurally, with no platform decoder.
///
/// On Linux, Foundation cannot decode images, and a response body cut short without a
/// Content-Length still arrives as a "complete" download. `validate(_:)` walks the container
/// structure of PNG, JPEG, GIF and WebP far enough to reject truncated or corrupt bytes with a
/// typed error before anything caches them; it does not decompress pixel data.
///
/// ```swift
/// do {
///     let info = try ImageValidator.validate(body)
///     print(info.format, info.pixelWidth, info.pixelHeight)
/// } catch {
///     logger.warning("Rejected image: \(error)")  // e.g. "The JPEG data never reaches its end-of-image marker (FFD9)…"
/// }
/// ```
public enum ImageValidator {
    /// The format whose signature ("magic bytes") `data` starts with, or `nil` if none does.
    /// Looks at the first 12 bytes at most and checks nothing else.
    public static func detectFormat(_ data: Data) -> ImageFormat? {
        let head = [UInt8](data.prefix(ImageSignature.longestLength))
        return ImageSignature.all.first { $0.isMatched(by: head) }?.format
    }

    /// Checks that `data` is a complete, structurally sound image and returns its format, size
    /// and frame count.
    ///
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
                }
            }
        }
        return try outcome.get()
    }
}

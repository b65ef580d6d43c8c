/// Why bytes were rejected as an image. Every case names the format it was judged against and
/// its `description` reads well in a log line.
public enum ImageValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// There were no bytes at all.
    case empty
    /// The bytes do not start with the signature of any supported format.
    case unknownFormat
    /// The bytes end in the middle of a structure (a header, a chunk, a segment or a block):
    /// the usual sign of a download cut short.
    case truncated(ImageFormat)
    /// A chunk's stored CRC-32 does not match its contents (PNG): the bytes were corrupted.
    case checksumMismatch(ImageFormat, chunk: String)
    /// The image data is complete up to a structure boundary but the format's end marker
    /// (PNG IEND, JPEG EOI, GIF trailer) never comes: also the sign of a cut-short download.
    case missingEndMarker(ImageFormat)
    /// The structure breaks a rule of the format's specification; `reason` says which.
    case malformed(ImageFormat, reason: String)
    /// The image declares a width or height of zero, or one too large for the format.
    case invalidDimensions(ImageFormat)

    /// A sentence explaining the rejection, for users' logs.
    public var description: String {
        switch self {
        case .empty:
            "The image data is empty."
        case .unknownFormat:
            "The data does not start with a PNG, JPEG, GIF or WebP signature."
        case .truncated(let format):
            "The \(format.displayName) data ends in the middle of its structure; it was probably cut short."
        case .checksumMismatch(let format, let chunk):
            "The \(format.displayName) chunk \(chunk) fails its CRC-32 check; the data is corrupt."
        case .missingEndMarker(let format):
            "The \(format.displayName) data never reaches its \(Self.endMarkerName(format)); it was probably cut short."
        case .malformed(let format, let reason):
            "The \(format.displayName) data is malformed: \(reason)."
        case .invalidDimensions(let format):
            "The \(format.displayName) image declares a zero or out-of-range width or height."
        }
    }

    private static func endMarkerName(_ format: ImageFormat) -> String {
        switch format {
        case .png: "IEND chunk"
        case .jpeg: "end-of-image marker (FFD9)"
        case .gif: "trailer (3B)"
        case .webp: "declared RIFF size"
        case .heic, .avif, .tiff, .other: "end of the data"
        }
    }
}

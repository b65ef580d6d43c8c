/// The image container formats the package can recognise and validate without a platform decoder.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    /// Portable Network Graphics (ISO/IEC 15948), including animated PNG.
    case png
    /// JPEG interchange format (ITU T.81 with JFIF or Exif wrappers), baseline or progressive.
    case jpeg
    /// Graphics Interchange Format, versions 87a and 89a, still or animated.
    case gif
    /// WebP in its RIFF container: lossy (VP8), lossless (VP8L) or extended (VP8X), possibly animated.
    case webp

    /// The format's usual upper-case name, as it appears in error messages.
    var displayName: String {
        switch self {
        case .png: "PNG"
        case .jpeg: "JPEG"
        case .gif: "GIF"
        case .webp: "WebP"
        }
    }
}

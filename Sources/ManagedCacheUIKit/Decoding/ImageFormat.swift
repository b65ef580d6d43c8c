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
    /// HEIC/HEIF. Recognised by a platform decoder (ImageIO), not structurally validated.
    case heic
    /// AVIF. Recognised by a platform decoder (ImageIO, iOS 16+), not structurally validated.
    case avif
    /// TIFF. Recognised by a platform decoder (ImageIO), not structurally validated.
    case tiff
    /// Any other format a platform decoder decoded completely (BMP, ICO, …).
    case other

    /// Whether the package validates this format's structure itself (PNG, JPEG, GIF, WebP). The
    /// others are accepted only where a platform decoder reads them completely (Apple platforms).
    public var isStructurallyValidated: Bool {
        switch self {
        case .png, .jpeg, .gif, .webp: true
        case .heic, .avif, .tiff, .other: false
        }
    }

    /// The format of a Uniform Type Identifier as ImageIO reports it (`CGImageSourceGetType`):
    /// `public.heic` → `.heic`, `public.avif` → `.avif`, …; an identifier of no listed format is
    /// `.other`.
    ///
    /// - Parameter typeIdentifier: A Uniform Type Identifier such as `public.heic`.
    public init(typeIdentifier: String) {
        switch typeIdentifier {
        case "public.png": self = .png
        case "public.jpeg": self = .jpeg
        case "com.compuserve.gif": self = .gif
        case "org.webmproject.webp", "public.webp": self = .webp
        case "public.heic", "public.heif", "public.heics": self = .heic
        case "public.avif", "public.avis": self = .avif
        case "public.tiff": self = .tiff
        default: self = .other
        }
    }

    /// The format's usual upper-case name, as it appears in error messages.
    var displayName: String {
        switch self {
        case .png: "PNG"
        case .jpeg: "JPEG"
        case .gif: "GIF"
        case .webp: "WebP"
        case .heic: "HEIC"
        case .avif: "AVIF"
        case .tiff: "TIFF"
        case .other: "image"
        }
    }
}

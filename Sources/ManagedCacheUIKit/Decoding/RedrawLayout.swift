/// How a resized bitmap is laid out, from what the source bitmap is (issue 11.7): the decision
/// `ImageIODecoding.resize` applies, platform-neutral so that it is tested on Linux.
///
/// - An opaque source stays opaque (`noneSkipLast`: 4 bytes a pixel, no alpha to premultiply or
///   composite, and its variant is stored as JPEG, not PNG).
/// - A source with alpha is drawn premultiplied (`premultipliedLast`), as Core Graphics requires
///   for RGBA bitmap contexts.
/// - The source's colour space is kept when a bitmap context can draw into it (an RGB space:
///   sRGB, Display P3, extended ranges), so wide-colour photos keep their colours; anything else
///   (grey, CMYK, indexed) is drawn into sRGB.
public struct RedrawLayout: Sendable, Hashable {
    /// Whether the redrawn bitmap has an alpha channel.
    public let hasAlpha: Bool
    /// Whether the source's colour space is kept (else sRGB).
    public let keepsColorSpace: Bool

    /// Decides the layout for a source bitmap.
    ///
    /// - Parameters:
    ///   - sourceHasAlpha: Whether the source has an alpha channel.
    ///   - sourceIsRGB: Whether the source's colour space is an RGB space a bitmap context can draw into.
    public init(sourceHasAlpha: Bool, sourceIsRGB: Bool) {
        hasAlpha = sourceHasAlpha
        keepsColorSpace = sourceIsRGB
    }
}

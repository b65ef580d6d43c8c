/// How a redrawn bitmap is laid out, from what the source bitmap is: the decision every Apple
/// redraw applies (a format's resize, a processor's redraw, the upright copy drawn before a
/// variant is encoded), platform-neutral so that it is tested on Linux.
///
/// - An opaque source stays opaque (no alpha to premultiply or composite, and its variant is
///   stored as JPEG, not PNG).
/// - A source with alpha is drawn premultiplied, as Core Graphics requires for RGBA bitmap contexts.
/// - **Precision is kept.** The components are the source's, never fewer bits: 8-bit sources are
///   redrawn in 8 bits; 16-bit integer sources (16-bit PNGs, 10- and 12-bit HEIF decoded to 16
///   bits) in 16-bit integers; float sources (extended-range images, such as those an app draws
///   with an extended-range renderer) in 16-bit floats, then 32-bit floats if a context refuses
///   half floats. Float components keep extended-range values (below 0 and above 1).
/// - **The colour space is kept** when it is RGB (sRGB, Display P3, extended and linear ranges),
///   so wide-colour photos keep their colours; anything else (grey, CMYK, indexed) is drawn into
///   sRGB, or extended sRGB for float sources, so nothing outside sRGB is clipped.
/// - Only when Core Graphics accepts none of these is the image drawn in 8-bit sRGB, the format
///   every context accepts: precision beyond 8 bits and colours outside sRGB are then lost.
///   ``attempts`` lists what is tried, in order.
///
/// The blur works in 8 bits whatever the source (vImage's ARGB8888 box convolution), and images
/// decoded from bytes are what ImageIO makes of them (integer components; ImageIO makes floats
/// only when asked with `kCGImageSourceShouldAllowFloat`, which the decoder does not ask).
public struct RedrawLayout: Sendable, Hashable {
    /// How each colour component of a bitmap is stored.
    public enum Components: Sendable, Hashable {
        /// 8-bit unsigned integers (32 bits a pixel).
        case uint8
        /// 16-bit unsigned integers (64 bits a pixel).
        case uint16
        /// 16-bit floats (64 bits a pixel): extended range, 11 significant bits.
        case float16
        /// 32-bit floats (128 bits a pixel).
        case float32

        /// Bits of each component: 8, 16 or 32.
        public var bitsPerComponent: Int {
            switch self {
            case .uint8: 8
            case .uint16, .float16: 16
            case .float32: 32
            }
        }

        /// Whether the components are floating-point values.
        public var isFloat: Bool { self == .float16 || self == .float32 }
    }

    /// The colour space a redraw draws into.
    public enum ColorSpace: Sendable, Hashable {
        /// The source's own colour space.
        case source
        /// sRGB.
        case sRGB
        /// Extended-range sRGB (float components only).
        case extendedSRGB
    }

    /// One bitmap format a redraw tries.
    public struct Attempt: Sendable, Hashable {
        /// How the components are stored.
        public let components: Components
        /// The colour space drawn into.
        public let colorSpace: ColorSpace
    }

    /// Whether the redrawn bitmap has an alpha channel.
    public let hasAlpha: Bool
    /// Whether the source's colour space is tried first (else sRGB, or extended sRGB for floats).
    public let keepsColorSpace: Bool
    /// The components asked for first: the source's precision.
    public let components: Components
    /// The formats tried, in order; the first one Core Graphics accepts is drawn into. The last
    /// is always 8-bit sRGB.
    public let attempts: [Attempt]

    /// Decides the layout for a source bitmap.
    ///
    /// - Parameters:
    ///   - sourceHasAlpha: Whether the source has an alpha channel (or the redraw makes transparency).
    ///   - sourceIsRGB: Whether the source's colour space is an RGB space a bitmap context can draw into.
    ///   - sourceBitsPerComponent: The source's bits per colour component. Default 8.
    ///   - sourceHasFloatComponents: Whether the source's components are floats. Default `false`.
    public init(sourceHasAlpha: Bool, sourceIsRGB: Bool, sourceBitsPerComponent: Int = 8, sourceHasFloatComponents: Bool = false) {
        hasAlpha = sourceHasAlpha
        keepsColorSpace = sourceIsRGB
        let preferred: [Components]
        if sourceHasFloatComponents {
            preferred = sourceBitsPerComponent <= 16 ? [.float16, .float32] : [.float32]
        } else {
            preferred = sourceBitsPerComponent > 8 ? [.uint16] : [.uint8]
        }
        components = preferred[0]
        let fallbackSpace: ColorSpace = sourceHasFloatComponents ? .extendedSRGB : .sRGB
        let spaces: [ColorSpace] = sourceIsRGB ? [.source, fallbackSpace] : [fallbackSpace]
        var attempts: [Attempt] = []
        for components in preferred {
            for space in spaces { attempts.append(Attempt(components: components, colorSpace: space)) }
        }
        let lastResort = Attempt(components: .uint8, colorSpace: .sRGB)
        if attempts.last != lastResort { attempts.append(lastResort) }
        self.attempts = attempts
    }
}

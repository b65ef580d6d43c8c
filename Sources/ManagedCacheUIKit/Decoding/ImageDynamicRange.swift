/// The dynamic range images are decoded in, on Apple platforms (`ImageIODecoding(dynamicRange:)`).
///
/// HDR decoding is an opt-in: an HDR photo (a gain map, PQ or HLG) decoded in high dynamic range
/// has 16-bit floating-point components, twice the memory of the 8-bit standard decode (the
/// memory cache and the frame budget count the bitmap's real bytes), and only an image view set
/// to show HDR (`UIImageView.preferredImageDynamicRange`, iOS 17) shows the extra range.
public enum ImageDynamicRange: String, Sendable, Hashable, CaseIterable {
    /// Standard dynamic range, HDR images tone-mapped to it. The default.
    case standard
    /// High dynamic range where the system decodes it (iOS 17, macOS 14, tvOS 17, watchOS 10,
    /// visionOS 1 and later: ImageIO's `kCGImageSourceDecodeToHDR`); standard elsewhere.
    case high

    /// What ImageIO is asked for (`kCGImageSourceDecodeRequest`).
    enum DecodeRequest: Sendable, Equatable {
        /// `kCGImageSourceDecodeToHDR`.
        case toHDR
        /// `kCGImageSourceDecodeToSDR`.
        case toSDR
    }

    /// The decode request for this range, where the system takes decode requests
    /// (`systemTakesDecodeRequests`); `nil` where it does not (it then decodes standard range).
    /// Standard range is asked for explicitly, so an HDR image never decodes in extended range
    /// unless the app opted in.
    func decodeRequest(systemTakesDecodeRequests: Bool) -> DecodeRequest? {
        guard systemTakesDecodeRequests else { return nil }
        switch self {
        case .standard: return .toSDR
        case .high: return .toHDR
        }
    }
}

import ManagedCache

/// A named way of caching an image: a target size, a scale mode and transforms (Haneke's
/// `HNKCacheFormat`). Each format of a URL is its own cached variant, keyed by URL (or oid) plus
/// the format's name, and every format of one URL shares a single download.
///
/// ```swift
/// let thumbnail = ImageCacheFormat(name: "thumbnail", size: PixelSize(width: 160, height: 160),
///                                  scaleMode: .aspectFill, compressionQuality: 0.6) { image in
///     image.addingTransformation("rounded")   // e.g. mask the corners on Apple platforms
/// }
/// imageView.format = thumbnail
/// ```
///
/// What happens to an image of a format, once per URL and format (never per view):
/// 1. it is decoded, downsampled on Apple platforms to just cover `size`;
/// 2. `preTransform` runs;
/// 3. it is fitted to `size` with `scaleMode` (Apple platforms; Linux has no pixels to resize);
/// 4. `postTransform` runs;
/// 5. the result goes to the memory cache under the format's key and to every user of the format.
///
/// A format is identified by its name: two formats with the same name must be configured alike,
/// or they will share each other's cached images.
public struct ImageCacheFormat: Sendable {
    /// A transform applied to every image of a format before it is cached.
    public typealias Transform = @Sendable (DecodedImage) -> DecodedImage

    /// The name that identifies the format and its cached variants.
    public let name: String
    /// The size images are fitted to, in pixels; `nil` keeps the decoded size.
    public var size: PixelSize?
    /// How images are fitted to `size`. Default `.aspectFill`.
    public var scaleMode: ImageScaleMode
    /// Whether images smaller than `size` are scaled up. Default `false`: upscaling costs memory
    /// and shows no more detail.
    public var allowsUpscaling: Bool
    /// JPEG quality (0–1) for stored variants. Default 0.8.
    public var compressionQuality: Double
    /// The disk space this format's stored variants may use, in bytes. Default 10 MiB.
    /// Read by a file cache that stores variants (see `ImageDecoder.storesVariant`).
    public var diskCapacity: Int
    /// Which stored variants are loaded into memory when the format is first used. Default `.none`.
    /// Read by a file cache that stores variants.
    public var preloadPolicy: ImagePreloadPolicy
    /// Whether the original download stays in the file cache once a variant of it is stored.
    /// Default `true`; `false` keeps only the variant (saves disk, but a new format of the same
    /// URL downloads it again).
    public var keepsOriginal: Bool
    /// Runs on the decoded image before it is fitted to `size`. Default `nil`.
    public var preTransform: Transform?
    /// Runs on the fitted image before it is cached (rounded corners, masks, filters). Default `nil`.
    public var postTransform: Transform?

    /// Creates a format; every parameter but `name` has the default listed on its property.
    public init(
        name: String, size: PixelSize? = nil, scaleMode: ImageScaleMode = .aspectFill,
        allowsUpscaling: Bool = false, compressionQuality: Double = 0.8, diskCapacity: Int = 10 << 20,
        preloadPolicy: ImagePreloadPolicy = .none, keepsOriginal: Bool = true,
        preTransform: Transform? = nil, postTransform: Transform? = nil
    ) {
        self.name = name
        self.size = size
        self.scaleMode = scaleMode
        self.allowsUpscaling = allowsUpscaling
        self.compressionQuality = compressionQuality
        self.diskCapacity = diskCapacity
        self.preloadPolicy = preloadPolicy
        self.keepsOriginal = keepsOriginal
        self.preTransform = preTransform
        self.postTransform = postTransform
    }

    /// The variant part of the cache key of this format's images: "image/<name>".
    public var variantIdentifier: String { "\(ImageCacheFormat.originalIdentifier)/\(name)" }

    /// The variant identifier of images decoded with no format: "image".
    public static let originalIdentifier = "image"

    /// How an image of `source` pixels is fitted to this format, or `nil` when the format has no size.
    public func resizePlan(forSource source: PixelSize) -> ImageResizePlan? {
        guard let size else { return nil }
        return ImageResizePlan(source: source, target: size, scaleMode: scaleMode, allowsUpscaling: allowsUpscaling)
    }

    /// The format an image view uses when it is given none: its own size in pixels and scale mode,
    /// named after them ("view-320×240-aspectFill") so views of one size share their variants.
    /// Haneke's per-view default format; upscaling is allowed, as Haneke's is.
    public static func viewFormat(pixelSize: PixelSize, scaleMode: ImageScaleMode) -> ImageCacheFormat {
        ImageCacheFormat(name: "view-\(pixelSize)-\(scaleMode.rawValue)", size: pixelSize, scaleMode: scaleMode,
                         allowsUpscaling: true)
    }
}

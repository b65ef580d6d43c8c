import ManagedCache

/// A named way of caching an image: a target size, a scale mode and processors (Haneke's
/// `HNKCacheFormat`). Each format of a URL is its own cached variant, keyed by URL (or oid) plus
/// the format's name and its processors' identifiers, and every format of one URL shares a single
/// download.
///
/// ```swift
/// let avatar = ImageCacheFormat(
///     name: "avatar", size: PixelSize(width: 160, height: 160), scaleMode: .aspectFill,
///     processors: [CircleImageProcessor()])
/// let view = ManagedImageView()
/// view.format = avatar
/// ```
///
/// Prefer `processors` to Haneke's transform closures, which are kept for source compatibility: a
/// trailing closure is the `postTransform` (run after the image is fitted to `size`); pass
/// `preTransform:` by name for a closure that runs before.
///
/// What happens to an image of a format, once per URL and format (never per view):
/// 1. it is decoded, downsampled on Apple platforms to just cover `size`;
/// 2. it is fitted to `size` with `scaleMode` (Apple platforms; Linux has no pixels to resize);
/// 3. `processors` run, in order (see `ImageProcessor`);
/// 4. the result goes to the memory cache under the format's key and to every user of the format,
///    and, where the backend can encode (Apple platforms) and `storesVariantInFileCache` allows, to
///    the file cache under the same key, so later runs skip the download and the processing.
///
/// A format is identified by its name and its processors: two formats with the same name and
/// processors must be configured alike, or they will share each other's cached images.
public struct ImageCacheFormat: Sendable {
    /// A transform applied to every image of a format before it is cached (Haneke's pre- and
    /// post-transform blocks), now a `ClosureImageProcessor`.
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
    /// Whether the processed variant is kept in the file cache (where the backend can encode it:
    /// Apple platforms), or in memory only. Default `true`.
    public var storesVariantInFileCache: Bool
    /// What is done to every image of the format after it is fitted to `size`, in order. Part of
    /// the format's variant key. Default none.
    public var processors: [any ImageProcessor]

    /// Haneke's pre-transform, run on the decoded image before it is fitted to `size`.
    private var beforeFitting: Transform?
    /// Haneke's post-transform, run on the fitted image before `processors`.
    private var afterFitting: Transform?

    /// Creates a format; every parameter but `name` has a default.
    ///
    /// - Parameters:
    ///   - name: The name that identifies the format and its cached variants.
    ///   - size: The size images are fitted to, in pixels. Default `nil`: the decoded size.
    ///   - scaleMode: How images are fitted to `size`. Default ``ImageScaleMode/aspectFill``.
    ///   - allowsUpscaling: Whether smaller images are scaled up. Default `false`.
    ///   - compressionQuality: JPEG quality (0–1) of stored variants. Default 0.8.
    ///   - diskCapacity: Disk space for the format's stored variants, in bytes. Default 10 MiB.
    ///   - preloadPolicy: Which stored variants are loaded when the format is first used. Default `.none`.
    ///   - keepsOriginal: Whether the original download stays in the file cache beside the variant.
    ///     Default `true`.
    ///   - storesVariantInFileCache: Whether the processed variant is kept in the file cache (where
    ///     the backend can encode it: Apple platforms) or in memory only. Default `true`.
    ///   - processors: What is done to every image after it is fitted to `size`, in order; their
    ///     identifiers are part of the variant key. Default none.
    public init(
        name: String, size: PixelSize? = nil, scaleMode: ImageScaleMode = .aspectFill,
        allowsUpscaling: Bool = false, compressionQuality: Double = 0.8, diskCapacity: Int = 10 << 20,
        preloadPolicy: ImagePreloadPolicy = .none, keepsOriginal: Bool = true, storesVariantInFileCache: Bool = true,
        processors: [any ImageProcessor] = []
    ) {
        self.name = name
        self.size = size
        self.scaleMode = scaleMode
        self.allowsUpscaling = allowsUpscaling
        self.compressionQuality = compressionQuality
        self.diskCapacity = diskCapacity
        self.preloadPolicy = preloadPolicy
        self.keepsOriginal = keepsOriginal
        self.storesVariantInFileCache = storesVariantInFileCache
        self.processors = processors
    }

    /// Creates a format with Haneke's transform closures (kept for source compatibility; prefer
    /// `processors`): `preTransform` runs before the image is fitted to `size`, `postTransform`
    /// after, before `processors`. They run as `ClosureImageProcessor`s; closures have no
    /// identifier of their own, so the format's name stands for them in the key.
    ///
    /// - Parameters:
    ///   - name: The name that identifies the format and its cached variants.
    ///   - size: The size images are fitted to, in pixels. Default `nil`: the decoded size.
    ///   - scaleMode: How images are fitted to `size`. Default ``ImageScaleMode/aspectFill``.
    ///   - allowsUpscaling: Whether smaller images are scaled up. Default `false`.
    ///   - compressionQuality: JPEG quality (0–1) of stored variants. Default 0.8.
    ///   - diskCapacity: Disk space for the format's stored variants, in bytes. Default 10 MiB.
    ///   - preloadPolicy: Which stored variants are loaded when the format is first used. Default `.none`.
    ///   - keepsOriginal: Whether the original download stays in the file cache beside the variant.
    ///     Default `true`.
    ///   - preTransform: Runs on the decoded image before it is fitted to `size`; `nil` for none.
    ///   - postTransform: Runs on the fitted image, before `processors`. Default `nil`.
    public init(
        name: String, size: PixelSize? = nil, scaleMode: ImageScaleMode = .aspectFill,
        allowsUpscaling: Bool = false, compressionQuality: Double = 0.8, diskCapacity: Int = 10 << 20,
        preloadPolicy: ImagePreloadPolicy = .none, keepsOriginal: Bool = true,
        preTransform: Transform?, postTransform: Transform? = nil
    ) {
        self.init(
            name: name, size: size, scaleMode: scaleMode, allowsUpscaling: allowsUpscaling,
            compressionQuality: compressionQuality, diskCapacity: diskCapacity, preloadPolicy: preloadPolicy,
            keepsOriginal: keepsOriginal)
        beforeFitting = preTransform
        afterFitting = postTransform
    }

    /// Creates a format with Haneke's post-transform closure (the trailing-closure form; kept for
    /// source compatibility, prefer `processors`), run on the fitted image.
    ///
    /// - Parameters:
    ///   - name: The name that identifies the format and its cached variants.
    ///   - size: The size images are fitted to, in pixels. Default `nil`: the decoded size.
    ///   - scaleMode: How images are fitted to `size`. Default ``ImageScaleMode/aspectFill``.
    ///   - allowsUpscaling: Whether smaller images are scaled up. Default `false`.
    ///   - compressionQuality: JPEG quality (0–1) of stored variants. Default 0.8.
    ///   - diskCapacity: Disk space for the format's stored variants, in bytes. Default 10 MiB.
    ///   - preloadPolicy: Which stored variants are loaded when the format is first used. Default `.none`.
    ///   - keepsOriginal: Whether the original download stays in the file cache beside the variant.
    ///     Default `true`.
    ///   - postTransform: Runs on the fitted image, before `processors`.
    public init(
        name: String, size: PixelSize? = nil, scaleMode: ImageScaleMode = .aspectFill,
        allowsUpscaling: Bool = false, compressionQuality: Double = 0.8, diskCapacity: Int = 10 << 20,
        preloadPolicy: ImagePreloadPolicy = .none, keepsOriginal: Bool = true, postTransform: @escaping Transform
    ) {
        self.init(
            name: name, size: size, scaleMode: scaleMode, allowsUpscaling: allowsUpscaling,
            compressionQuality: compressionQuality, diskCapacity: diskCapacity, preloadPolicy: preloadPolicy,
            keepsOriginal: keepsOriginal)
        afterFitting = postTransform
    }

    /// Haneke's pre-transform: runs on the decoded image before it is fitted to `size` (as a
    /// `ClosureImageProcessor`). Prefer `processors`, which name what they do in the key.
    public var preTransform: Transform? {
        get { beforeFitting }
        set { beforeFitting = newValue }
    }

    /// Haneke's post-transform: runs on the fitted image, before `processors` (as a
    /// `ClosureImageProcessor`). Prefer `processors`.
    public var postTransform: Transform? {
        get { afterFitting }
        set { afterFitting = newValue }
    }

    /// What runs before the image is fitted to `size`: the pre-transform, as a processor.
    var processorsBeforeFitting: [any ImageProcessor] {
        beforeFitting.map { transform in [ClosureImageProcessor(identifier: "\(name).pre") { transform($0) }] } ?? []
    }

    /// What runs after: the post-transform, then `processors`.
    var processorsAfterFitting: [any ImageProcessor] {
        (afterFitting.map { transform in [ClosureImageProcessor(identifier: "\(name).post") { transform($0) }] } ?? [])
            + processors
    }

    /// The variant part of the cache key of this format's images: "image/<name>", then ">" and
    /// the processors' identifiers when there are any ("image/avatar>circle").
    public var variantIdentifier: String {
        let base = "\(ImageCacheFormat.originalIdentifier)/\(name)"
        return processors.isEmpty ? base : "\(base)>\(ImageProcessing.identifier(of: processors))"
    }

    /// The variant identifier of images decoded with no format: "image".
    public static let originalIdentifier = "image"

    /// Plans how an image is fitted to this format.
    ///
    /// - Parameter source: The image's upright size in pixels.
    /// - Returns: The plan, or `nil` when the format has no size.
    public func resizePlan(forSource source: PixelSize) -> ImageResizePlan? {
        guard let size else { return nil }
        return ImageResizePlan(source: source, target: size, scaleMode: scaleMode, allowsUpscaling: allowsUpscaling)
    }

    /// The format an image view uses when it is given none: its own size in pixels and scale mode,
    /// named after them ("view-320×240-aspectFill") so views of one size share their variants.
    /// Haneke's per-view default format, except that it never upscales beyond the source (a
    /// larger bitmap than the source holds only costs memory; the view scales it up anyway).
    ///
    /// - Parameters:
    ///   - pixelSize: The view's laid-out size in pixels.
    ///   - scaleMode: The view's content mode as a scale mode.
    /// - Returns: A format named after the size and scale mode.
    public static func viewFormat(pixelSize: PixelSize, scaleMode: ImageScaleMode) -> ImageCacheFormat {
        LayoutSizing().format(for: pixelSize, scaleMode: scaleMode)
    }
}

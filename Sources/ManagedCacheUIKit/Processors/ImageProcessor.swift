/// Turns an image into another one, once per key and variant: a resize, a crop, rounded corners,
/// a blur, or your own. Processors are composable in order: a format's
/// `processors`, then an `ImageDecoder`'s or an image view's, each receiving what the one before
/// made.
///
/// The processors of a variant are part of its key: `identifier` must name what the processor
/// does and every parameter that changes its output ("resize(64x64,aspectFill)"), and must stay
/// the same from one run of the app to the next, because processed images are kept in the file
/// cache under it. Two processors with one identifier must make the same image.
///
/// Processing runs where decoding runs: once per key and variant (every user of the variant shares
/// the result), after the format's fitting, off the main thread (only the `.synchronous`
/// file-cache delivery policy decodes a file-cache hit on the caller's thread). Throwing fails the
/// load with `.decodingFailed`.
///
/// ```swift
/// struct Sepia: ImageProcessor {
///     var identifier: String { "sepia" }
///     func process(_ image: DecodedImage) throws -> DecodedImage {
///         image.addingTransformation(identifier)   // draw with Core Graphics on Apple platforms
///     }
/// }
/// let avatar = ImageCacheFormat(name: "avatar", processors: [ResizeImageProcessor(size: PixelSize(width: 96, height: 96)), CircleImageProcessor()])
/// ```
///
/// Where pixels exist (Apple platforms: Core Graphics, vImage), the built-in processors draw
/// them. Elsewhere (Linux, or an image that was only validated) they work out the size of the
/// result and record what they did in `DecodedImage.transformations`, without pixels, so that
/// keys, order, caching and sharing behave the same on every platform.
public protocol ImageProcessor: Sendable {
    /// Names what the processor does with its parameters; part of the variant key. Keep it short,
    /// stable between app versions, and free of `>` (which joins the identifiers of a chain).
    var identifier: String { get }

    /// Makes the processed image. Called off the main thread, once per key and variant.
    ///
    /// - Parameter image: The image so far: decoded and fitted to the format, or the previous
    ///   processor's result.
    /// - Returns: The processed image. Record what was done with
    ///   `DecodedImage.addingTransformation(_:)` where no pixels are drawn.
    /// - Throws: Any error: the load fails with `.decodingFailed` (an error other than
    ///   ``ImageDecodingError`` is wrapped in `ImageDecodingError.processingFailed`).
    func process(_ image: DecodedImage) throws -> DecodedImage

    /// The longer side an image of `source` pixels can be decoded to and still give the same
    /// result, when this processor comes first: a downsampling decoder then decodes fewer pixels.
    /// Default `nil`: the full size.
    ///
    /// - Parameter source: The image's upright size in pixels.
    /// - Returns: The longer side to decode to, in pixels, or `nil` for the full size.
    func decodeDimension(forSource source: PixelSize) -> Int?
}

extension ImageProcessor {
    /// `nil`: the processor needs the image at its full size.
    ///
    /// - Parameter source: The image's upright size in pixels (unused).
    /// - Returns: `nil`.
    public func decodeDimension(forSource source: PixelSize) -> Int? { nil }

    /// This processor, then `next`.
    ///
    /// - Parameter next: The processor that receives this one's result.
    /// - Returns: The two as one processor, whose identifier joins theirs with ">".
    public func then(_ next: any ImageProcessor) -> ComposedImageProcessor {
        ComposedImageProcessor([self, next])
    }
}

/// Processors run one after the other, as one processor: `resize.then(circle)`.
public struct ComposedImageProcessor: ImageProcessor {
    /// The processors, in the order they run.
    public let processors: [any ImageProcessor]

    /// Runs `processors` in order (a nested composition is flattened).
    ///
    /// - Parameter processors: The processors, in the order they run.
    public init(_ processors: [any ImageProcessor]) {
        self.processors = processors.flatMap { processor -> [any ImageProcessor] in
            (processor as? ComposedImageProcessor)?.processors ?? [processor]
        }
    }

    /// The identifiers of the processors, joined by ">".
    public var identifier: String { ImageProcessing.identifier(of: processors) }

    /// Each processor's result, given to the next.
    ///
    /// - Parameter image: The image the first processor receives.
    /// - Returns: The last processor's result (`image` itself when there are none).
    /// - Throws: The first error a processor throws; the processors after it do not run.
    public func process(_ image: DecodedImage) throws -> DecodedImage {
        try processors.reduce(image) { image, processor in try processor.process(image) }
    }

    /// The first processor's.
    ///
    /// - Parameter source: The image's upright size in pixels.
    /// - Returns: The first processor's `decodeDimension(forSource:)`; `nil` without processors.
    public func decodeDimension(forSource source: PixelSize) -> Int? {
        processors.first?.decodeDimension(forSource: source)
    }

    /// This composition, then `next`.
    ///
    /// - Parameter next: The processor that receives this composition's result.
    /// - Returns: A composition of these processors and `next`, flattened.
    public func then(_ next: any ImageProcessor) -> ComposedImageProcessor {
        ComposedImageProcessor(processors + [next])
    }
}

/// A processor made from a closure and the identifier that names it: for one-off transforms,
/// and what a format's `preTransform` and `postTransform` closures have become.
public struct ClosureImageProcessor: ImageProcessor {
    /// Names what `body` does (see `ImageProcessor.identifier`).
    public let identifier: String
    private let body: @Sendable (DecodedImage) throws -> DecodedImage

    /// A processor named `identifier` that runs `body`.
    ///
    /// - Parameters:
    ///   - identifier: Names what `body` does, with every parameter that changes its output; part
    ///     of the variant key, so keep it stable between app versions.
    ///   - body: Makes the processed image; called off the main thread.
    public init(identifier: String, _ body: @escaping @Sendable (DecodedImage) throws -> DecodedImage) {
        self.identifier = identifier
        self.body = body
    }

    /// `body(image)`.
    ///
    /// - Parameter image: The image so far.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func process(_ image: DecodedImage) throws -> DecodedImage { try body(image) }
}

/// Helpers shared by the processors and the decoder.
enum ImageProcessing {
    /// The identifiers of `processors`, in order, joined by ">".
    static func identifier(of processors: [any ImageProcessor]) -> String {
        processors.map(\.identifier).joined(separator: ">")
    }

    /// Runs `processors` in order, turning what they throw into `ImageDecodingError.processingFailed`.
    static func run(_ processors: [any ImageProcessor], on image: DecodedImage) throws(ImageDecodingError) -> DecodedImage {
        var image = image
        for processor in processors {
            do {
                image = try processor.process(image)
            } catch let error as ImageDecodingError {
                throw error
            } catch {
                throw .processingFailed(processor: processor.identifier, reason: String(describing: error))
            }
        }
        return image
    }
}

/// Where processors draw: the platform's pixels when the image has a bitmap (Apple platforms:
/// Core Graphics and vImage, `ProcessorDrawing`), else a description of the result (its size and
/// what was done), so that processing is keyed, ordered, cached and shared alike everywhere.
enum PixelCanvas {
    /// `image` redrawn as `plan` says, recording `transformation`.
    static func redraw(_ image: DecodedImage, _ plan: RedrawPlan, by transformation: String) throws(ImageDecodingError) -> DecodedImage {
        #if canImport(ImageIO)
        if image.cgImage != nil {
            guard let drawn = ProcessorDrawing.redraw(image, plan) else {
                throw .processingFailed(processor: transformation, reason: "Core Graphics could not draw the image")
            }
            return drawn.addingTransformation(transformation)
        }
        #endif
        return DecodedImage(
            describing: image, processedTo: plan.canvasSize, by: transformation,
            isOpaque: PixelOpacity.isOpaque(redrawing: image.isOpaque, plan))
    }

    /// `image` blurred by three box blurs `boxSize` pixels wide, recording `transformation`.
    static func blur(_ image: DecodedImage, boxSize: Int, by transformation: String) throws(ImageDecodingError) -> DecodedImage {
        #if canImport(ImageIO)
        if image.cgImage != nil {
            guard let blurred = ProcessorDrawing.blur(image, boxSize: boxSize) else {
                throw .processingFailed(processor: transformation, reason: "vImage could not blur the image")
            }
            return blurred.addingTransformation(transformation)
        }
        #endif
        return DecodedImage(describing: image, processedTo: image.pixelSize, by: transformation, isOpaque: image.isOpaque)
    }
}

extension DecodedImage {
    /// The result of a processor that had no pixels to draw (Linux, or an image that was only
    /// validated): `size` pixels, upright, `transformation` appended. `encodedData` is `nil`: the
    /// source's bytes are not these pixels, so such an image cannot be encoded (stored variants
    /// of processed images need a pixel backend). `isOpaque`: whether the processor's result is.
    init(describing source: DecodedImage, processedTo size: PixelSize, by transformation: String, isOpaque: Bool) {
        format = source.format
        pixelWidth = size.width
        pixelHeight = size.height
        frameCount = source.frameCount
        encodedData = nil
        transformations = source.transformations + [transformation]
        orientation = .up
        self.isOpaque = isOpaque
        animation = source.animation
        frameBufferByteLimit = source.frameBufferByteLimit
        preview = source.preview
        #if canImport(ImageIO)
        bitmap = nil
        #endif
    }
}

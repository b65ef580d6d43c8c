import Foundation
import ManagedCacheLocking
import ManagedCacheUIKit

/// An `ImageDecoding` backend that pretends to have pixels, so Linux tests can follow the format
/// pipeline an Apple backend runs (downsampled decode, resize, re-encode). It records its calls;
/// "resizing" makes an image of the plan's canvas size.
final class FakePixelBackend: ImageDecoding {
    enum Call: Equatable {
        case decode(maximumPixelDimension: Int?)
        case resize(ImageResizePlan)
        case encode(quality: Double)
    }

    private let recorded = Lock<[Call]>([])

    var calls: [Call] { recorded.withLock { $0 } }

    var canTransformPixels: Bool { true }

    func decode(_ data: Data, info: ImageInfo, maximumPixelDimension: Int?) throws(ImageDecodingError) -> DecodedImage {
        recorded.withLock { $0.append(.decode(maximumPixelDimension: maximumPixelDimension)) }
        return DecodedImage(info: info, encodedData: data)
    }

    func resize(_ image: DecodedImage, with plan: ImageResizePlan) -> DecodedImage? {
        recorded.withLock { $0.append(.resize(plan)) }
        let info = ImageInfo(
            format: image.format ?? .png, pixelWidth: plan.canvasSize.width,
            pixelHeight: plan.canvasSize.height, frameCount: image.frameCount)
        return DecodedImage(info: info, encodedData: nil, transformations: image.transformations)
    }

    func encode(_ image: DecodedImage, compressionQuality: Double) -> Data? {
        recorded.withLock { $0.append(.encode(quality: compressionQuality)) }
        return Data("encoded \(image.pixelSize)".utf8)
    }
}

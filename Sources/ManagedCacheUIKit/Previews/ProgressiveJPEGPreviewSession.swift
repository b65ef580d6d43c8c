import Foundation
import ManagedCache
import ManagedCacheLocking

/// `ImageDecoder`'s previews of one download: each time a new scan of a progressive JPEG is
/// complete (`ProgressiveScanDetector`), a preview of the scans so far, decoded like the final
/// image (downsampled for the decoder's format and put through the format's work), marked with
/// `DecodedImage.preview`.
///
/// A preview is decoded from the complete scans so far closed with EOI
/// (`ProgressiveScanDetector.previewFile(of:)`): a whole JPEG file, never an incomplete source.
/// Apple documents no partial image from an incomplete incremental ImageIO source, and one was
/// reported to give none for progressive JPEGs until the download ends; a whole file of the
/// first scans is what any decoder reads.
///
/// - On Apple platforms ImageIO decodes that file (`PartialJPEGDecoder`), downsampled like the image.
/// - On Linux, with no pixel decoder, the preview is a `DecodedImage` holding that file.
///
/// Anything but a progressive JPEG (a PNG, a baseline JPEG) ends the session at its first bytes,
/// keeping nothing; so does a frame larger than the decoder's `maximumPixelCount`, and the
/// download's end (the image itself follows). The manager makes sessions (see `PreviewDecoding`);
/// apps do not need to.
public final class ProgressiveJPEGPreviewSession: PreviewSession {
    private struct State {
        var data = Data()
        var detector = ProgressiveScanDetector()
        /// The scans already announced as a stage.
        var announcedScans = 0
    }

    private let state = Lock(State())
    private let decoder: ImageDecoder

    /// A session making previews with `decoder`'s format and limits.
    init(decoder: ImageDecoder) {
        self.decoder = decoder
    }

    /// Keeps the bytes and looks for newly completed scans: `.ready` when there are some,
    /// `.finished` when this is no progressive JPEG, too large, or complete.
    ///
    /// - Parameter chunk: The next bytes of the download.
    /// - Returns: What the session can show now.
    public func append(_ chunk: Data) -> PreviewStep {
        state.withLock { state in
            state.data.append(chunk)
            state.detector.advance(over: state.data)
            let detector = state.detector
            if let size = detector.pixelSize, let limit = decoder.maximumPixelCount, size.pixelCount > limit {
                state.data = Data()
                return .finished
            }
            guard detector.isSearching else {
                state.data = Data()
                return .finished
            }
            guard detector.completedScans > state.announcedScans else { return .waiting }
            state.announcedScans = detector.completedScans
            return .ready
        }
    }

    /// Makes a preview of the complete scans so far, fitted to the decoder's format.
    ///
    /// - Returns: The preview (its ``DecodedImage/preview`` says how many scans), or `nil` before
    ///   the first complete scan.
    public func makePreview() -> DecodedImage? {
        let snapshot = state.withLock { state -> (Data, ProgressiveScanDetector)? in
            guard state.detector.completedScans > 0, state.detector.pixelSize != nil, !state.data.isEmpty else { return nil }
            return (state.data, state.detector)
        }
        guard let (data, detector) = snapshot, let size = detector.pixelSize, let file = detector.previewFile(of: data) else {
            return nil
        }
        let info = ImageInfo(format: .jpeg, pixelWidth: size.width, pixelHeight: size.height, orientation: detector.orientation)
        #if canImport(ImageIO)
        let dimension = decoder.decodeDimension(forSource: info.orientedPixelSize) ?? max(size.width, size.height)
        guard let partial = PartialJPEGDecoder.decode(file, maximumPixelDimension: dimension) else { return nil }
        #else
        let partial = DecodedImage(info: info, encodedData: file)
        #endif
        var preview = decoder.applyFormat(to: partial)
        preview.preview = ImagePreview(completedScans: detector.completedScans, receivedBytes: data.count)
        return preview
    }
}

extension ImageDecoder: PreviewDecoding {
    /// A session making previews of a progressive JPEG as it downloads, for users that want them
    /// (`ManagedImageView` does by default). It ends at once for anything else.
    ///
    /// - Returns: A new session for one download.
    public func makePreviewSession() -> ProgressiveJPEGPreviewSession? {
        ProgressiveJPEGPreviewSession(decoder: self)
    }
}

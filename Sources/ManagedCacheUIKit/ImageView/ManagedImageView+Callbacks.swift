#if (canImport(UIKit) && !os(watchOS)) || (canImport(AppKit) && !canImport(UIKit))
import ManagedCache

extension ManagedImageView {
    /// Tells the closures and the delegate what `event` reports, in that order; shared by the
    /// UIKit and AppKit views, which render the display themselves.
    ///
    /// - Parameter event: What the core reports.
    /// - Returns: The display to render when `event` is one; `nil` for a callback.
    func notify(_ event: ImageViewEvent) -> ImageViewDisplay? {
        switch event {
        case .display(let display):
            return display
        case .imageSet(let image, let origin):
            onImageSet?(image, origin)
            delegate?.managedImageView(self, didSet: image, from: origin)
        case .failed(let error):
            onFailure?(error)
            delegate?.managedImageView(self, didFailWith: error)
        case .cancelled(let reason):
            onCancelled?(reason)
            delegate?.managedImageView(self, wasCancelledBecause: reason)
        case .progress(let progress):
            onProgress?(progress)
            delegate?.managedImageView(self, didReceive: progress)
        }
        return nil
    }
}
#endif

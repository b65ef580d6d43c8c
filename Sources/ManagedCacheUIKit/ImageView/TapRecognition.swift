/// When a `ManagedImageView` listens for taps: the decision both shells share.
///
/// A tap recognizer that is always installed swallows the taps meant for the table or collection
/// view cell around the image (row selection breaks). So the view has one only while something
/// wants taps (`onTap`, or a delegate, which may implement `managedImageViewWasTapped`), and even
/// then it lets touches through (`cancelsTouchesInView = false` on UIKit) so the cell still sees them.
enum TapRecognition {
    /// Whether the view needs a tap recognizer.
    static func isNeeded(hasTapHandler: Bool, hasDelegate: Bool) -> Bool {
        hasTapHandler || hasDelegate
    }
}

// The same API, each use where every platform that compiles it has it.
#if canImport(UIKit) && !os(watchOS)
import UIKit

final class Shell: UIView {
    var pixelScale: CGFloat { traitCollection.displayScale }
    let link = CADisplayLink(target: Shell.self, selector: #selector(tick))
    @objc func tick() {}
}
#endif

#if canImport(UIKit) && !os(watchOS) && !os(visionOS)
let scale = UIScreen.main.scale
#endif

#if os(iOS) || os(tvOS)
let screenScale = UIScreen.main.scale
#elseif canImport(UIKit) && !os(watchOS)
let other = UIImageView()
#endif

#if canImport(UIKit)
// UIKit on watchOS has images, not views.
func makeImage() -> UIImage? { nil }
let note = "UIScreen and UIView in a string are text"
#else
let noKit = 0
#endif

#if os(Linux)
let linuxOnly = "UIScreen"
func neverApple() -> Any? { UIView.self }
#endif

#if !os(Linux)
// A marked line: the reason is required.
let link: CADisplayLink? = nil  // portability-lint: allow checked with #available where it is used
#endif

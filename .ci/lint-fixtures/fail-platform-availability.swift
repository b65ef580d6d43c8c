// Each flagged line compiles on a declared Apple platform that lacks the API it uses.
#if canImport(UIKit)
import UIKit

let scale = UIScreen.main.scale  // lint-expect
let view = UIImageView()  // lint-expect
#endif

#if canImport(UIKit) && !os(watchOS)
final class Shell: UIView {
    var pixelScale: CGFloat { window?.screen.scale ?? 1 }  // lint-expect
}
#endif

#if !os(Linux)
let link: CADisplayLink? = nil  // lint-expect
#endif

#if os(iOS) || os(visionOS)
let main = UIScreen.main  // lint-expect
#elseif os(tvOS)
let tv = UIScreen.main
#endif

#if DEBUG
let debugView = UILabel()  // lint-expect
#endif

import UIKit  // lint-expect
func makeImage() -> UIImage? { nil }  // lint-expect

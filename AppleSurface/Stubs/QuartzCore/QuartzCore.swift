// Stand-in for the parts of Apple's QuartzCore (Core Animation) the package uses.
// Sources (under https://developer.apple.com/documentation/quartzcore/):
//   cadisplaylink, cadisplaylink/init(target:selector:), cadisplaylink/add(to:formode:),
//   cadisplaylink/remove(from:formode:), cadisplaylink/invalidate(), cadisplaylink/timestamp,
//   cadisplaylink/targettimestamp, cadisplaylink/duration, cadisplaylink/ispaused,
//   cadisplaylink/preferredframeraterange, caframeraterange,
//   caframeraterange/init(minimum:maximum:preferred:), cacurrentmediatime(), calayer,
//   calayer/removeallanimations().
// `CADisplayLink` is an Objective-C class with mutable state that Apple does not annotate for
// concurrency: neither Sendable nor isolated here (strict where unsure). It calls its target on
// the run loop it was added to (the main one for a view's animation). `CALayer` likewise is
// neither Sendable nor main-actor isolated here (Apple's annotation could not be confirmed).
@_exported import CoreGraphics
import Foundation
import ObjectiveC

/// Apple: `class CADisplayLink : NSObject` (iOS 3.1+, tvOS 9+, visionOS 1+, macOS 14+). Not Sendable.
open class CADisplayLink: NSObject {
    /// Apple: `init(target: Any, selector sel: Selector)`. The display link retains the target.
    public init(target: Any, selector sel: Selector) { super.init() }
    /// Apple: `func add(to runloop: RunLoop, forMode mode: RunLoop.Mode)`.
    open func add(to runloop: RunLoop, forMode mode: RunLoop.Mode) {}
    /// Apple: `func remove(from runloop: RunLoop, forMode mode: RunLoop.Mode)`.
    open func remove(from runloop: RunLoop, forMode mode: RunLoop.Mode) {}
    /// Apple: `func invalidate()` — removes it from every run loop and releases the target.
    open func invalidate() {}
    /// Apple: `var timestamp: CFTimeInterval { get }` — when the last frame was displayed.
    open var timestamp: CFTimeInterval { 0 }
    /// Apple: `var targetTimestamp: CFTimeInterval { get }` (iOS 10+) — when the next frame shows.
    open var targetTimestamp: CFTimeInterval { 0 }
    /// Apple: `var duration: CFTimeInterval { get }`.
    open var duration: CFTimeInterval { 0 }
    /// Apple: `var isPaused: Bool { get set }`.
    open var isPaused = false
    /// Apple: `var preferredFrameRateRange: CAFrameRateRange { get set }` (iOS 15+, tvOS 15+,
    /// visionOS 1+, macOS 14+) — "a range of frequencies your app allows for frame updates,
    /// affecting how often the system invokes your delegate's callback"; the system may still
    /// choose another rate (Low Power Mode, thermal state, accessibility settings).
    open var preferredFrameRateRange = CAFrameRateRange()
}

/// Apple: `struct CAFrameRateRange` (iOS 15+, tvOS 15+, visionOS 1+, macOS 12+). A C struct of
/// three floats: Sendable as Swift imports it.
public struct CAFrameRateRange: Sendable {
    /// Apple: `var minimum: Float`.
    public var minimum: Float
    /// Apple: `var maximum: Float`.
    public var maximum: Float
    /// Apple: `var preferred: Float? { get set }`.
    public var preferred: Float?
    /// Apple: `init()`.
    public init() {
        minimum = 0
        maximum = 0
        preferred = nil
    }
    /// Apple: `init(minimum: Float, maximum: Float, preferred: Float? = nil)`.
    public init(minimum: Float, maximum: Float, preferred: Float? = nil) {
        self.minimum = minimum
        self.maximum = maximum
        self.preferred = preferred
    }
}

/// Apple: `func CACurrentMediaTime() -> CFTimeInterval` — the current absolute time in seconds
/// (`mach_absolute_time` converted), the clock `CADisplayLink` timestamps use.
public func CACurrentMediaTime() -> CFTimeInterval { 0 }

/// Apple: `class CALayer : NSObject`.
open class CALayer: NSObject {
    /// Apple: `override init()`.
    public override init() {}
    /// Apple: `func removeAllAnimations()` — removes every animation attached to the layer.
    open func removeAllAnimations() {}
    /// Apple: `var contents: Any? { get set }` — a `CGImage` the layer shows (or, on macOS, an `NSImage`).
    open var contents: Any?
    /// Apple: `var contentsGravity: CALayerContentsGravity { get set }` (default `.resize`).
    open var contentsGravity = CALayerContentsGravity.resize
    /// Apple: `var contentsScale: CGFloat { get set }` — pixels of `contents` per point.
    open var contentsScale: CGFloat = 1
    /// Apple: `var masksToBounds: Bool { get set }`.
    open var masksToBounds = false
    /// Apple: `func add(_ anim: CAAnimation, forKey key: String?)` — the layer copies the animation.
    open func add(_ anim: CAAnimation, forKey key: String?) {}
}

/// Apple: `struct CALayerContentsGravity : Hashable, Equatable, RawRepresentable, Sendable`.
public struct CALayerContentsGravity: Hashable, RawRepresentable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Apple: `static let resize: CALayerContentsGravity` — stretched to the bounds.
    public static let resize = CALayerContentsGravity(rawValue: "resize")
    /// Apple: `static let resizeAspect: CALayerContentsGravity` — fitted, aspect kept.
    public static let resizeAspect = CALayerContentsGravity(rawValue: "resizeAspect")
    /// Apple: `static let resizeAspectFill: CALayerContentsGravity` — filling, aspect kept.
    public static let resizeAspectFill = CALayerContentsGravity(rawValue: "resizeAspectFill")
}

/// Apple: `class CAAnimation : NSObject` (and `CAMediaTiming`). Neither Sendable nor isolated.
open class CAAnimation: NSObject {
    /// Apple: `override init()`.
    public override init() {}
    /// Apple: `var duration: CFTimeInterval { get set }` (`CAMediaTiming`).
    open var duration: CFTimeInterval = 0
}

/// Apple: `struct CATransitionType : Hashable, Equatable, RawRepresentable, Sendable`.
public struct CATransitionType: Hashable, RawRepresentable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Apple: `static let fade: CATransitionType` — the layer's content fades as it becomes visible or hidden.
    public static let fade = CATransitionType(rawValue: "fade")
}

/// Apple: `class CATransition : CAAnimation` — a transition between a layer's states.
open class CATransition: CAAnimation {
    /// Apple: `var type: CATransitionType { get set }` (default `.fade`).
    open var type = CATransitionType.fade
}

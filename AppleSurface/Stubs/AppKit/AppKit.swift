// Stand-in for the part of Apple's AppKit that ManagedCacheUIKit's macOS `ManagedImageView` uses.
// Every declaration quotes Apple's (https://developer.apple.com/documentation/appkit/<symbol>):
//   nsresponder, nsview (init(frame:), init(coder:), bounds, frame, window, wantsLayer, layer,
//   autoresizingMask, wantsUpdateLayer, updateLayer(), addSubview(_:), layout(), needsLayout, viewDidMoveToWindow(),
//   viewDidChangeBackingProperties(), addGestureRecognizer(_:), removeGestureRecognizer(_:)),
//   nsview/autoresizingmask, nswindow (backingScaleFactor), nsprogressindicator (style,
//   isIndeterminate, controlSize, isDisplayedWhenStopped, startAnimation(_:), stopAnimation(_:)),
//   nscontrol/controlsize, nsgesturerecognizer, nsclickgesturerecognizer (init(target:action:)),
//   nsworkspace (shared, notificationCenter, accessibilityDisplayShouldReduceMotion,
//   accessibilityDisplayOptionsDidChangeNotification), nsaccessibilityprotocol
//   (setAccessibilityElement(_:), setAccessibilityRole(_:), setAccessibilityValue(_:),
//   setAccessibilityLabel(_:)), nsaccessibility/role (image), nsimage (init(cgImage:size:)).
//
// Isolation as Apple declares it: `NSResponder`, `NSView` and every subclass, `NSWindow` and
// `NSGestureRecognizer` are `@MainActor`. `NSWorkspace` is main-actor isolated here (Apple's
// annotation could not be confirmed: the stricter reading). `NSImage` is not Sendable here (the
// stricter reading). Availability: all of it exists on every macOS the package declares (12+);
// AppKit does not exist on Mac Catalyst for UIKit apps, which use the UIKit view. Bodies are
// placeholders: nothing here runs.
@_exported import CoreGraphics
@_exported import Foundation
@_exported import QuartzCore
import ObjectiveC

/// Apple: `typealias NSRect = CGRect`.
public typealias NSRect = CGRect
/// Apple: `typealias NSSize = CGSize`.
public typealias NSSize = CGSize
/// Apple: `typealias NSPoint = CGPoint`.
public typealias NSPoint = CGPoint

/// Apple: `@MainActor class NSResponder : NSObject`.
@MainActor
open class NSResponder: NSObject {
    public override init() { super.init() }
    /// Apple: `init?(coder: NSCoder)`.
    public required init?(coder: NSCoder) { super.init() }
}

/// Apple: `@MainActor class NSWindow : NSResponder`.
@MainActor
open class NSWindow: NSResponder {
    /// Apple: `var backingScaleFactor: CGFloat { get }` — 2.0 for high-resolution scaled
    /// display modes, 1.0 otherwise.
    open var backingScaleFactor: CGFloat { 1 }
}

/// Apple: `@MainActor class NSView : NSResponder` (also `NSAccessibilityProtocol`).
@MainActor
open class NSView: NSResponder {
    /// Apple: `struct AutoresizingMask : OptionSet`.
    public struct AutoresizingMask: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Apple: `static var minXMargin: NSView.AutoresizingMask`.
        public static let minXMargin = AutoresizingMask(rawValue: 1 << 0)
        /// Apple: `static var width: NSView.AutoresizingMask`.
        public static let width = AutoresizingMask(rawValue: 1 << 1)
        /// Apple: `static var maxXMargin: NSView.AutoresizingMask`.
        public static let maxXMargin = AutoresizingMask(rawValue: 1 << 2)
        /// Apple: `static var minYMargin: NSView.AutoresizingMask`.
        public static let minYMargin = AutoresizingMask(rawValue: 1 << 3)
        /// Apple: `static var height: NSView.AutoresizingMask`.
        public static let height = AutoresizingMask(rawValue: 1 << 4)
        /// Apple: `static var maxYMargin: NSView.AutoresizingMask`.
        public static let maxYMargin = AutoresizingMask(rawValue: 1 << 5)
    }

    /// Apple: `init(frame frameRect: NSRect)`.
    public init(frame frameRect: NSRect) { super.init() }
    /// Apple: `convenience init()` (Objective-C's `-init`, which calls `initWithFrame:` with
    /// `NSZeroRect`); subclasses that override both designated initializers inherit it.
    public convenience override init() { self.init(frame: .zero) }
    /// Apple: `init?(coder: NSCoder)`.
    public required init?(coder: NSCoder) { super.init(coder: coder) }

    /// Apple: `var frame: NSRect { get set }`.
    open var frame = NSRect.zero
    /// Apple: `var bounds: NSRect { get set }`.
    open var bounds = NSRect.zero
    /// Apple: `var window: NSWindow? { get }`.
    open var window: NSWindow? { nil }
    /// Apple: `var wantsLayer: Bool { get set }`.
    open var wantsLayer = false
    /// Apple: `var layer: CALayer? { get set }`.
    open var layer: CALayer?
    /// Apple: `var autoresizingMask: NSView.AutoresizingMask { get set }`.
    open var autoresizingMask: AutoresizingMask = []
    /// Apple: `var wantsUpdateLayer: Bool { get }` — `true` makes AppKit call `updateLayer()`
    /// instead of `draw(_:)`, so the view sets its layer's contents itself.
    open var wantsUpdateLayer: Bool { false }
    /// Apple: `func updateLayer()`.
    open func updateLayer() {}
    /// Apple: `var needsLayout: Bool { get set }`.
    open var needsLayout = false
    /// Apple: `func addSubview(_ view: NSView)`.
    open func addSubview(_ view: NSView) {}
    /// Apple: `func layout()` — override to lay out subviews; call `super`.
    open func layout() {}
    /// Apple: `func viewDidMoveToWindow()`.
    open func viewDidMoveToWindow() {}
    /// Apple: `func viewDidChangeBackingProperties()` — the backing scale or color space changed.
    open func viewDidChangeBackingProperties() {}
    /// Apple: `func addGestureRecognizer(_ gestureRecognizer: NSGestureRecognizer)` (macOS 10.10+).
    open func addGestureRecognizer(_ gestureRecognizer: NSGestureRecognizer) {}
    /// Apple: `func removeGestureRecognizer(_ gestureRecognizer: NSGestureRecognizer)`.
    open func removeGestureRecognizer(_ gestureRecognizer: NSGestureRecognizer) {}

    // NSAccessibilityProtocol (macOS 10.10+).
    /// Apple: `func setAccessibilityElement(_ accessibilityElement: Bool)`.
    open func setAccessibilityElement(_ accessibilityElement: Bool) {}
    /// Apple: `func setAccessibilityRole(_ accessibilityRole: NSAccessibility.Role?)`.
    open func setAccessibilityRole(_ accessibilityRole: NSAccessibility.Role?) {}
    /// Apple: `func setAccessibilityValue(_ accessibilityValue: Any?)`.
    open func setAccessibilityValue(_ accessibilityValue: Any?) {}
    /// Apple: `func setAccessibilityLabel(_ accessibilityLabel: String?)`.
    open func setAccessibilityLabel(_ accessibilityLabel: String?) {}
}

/// Apple: `enum NSAccessibility` (a namespace).
public enum NSAccessibility {
    /// Apple: `struct Role : Hashable, RawRepresentable, Sendable`.
    public struct Role: Hashable, RawRepresentable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Apple: `static let image: NSAccessibility.Role`.
        public static let image = Role(rawValue: "AXImage")
    }
}

/// Apple: `@MainActor class NSControl : NSView`.
@MainActor
open class NSControl: NSView {
    /// Apple: `enum ControlSize : UInt, Sendable` (`regular`, `small`, `mini`, `large`).
    public enum ControlSize: UInt, Sendable {
        case regular, small, mini, large
    }
}

/// Apple: `@MainActor class NSProgressIndicator : NSView`.
@MainActor
open class NSProgressIndicator: NSView {
    /// Apple: `enum Style : UInt` (`bar`, `spinning`).
    public enum Style: UInt, Sendable {
        case bar, spinning
    }
    /// Apple: `var style: NSProgressIndicator.Style { get set }`.
    open var style = Style.bar
    /// Apple: `var isIndeterminate: Bool { get set }`.
    open var isIndeterminate = true
    /// Apple: `var controlSize: NSControl.ControlSize { get set }`.
    open var controlSize = NSControl.ControlSize.regular
    /// Apple: `var isDisplayedWhenStopped: Bool { get set }`.
    open var isDisplayedWhenStopped = true
    /// Apple: `func startAnimation(_ sender: Any?)`.
    open func startAnimation(_ sender: Any?) {}
    /// Apple: `func stopAnimation(_ sender: Any?)`.
    open func stopAnimation(_ sender: Any?) {}
}

/// Apple: `@MainActor class NSGestureRecognizer : NSObject`.
@MainActor
open class NSGestureRecognizer: NSObject {
    /// Apple: `init(target: Any?, action: Selector?)`.
    public init(target: Any?, action: Selector?) { super.init() }
    /// Apple: `var delaysPrimaryMouseButtonEvents: Bool { get set }`.
    open var delaysPrimaryMouseButtonEvents = false
}

/// Apple: `@MainActor class NSClickGestureRecognizer : NSGestureRecognizer`.
@MainActor
open class NSClickGestureRecognizer: NSGestureRecognizer {}

/// Apple: `class NSWorkspace : NSObject`. Main-actor isolated here (the stricter reading).
@MainActor
open class NSWorkspace: NSObject {
    /// Apple: `class var shared: NSWorkspace { get }`.
    public static let shared = NSWorkspace()
    /// Apple: `var notificationCenter: NotificationCenter { get }` — where workspace
    /// notifications (the accessibility display options among them) are posted.
    open var notificationCenter: NotificationCenter { .default }
    /// Apple: `var accessibilityDisplayShouldReduceMotion: Bool { get }` (macOS 10.12+).
    open var accessibilityDisplayShouldReduceMotion: Bool { false }
    /// Apple: `class let accessibilityDisplayOptionsDidChangeNotification: NSNotification.Name`
    /// (macOS 10.10+), posted on `notificationCenter`.
    nonisolated public static let accessibilityDisplayOptionsDidChangeNotification = Notification.Name(
        "NSWorkspaceAccessibilityDisplayOptionsDidChangeNotification")
}

/// Apple: `class NSImage : NSObject`. Not Sendable here (the stricter reading).
open class NSImage: NSObject {
    /// Apple: `init(cgImage: CGImage, size: NSSize)` — `.zero` takes the image's pixel size.
    public init(cgImage: CGImage, size: NSSize) { super.init() }
}

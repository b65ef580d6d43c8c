// Stand-in for the parts of Apple's Accessibility framework the package uses.
// Sources: the iOS 18.0 SDK's Accessibility.framework (Headers/AXSettings.h and
// Modules/Accessibility.swiftmodule/arm64-apple-ios.swiftinterface), and under
// https://developer.apple.com/documentation/accessibility/: accessibilitysettings,
// accessibilitysettings/animatedimagesenabled,
// accessibilitysettings/animatedimagesenableddidchangenotification, axanimatedimagesenabled(),
// axanimatedimagesenableddidchangenotification, animated-images (the article: "Pause animations
// in animated images in your app when people turn off the Animated Images setting").
// Isolation as the SDK's Swift interface declares it: none (the C functions and constants
// behind them are thread-safe reads), so none here either.
import Foundation

/// Apple: `struct AccessibilitySettings` (iOS 14+, tvOS 14+, visionOS 1+, macOS 11+, watchOS 7+)
/// — "a structure for working with accessibility system settings".
public struct AccessibilitySettings {
    /// Apple (swiftinterface): `@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0,
    /// visionOS 2.0, *) public static var animatedImagesEnabled: Swift.Bool { get }` — `true` if
    /// the system setting for Animated Images is on.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    public static var animatedImagesEnabled: Bool { true }

    /// Apple (swiftinterface): `@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0,
    /// visionOS 2.0, *) public static var animatedImagesEnabledDidChangeNotification:
    /// Foundation.Notification.Name { get }` — posted when the setting changes.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    public static var animatedImagesEnabledDidChangeNotification: Notification.Name {
        Notification.Name("AXAnimatedImagesEnabledDidChangeNotification")
    }
}

/// Apple (swiftinterface, the Swift refinement of AXSettings.h's `AX_EXTERN BOOL
/// AXAnimatedImagesEnabled(void) API_AVAILABLE(ios(17.0), macos(14.0), tvos(17.0), watchos(10.0))
/// NS_REFINED_FOR_SWIFT`): `public func AXAnimatedImagesEnabled() -> Swift.Bool`, introduced in
/// iOS 17 / macOS 14 / tvOS 17 / watchOS 10 (visionOS 1 in the documentation), deprecated in
/// iOS 18 / macOS 15 / tvOS 18 / watchOS 11, renamed `AccessibilitySettings.animatedImagesEnabled`.
@available(iOS, introduced: 17.0, deprecated: 18.0, renamed: "AccessibilitySettings.animatedImagesEnabled")
@available(macOS, introduced: 14.0, deprecated: 15.0, renamed: "AccessibilitySettings.animatedImagesEnabled")
@available(tvOS, introduced: 17.0, deprecated: 18.0, renamed: "AccessibilitySettings.animatedImagesEnabled")
@available(watchOS, introduced: 10.0, deprecated: 11.0, renamed: "AccessibilitySettings.animatedImagesEnabled")
public func AXAnimatedImagesEnabled() -> Bool { true }

extension NSNotification.Name {
    /// Apple (swiftinterface, the refinement of `AXAnimatedImagesEnabledDidChangeNotification`):
    /// `public static let AXAnimatedImagesEnabledDidChange: Foundation.Notification.Name`, same
    /// availability as `AXAnimatedImagesEnabled()`, renamed
    /// `AccessibilitySettings.animatedImagesEnabledDidChangeNotification`.
    @available(iOS, introduced: 17.0, deprecated: 18.0, renamed: "AccessibilitySettings.animatedImagesEnabledDidChangeNotification")
    @available(macOS, introduced: 14.0, deprecated: 15.0, renamed: "AccessibilitySettings.animatedImagesEnabledDidChangeNotification")
    @available(tvOS, introduced: 17.0, deprecated: 18.0, renamed: "AccessibilitySettings.animatedImagesEnabledDidChangeNotification")
    @available(watchOS, introduced: 10.0, deprecated: 11.0, renamed: "AccessibilitySettings.animatedImagesEnabledDidChangeNotification")
    public static let AXAnimatedImagesEnabledDidChange = Notification.Name("AXAnimatedImagesEnabledDidChangeNotification")
}

// Stand-in for the parts of Apple's Accessibility framework the package uses.
// Sources (under https://developer.apple.com/documentation/accessibility/):
//   accessibilitysettings, accessibilitysettings/animatedimagesenabled,
//   accessibilitysettings/animatedimagesenableddidchangenotification, animated-images (the
//   article: "Pause animations in animated images in your app when people turn off the Animated
//   Images setting").
// Apple's pages show no isolation for these type properties; here they are main-actor isolated,
// the stricter reading (the package reads them from the main actor only).
import Foundation

/// Apple: `struct AccessibilitySettings` (iOS 14+, tvOS 14+, visionOS 1+, macOS 11+, watchOS 7+)
/// — "a structure for working with accessibility system settings".
public struct AccessibilitySettings {
    /// Apple: `static var animatedImagesEnabled: Bool { get }` (iOS 18+, tvOS 18+, visionOS 2+,
    /// macOS 15+, watchOS 11+) — `true` if the system setting for Animated Images is on.
    @available(iOS 18.0, tvOS 18.0, visionOS 2.0, macOS 15.0, watchOS 11.0, *)
    @MainActor public static var animatedImagesEnabled: Bool { true }

    /// Apple: `static var animatedImagesEnabledDidChangeNotification: Notification.Name { get }`
    /// (iOS 18+, tvOS 18+, visionOS 2+, macOS 15+, watchOS 11+) — posted when the system setting
    /// for playing animated images changes.
    @available(iOS 18.0, tvOS 18.0, visionOS 2.0, macOS 15.0, watchOS 11.0, *)
    @MainActor public static var animatedImagesEnabledDidChangeNotification: Notification.Name {
        Notification.Name("AXAnimatedImagesEnabledDidChangeNotification")
    }
}

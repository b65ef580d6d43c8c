import Foundation
import ManagedCacheLocking

/// The app-wide switch for animated images (an app's "Autoplay animations" setting).
///
/// While it is off, every `ManagedImageView` shows the first frame of animated images, as it does
/// under the system's Reduce Motion. Changing it posts `settingDidChangeNotification`, which the
/// views observe, so it applies to views already on screen.
///
/// ```swift
/// ImageAnimation.isEnabled = UserDefaults.standard.bool(forKey: "autoplayAnimations")
/// ```
public enum ImageAnimation {
    private static let enabled = Lock(true)

    /// Posted (on the thread that changed the setting) when `isEnabled` changes.
    public static let settingDidChangeNotification = Notification.Name("ManagedCacheUIKit.ImageAnimation.settingDidChange")

    /// Whether image views play animated images. Default `true`. Thread-safe.
    public static var isEnabled: Bool {
        get { enabled.withLock { $0 } }
        set {
            let changed = enabled.withLock { value -> Bool in
                defer { value = newValue }
                return value != newValue
            }
            if changed { NotificationCenter.default.post(name: settingDidChangeNotification, object: nil) }
        }
    }
}

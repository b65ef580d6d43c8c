import Foundation

/// The Data Protection class a file cache gives the files it creates, on Apple platforms: when the
/// system lets anyone, the app included, read them.
///
/// Set it with ``JournaledFileCache/Configuration/fileProtection``, the configuration of a
/// ``FileCache`` and of a ``BigFileCache``. The default,
/// ``completeUntilFirstUserAuthentication``, keeps the files encrypted from a restart until the
/// user first unlocks the device, and readable from then on, also while the device is locked, so
/// background work after a reboot (a background fetch, a notification extension, a
/// `BGProcessingTask`) can still read and write the cache. ``complete`` is stricter: the files can
/// be neither read nor written while the device is locked, so every load, store and trim that
/// runs then fails (the loads fall back to the network, the cache carries on once the device is
/// unlocked). Choose it for caches of sensitive responses whose app does no background work.
///
/// The cache sets the class on its own directories, which every file it creates afterwards
/// inherits; files written before keep the class they were created with. On Linux, and on
/// volumes without Data Protection, the setting has no effect: there the caches' privacy is their
/// file modes (`0600` files in `0700` directories, see <doc:FileCaches#Private-files>).
public struct FileProtection: Sendable, Hashable, CustomStringConvertible {
    enum Class: Sendable, Hashable {
        case complete, completeUnlessOpen, completeUntilFirstUserAuthentication, unprotected, inherited
    }

    let protectionClass: Class

    /// Encrypted while the device is locked or booting: unreadable and unwritable then, also by
    /// the app (`FileProtectionType.complete`).
    public static let complete = FileProtection(protectionClass: .complete)
    /// Encrypted after it is closed: a file open when the device locks stays usable, a new file can
    /// be created and written while locked, but a closed one cannot be reopened until the device is
    /// unlocked (`FileProtectionType.completeUnlessOpen`).
    public static let completeUnlessOpen = FileProtection(protectionClass: .completeUnlessOpen)
    /// Encrypted until the user unlocks the device for the first time after it starts, readable
    /// from then on (`FileProtectionType.completeUntilFirstUserAuthentication`). The default: what
    /// background work after a reboot needs.
    public static let completeUntilFirstUserAuthentication = FileProtection(protectionClass: .completeUntilFirstUserAuthentication)
    /// No Data Protection beyond the volume's own encryption (`FileProtectionType.none`; macOS
    /// does not support it).
    public static let unprotected = FileProtection(protectionClass: .unprotected)
    /// Sets no class: files take the class of the directory they are created in, which is the
    /// app's default (its Data Protection entitlement) unless the directory was given another.
    public static let inherited = FileProtection(protectionClass: .inherited)

    /// The class's name: `complete`, `completeUnlessOpen`, `completeUntilFirstUserAuthentication`,
    /// `unprotected` or `inherited`.
    public var description: String {
        switch protectionClass {
        case .complete: "complete"
        case .completeUnlessOpen: "completeUnlessOpen"
        case .completeUntilFirstUserAuthentication: "completeUntilFirstUserAuthentication"
        case .unprotected: "unprotected"
        case .inherited: "inherited"
        }
    }

    /// Foundation's value for the class; nil for ``inherited``.
    var foundationType: FileProtectionType? {
        switch protectionClass {
        case .complete: .complete
        case .completeUnlessOpen: .completeUnlessOpen
        case .completeUntilFirstUserAuthentication: .completeUntilFirstUserAuthentication
        case .unprotected: FileProtectionType.none
        case .inherited: nil
        }
    }
}

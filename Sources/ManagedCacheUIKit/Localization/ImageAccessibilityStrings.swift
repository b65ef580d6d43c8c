import Foundation
import ManagedCacheLocking

/// The words image views speak to assistive technologies (VoiceOver) as their value while an
/// image loads and after it failed: "Loading", "Loading, 40 percent", "Failed to load"
/// (``ImageViewDisplay/accessibilityValue``).
///
/// They are localizable resources of ManagedCacheUIKit (its `Localizable` table, in English), and
/// an app supplies its own in either of two ways:
///
/// - **A strings table**: a `ManagedCacheUIKit.strings` file in the app's main bundle, one per
///   language (`de.lproj/ManagedCacheUIKit.strings`), with the keys `image.loading`,
///   `image.loadingPercent` (with `%lld` where the number goes) and `image.failedToLoad`. A key
///   the app's table lacks falls back to the package's table, then to English.
/// - **In code**: `ImageAccessibilityStrings.current = ImageAccessibilityStrings(loading: …)`,
///   for example from the app's own string catalog.
///
/// ```swift
/// ImageAccessibilityStrings.current = ImageAccessibilityStrings(
///     loading: "Wird geladen", loadingPercentFormat: "Wird geladen, %lld Prozent", failedToLoad: "Laden fehlgeschlagen")
/// ```
///
/// Strings are looked up in the person's preferred languages, in order (`Locale.preferredLanguages`):
/// for each, the app's table and then the package's, by the full name (`pt-BR`) and then the
/// language alone (`pt`).
public struct ImageAccessibilityStrings: Sendable, Hashable {
    /// Spoken while the image loads and its size is not known yet. English: "Loading".
    public var loading: String
    /// Spoken while the image loads, once the download's size is known: `%lld` stands for the
    /// whole percent downloaded. English: "Loading, %lld percent". A format with any other
    /// placeholder is not used (the English one is).
    public var loadingPercentFormat: String
    /// Spoken after the image failed to load. English: "Failed to load".
    public var failedToLoad: String

    /// Creates the strings.
    ///
    /// - Parameters:
    ///   - loading: Spoken while the image loads.
    ///   - loadingPercentFormat: Spoken while it loads with a known size; `%lld` is the percent.
    ///   - failedToLoad: Spoken after a failure.
    public init(loading: String, loadingPercentFormat: String, failedToLoad: String) {
        self.loading = loading
        self.loadingPercentFormat = loadingPercentFormat
        self.failedToLoad = failedToLoad
    }

    /// The English strings, also the last fallback of every lookup.
    public static let english = ImageAccessibilityStrings(
        loading: "Loading", loadingPercentFormat: "Loading, %lld percent", failedToLoad: "Failed to load")

    /// The name of the table an app puts in its main bundle to supply its own strings.
    public static let appTableName = "ManagedCacheUIKit"

    /// The strings in the person's preferred languages: the app's `ManagedCacheUIKit` table,
    /// then the package's, then English.
    ///
    /// - Parameters:
    ///   - languages: The languages to look in, most preferred first. Default
    ///     `Locale.preferredLanguages`.
    ///   - appBundle: Where the app's table is. Default `Bundle.main`.
    /// - Returns: The strings found, each falling back on its own.
    public static func localized(languages: [String] = Locale.preferredLanguages, appBundle: Bundle = .main) -> ImageAccessibilityStrings {
        var tables = [StringsTable(bundle: appBundle, name: appTableName)]
        if let packageBundle { tables.append(StringsTable(bundle: packageBundle, name: "Localizable")) }
        let lookup = StringsLookup(tables: tables, languages: languages)
        let english = ImageAccessibilityStrings.english
        var format = lookup.string(for: Key.loadingPercent) ?? english.loadingPercentFormat
        if !Self.isUsableFormat(format) { format = english.loadingPercentFormat }
        return ImageAccessibilityStrings(
            loading: lookup.string(for: Key.loading) ?? english.loading, loadingPercentFormat: format,
            failedToLoad: lookup.string(for: Key.failedToLoad) ?? english.failedToLoad)
    }

    /// What image views speak now: ``localized(languages:appBundle:)`` until the app sets its own.
    public static var current: ImageAccessibilityStrings {
        get { override.withLock { $0 } ?? defaultStrings }
        set { override.withLock { $0 = newValue } }
    }

    /// "Loading, 40 percent": the format with the percent in place of `%lld`.
    ///
    /// - Parameter percent: The whole percent downloaded.
    /// - Returns: The sentence to speak.
    public func loading(percent: Int) -> String {
        let format = Self.isUsableFormat(loadingPercentFormat) ? loadingPercentFormat : Self.english.loadingPercentFormat
        let number = NumberFormatter.localizedString(from: NSNumber(value: percent), number: .none)
        return format.components(separatedBy: "%%").map { $0.replacingOccurrences(of: "%lld", with: number) }.joined(separator: "%")
    }

    // MARK: - Private

    /// The table keys.
    enum Key {
        static let loading = "image.loading"
        static let loadingPercent = "image.loadingPercent"
        static let failedToLoad = "image.failedToLoad"
    }

    /// Whether `format` has exactly one placeholder, `%lld` (`%%` is a percent sign).
    static func isUsableFormat(_ format: String) -> Bool {
        let withoutLiteralPercents = format.replacingOccurrences(of: "%%", with: "")
        return withoutLiteralPercents.components(separatedBy: "%").count == 2
            && withoutLiteralPercents.components(separatedBy: "%lld").count == 2
    }

    private static let override = Lock<ImageAccessibilityStrings?>(nil)
    private static let defaultStrings = localized()

    /// The package's resource bundle, where SwiftPM builds one.
    static var packageBundle: Bundle? {
        #if SWIFT_PACKAGE
        Bundle.module
        #else
        nil
        #endif
    }
}

/// A strings table in a bundle: `<language>.lproj/<name>.strings`.
struct StringsTable {
    let bundle: Bundle
    let name: String

    /// The table's entries in `localization` (an `.lproj` folder's name), or `nil` when the
    /// bundle has no such table.
    func entries(in localization: String) -> [String: String]? {
        guard let path = bundle.path(forResource: name, ofType: "strings", inDirectory: nil, forLocalization: localization),
            let data = FileManager.default.contents(atPath: path),
            let entries = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: String]
        else { return nil }
        return entries
    }
}

/// Finds a string in tables for a list of preferred languages: for each language in order, each
/// table in order, by the full language name and then the language code alone.
struct StringsLookup {
    let tables: [StringsTable]
    let languages: [String]

    /// The `.lproj` names tried, in order: `pt-BR` then `pt` for `pt-BR`; `en` last, the
    /// package's development language.
    var localizations: [String] {
        var names: [String] = []
        for language in languages + ["en"] {
            let normalized = language.replacingOccurrences(of: "_", with: "-")
            for name in [normalized, String(normalized.prefix { $0 != "-" })] where !name.isEmpty && !names.contains(name) {
                names.append(name)
            }
        }
        return names
    }

    /// The first value for `key` found, or `nil`.
    func string(for key: String) -> String? {
        for localization in localizations {
            for table in tables {
                if let value = table.entries(in: localization)?[key] { return value }
            }
        }
        return nil
    }
}

import Foundation
import ManagedCache
import TestSupport
import Testing

@testable import ManagedCacheUIKit

/// The spoken strings: the package's English table, an app's own table per language, the
/// fallbacks, and what a view says with them. No test sets `ImageAccessibilityStrings.current`:
/// it is process-wide, and other tests read it.
@Suite struct ImageAccessibilityStringsTests {
    /// A bundle folder with a `ManagedCacheUIKit.strings` table for each language given.
    private func appBundle(_ tables: [String: [String: String]], in directory: TemporaryDirectory) throws -> Bundle {
        for (language, entries) in tables {
            let folder = directory.url.appendingPathComponent("\(language).lproj")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let text = entries.map { "\"\($0.key)\" = \"\($0.value)\";\n" }.joined()
            try Data(text.utf8).write(to: folder.appendingPathComponent("ManagedCacheUIKit.strings"))
        }
        return try #require(Bundle(path: directory.url.path))
    }

    @Test func thePackageShipsItsEnglishStringsAsAResource() throws {
        let bundle = try #require(ImageAccessibilityStrings.packageBundle)
        let entries = try #require(StringsTable(bundle: bundle, name: "Localizable").entries(in: "en"))
        #expect(
            entries == [
                "image.loading": "Loading", "image.loadingPercent": "Loading, %lld percent", "image.failedToLoad": "Failed to load",
            ])
    }

    @Test func anAppTableWinsKeyByKeyAndTheRestFallsBackToEnglish() throws {
        let directory = TemporaryDirectory()
        let bundle = try appBundle(
            ["de": ["image.loading": "Wird geladen", "image.loadingPercent": "Wird geladen, %lld Prozent"]], in: directory)
        let german = ImageAccessibilityStrings.localized(languages: ["de-DE"], appBundle: bundle)
        #expect(german.loading == "Wird geladen")
        #expect(german.loading(percent: 40) == "Wird geladen, 40 Prozent")
        #expect(german.failedToLoad == "Failed to load", "missing in the app's table: the package's English")
        // A language the app does not have: English throughout.
        #expect(ImageAccessibilityStrings.localized(languages: ["fr-FR"], appBundle: bundle) == .english)
    }

    @Test func languagesAreTriedInOrderFullNameFirst() throws {
        let directory = TemporaryDirectory()
        let bundle = try appBundle(
            ["pt-BR": ["image.loading": "Carregando"], "pt": ["image.loading": "A carregar"], "es": ["image.loading": "Cargando"]],
            in: directory)
        #expect(ImageAccessibilityStrings.localized(languages: ["pt-BR", "es"], appBundle: bundle).loading == "Carregando")
        #expect(ImageAccessibilityStrings.localized(languages: ["pt-PT", "es"], appBundle: bundle).loading == "A carregar")
        #expect(ImageAccessibilityStrings.localized(languages: ["it", "es"], appBundle: bundle).loading == "Cargando")
        let lookup = StringsLookup(tables: [], languages: ["pt_BR", "de"])
        #expect(lookup.localizations == ["pt-BR", "pt", "de", "en"])
    }

    @Test func aFormatWithAnotherPlaceholderIsNotUsed() throws {
        #expect(ImageAccessibilityStrings.isUsableFormat("Loading, %lld percent"))
        #expect(ImageAccessibilityStrings.isUsableFormat("%lld %% geladen"))
        #expect(!ImageAccessibilityStrings.isUsableFormat("Loading %@"))
        #expect(!ImageAccessibilityStrings.isUsableFormat("%lld of %lld"))
        #expect(!ImageAccessibilityStrings.isUsableFormat("Loading"))
        let directory = TemporaryDirectory()
        let bundle = try appBundle(["de": ["image.loadingPercent": "Lädt %@"]], in: directory)
        #expect(ImageAccessibilityStrings.localized(languages: ["de"], appBundle: bundle).loading(percent: 5) == "Loading, 5 percent")
        let literal = ImageAccessibilityStrings(loading: "L", loadingPercentFormat: "%lld %% geladen", failedToLoad: "F")
        #expect(literal.loading(percent: 7) == "7 % geladen")
    }

    @Test func aViewSpeaksTheStringsItIsGiven() {
        let strings = ImageAccessibilityStrings(
            loading: "Wird geladen", loadingPercentFormat: "Wird geladen, %lld Prozent", failedToLoad: "Laden fehlgeschlagen")
        let loading = ImageViewDisplay(content: .empty, isActivityIndicatorVisible: true)
        #expect(loading.accessibilityValue(using: strings) == "Wird geladen")
        #expect(loading.accessibilityValue(using: .english) == "Loading")
        let progressing = ImageViewDisplay(
            content: .empty, isActivityIndicatorVisible: true, progress: LoadProgress(receivedBytes: 40, expectedBytes: 100))
        #expect(progressing.accessibilityValue(using: strings) == "Wird geladen, 40 Prozent")
        #expect(ImageViewDisplay(content: .failure(nil)).accessibilityValue(using: strings) == "Laden fehlgeschlagen")
        #expect(ImageViewDisplay.empty.accessibilityValue(using: strings) == nil)
    }
}

// Three image features of `ManagedImageView`, shown headless on a loopback server:
//   1. a progressive JPEG shows previews while it downloads, then the image fades in over them;
//   2. the same photo in a second view is a memory hit: set at once, no fade, no request;
//   3. an image the app made (an edited avatar) is stored under its oid: a view that later loads
//      that oid shows it at once, and the server is never asked.
//
//     swift run ImageFeatures
import ExampleSupport
import Foundation
import ImageFixtures
import LoopbackServer
import ManagedCache
import ManagedCacheUIKit

// The repository's progressive JPEG fixture (several scans), served slowly: 100 bytes every 30 ms.
let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../../Tests/ManagedCacheUIKitTests/Fixtures").standardizedFileURL
let progressive = try Data(contentsOf: fixtures.appendingPathComponent("progressive.jpg"))
let server = try LoopbackServer()
server.setRoute(
    "/photo.jpg",
    LoopbackResponse.ok(progressive, contentType: "image/jpeg").behaving(.drip(chunkSize: 100, interval: 0.03)))
server.setRoute("/avatar.png", .ok(ImageFixtureEncoder.patternPNG(width: 32, height: 32, seed: 1), contentType: "image/png"))

var configuration = ObjectManager.Configuration.images()
configuration.previewInterval = 0  // every completed scan becomes a preview (default: at most 4 a second)
let manager = ObjectManager(configuration: configuration)

/// What a view showed, in order: one word per display change.
final class DisplayLog: Sendable {
    private let entries = Locked<[String]>([])
    func record(_ display: ImageViewDisplay) {
        let word: String
        switch display.content {
        case .empty: word = "empty"
        case .placeholder: word = "placeholder"
        case .preview: word = "preview"
        case .image: word = display.transition == .none ? "image (set at once)" : "image (faded in)"
        case .failure: word = "failure"
        }
        entries.withLock { if $0.last != word || word == "preview" { $0.append(word) } }
    }
    var words: [String] { entries.withLock { $0 } }
}

func waitUntil(_ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(30)
    while !condition() {
        if Date() > deadline { return false }
        usleep(5_000)
    }
    return true
}

func describe(_ words: [String]) -> String {
    let previews = words.filter { $0 == "preview" }.count
    return words.filter { $0 != "preview" }.enumerated().map { index, word in
        index == 1 && previews > 0 ? "\(previews) previews → \(word)" : word
    }.joined(separator: " → ")
}

// 1. The progressive photo, downloading.
let first = ManagedImageView(manager: manager)
let firstLog = DisplayLog()
first.displayHook = { firstLog.record($0) }
first.load(url: server.url("/photo.jpg"), oid: "photo")
let firstShown = waitUntil { first.displayed.loadedImage != nil }
print("1. progressive photo: \(describe(firstLog.words))")

// 2. The same photo in another view: from memory.
let second = ManagedImageView(manager: manager)
let secondLog = DisplayLog()
second.displayHook = { secondLog.record($0) }
second.load(url: server.url("/photo.jpg"), oid: "photo")
let shared = second.displayed.loadedImage != nil && second.displayed.loadedImage == first.displayed.loadedImage
print("2. same photo, second view: \(describe(secondLog.words)); the same image: \(shared)")

// 3. An avatar the app edited, stored under its oid, then loaded by a view.
let edited = try ImageDecoder().decodeImage(ImageFixtureEncoder.patternPNG(width: 32, height: 32, seed: 99))
let editor = ManagedImageView(manager: manager)
editor.setImage(edited, oid: "avatar-me")
let reader = ManagedImageView(manager: manager)
reader.load(url: server.url("/avatar.png"), oid: "avatar-me")
let storedShown = reader.displayed.loadedImage == edited
print(
    "3. stored avatar: shown by a later view at once: \(storedShown); "
        + "avatar requests to the server: \(server.requestCount(for: "/avatar.png"))")

let previews = firstLog.words.filter { $0 == "preview" }.count
let photoRequests = server.requestCount(for: "/photo.jpg")
print("photo requests to the server: \(photoRequests); previews shown: \(previews)")
server.stop()
// CI runs this example: each feature must have done what it says.
let faded = firstLog.words.last == "image (faded in)"
let atOnce = secondLog.words.last == "image (set at once)"
guard firstShown, previews > 0, faded, atOnce, shared, storedShown, photoRequests == 1,
    server.requestCount(for: "/avatar.png") == 0
else {
    print("FAILED: a feature did not behave as described")
    exit(1)
}

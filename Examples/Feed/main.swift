// The main example: a feed of 300 posts (author avatars shared between rows, one photo per post)
// shown through 8 reused cells of headless `ManagedImageView`s, scrolled fast, then stopped,
// against a loopback server that answers like a phone network. Run it twice: the second run
// reads from the file cache.
//
//     swift run Feed            (add --fresh to empty the file cache first)
import Foundation
import LoopbackServer
import ManagedCache
import ManagedCacheUIKit

let rows = 300, authors = 12, visibleRows = 8
let cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("ManagedCacheFeedExample")
if CommandLine.arguments.contains("--fresh") { try? FileManager.default.removeItem(at: cacheDirectory) }

// The server generates its images: 32×32 avatars and 96×96 photos (PNG), each different.
let server = try LoopbackServer(configuration: .init(latency: 0.08, bytesPerSecond: 1_500_000))
let avatars = (0..<authors).map { ImageFixtureEncoder.patternPNG(width: 32, height: 32, seed: $0) }
let photos = (0..<rows).map { ImageFixtureEncoder.patternPNG(width: 96, height: 96, seed: 1_000 + $0) }
server.setFallback { request in
    let parts = request.path.split(separator: "/")
    guard parts.count == 2, let index = Int(parts[1].dropLast(4)) else { return nil }
    switch parts[0] {
    case "avatars" where index < authors: return .ok(avatars[index], contentType: "image/png")
    case "photos" where index < rows: return .ok(photos[index], contentType: "image/png")
    default: return nil
    }
}
func avatarURL(row: Int) -> URL { server.url("/avatars/\(row % authors).png") }
func photoURL(row: Int) -> URL { server.url("/photos/\(row).png") }

// One manager: the loading buffer holds what is on screen (8 rows × 2 images) plus a little.
var configuration = ObjectManager.Configuration()
configuration.loadingBufferSize = 20
configuration.memoryCacheCountLimit = 60
configuration.fileCache = try FileCache(directory: cacheDirectory)
let manager = ObjectManager(configuration: configuration)

/// A table cell: an avatar and a photo view, reused for whatever row scrolls into it.
final class Cell: Sendable {
    let avatar = ManagedImageView(manager: manager)
    let photo = ManagedImageView(manager: manager)

    func show(row: Int) {
        // The server's port changes from run to run; the oid keeps the cache key stable.
        avatar.load(url: avatarURL(row: row), oid: "avatar-\(row % authors)")
        photo.load(url: photoURL(row: row), oid: "photo-\(row)")
    }

    var isShowingImages: Bool {
        [avatar, photo].allSatisfy { if case .image = $0.displayed { return true } else { return false } }
    }
}

let cells = (0..<visibleRows).map { _ in Cell() }
var shownRows = Set<Int>()
@MainActor func scroll(to top: Int) {
    for offset in 0..<visibleRows {
        let row = top + offset
        cells[row % visibleRows].show(row: row)  // the cell that scrolls in is the one that scrolled out
        shownRows.insert(row)
    }
}

@MainActor func report(_ label: String) {
    let s = manager.statistics
    let line = "\(label): \(shownRows.count) rows shown, \(s.networkLoads) downloads, "
        + "\(s.loadsCancelledByBuffer) cancelled by the buffer, \(s.bytesDownloaded / 1024) KiB"
    FileHandle.standardOutput.write(Data(("\r" + line.padding(toLength: 100, withPad: " ", startingAt: 0)).utf8))
}

// Scroll fast (3 rows a frame, 60 frames a second), faster than the network answers, then stop.
let started = Date()
let restingTop = rows - visibleRows
var top = 0
while top < restingTop {
    scroll(to: top)
    if top % 30 == 0 { report("scrolling") }
    top = min(restingTop, top + 3)
    usleep(16_000)
}
scroll(to: restingTop)
let stopped = Date()
let deadline = Date().addingTimeInterval(30)
while !cells.allSatisfy(\.isShowingImages), Date() < deadline {
    usleep(10_000)
}
report("done     ")
print()

// The bill: what we downloaded against a naive loader that fetches every image of every row it shows.
let s = manager.statistics
let naiveBytes = shownRows.reduce(0) { $0 + avatars[$1 % authors].count + photos[$1].count }
let table: [(String, String)] = [
    ("rows shown", "\(shownRows.count)"),
    ("rows at rest, all images shown", cells.allSatisfy(\.isShowingImages) ? "yes" : "NO"),
    ("time from stop to rows at rest shown", String(format: "%.2f s", Date().timeIntervalSince(stopped))),
    ("network loads (HTTP requests)", "\(s.networkLoads) (\(server.totalRequestCount))"),
    ("loads cancelled by the loading buffer", "\(s.loadsCancelledByBuffer)"),
    ("shared-object hits (from a live handler)", "\(s.sharedObjectHits)"),
    ("memory-cache hits", "\(s.memoryHits)"),
    ("file-cache hits", "\(s.fileCacheHits)"),
    ("coalesced joins", "\(s.coalescedJoins)"),
    ("bytes downloaded", "\(s.bytesDownloaded / 1024) KiB"),
    ("bytes a naive loader would download", "\(naiveBytes / 1024) KiB"),
    ("total time", String(format: "%.2f s", Date().timeIntervalSince(started))),
]
print("\n| measure | value |\n| --- | --- |")
for (name, value) in table { print("| \(name) | \(value) |") }
print("\nfile cache: \(cacheDirectory.path) — run again to load from it, or pass --fresh")
server.stop()
if !cells.allSatisfy(\.isShowingImages) {  // CI runs this example: the rows at rest must show
    for row in restingTop..<restingTop + visibleRows {
        let cell = cells[row % visibleRows]
        for (name, view) in [("avatar", cell.avatar), ("photo", cell.photo)] where view.displayed.loadedImage == nil {
            let state = view.isActivityIndicatorVisible ? "still loading" : "not loading"
            print("row at rest \(row): \(name) \(view.oid ?? "?") not shown, \(state), showing \(view.displayed)")
        }
    }
    exit(1)
}

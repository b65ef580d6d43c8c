// The main example: a feed of 300 posts (an author's avatar and a photo each; authors post
// several rows in a row, so rows share avatars) shown through 8 reused cells of headless
// `ManagedImageView`s, scrolled faster than the network answers, then stopped; then the app is
// "launched" again: a new manager on the same file cache scrolls the same way. The network
// (a loopback server with phone-like latency and bandwidth) answers only once a scroll stops,
// so every run prints the same counts. Its output is explained line by line in
// Sources/ManagedCache/ManagedCache.docc/FeedExample.md.
//
//     swift run Feed        (`--fresh` is accepted: every run starts from an empty cache anyway)
import ExampleSupport
import Foundation
import ImageFixtures
import LoopbackServer
import ManagedCache
import ManagedCacheUIKit

let rows = 300
let authors = 12
let visibleRows = 8
let rowsPerFrame = 3
let cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("ManagedCacheFeedExample")
try? FileManager.default.removeItem(at: cacheDirectory)
let isTerminal = isatty(STDOUT_FILENO) == 1
func write(_ text: String) { FileHandle.standardOutput.write(Data(text.utf8)) }  // unbuffered, in order

// Who wrote each row: runs of 1 to 4 posts by one author, from a fixed seed.
let authorOfRow: [Int] = {
    var (seed, authorOfRow): (UInt64, [Int]) = (14, [])
    while authorOfRow.count < rows {
        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let author = (authorOfRow.last.map { $0 + 1 + Int(seed >> 40) % (authors - 1) } ?? 0) % authors
        authorOfRow += Array(repeating: author, count: 1 + Int(seed >> 20) % 4)
    }
    return authorOfRow
}()

// The server makes its images: 32×32 avatars and 96×96 photos (PNG), each different.
let server = try LoopbackServer(configuration: .init(latency: 0.08, bytesPerSecond: 1_500_000))
let avatars = (0..<authors).map { ImageFixtureEncoder.patternPNG(width: 32, height: 32, seed: $0) }
let photos = (0..<rows).map { ImageFixtureEncoder.patternPNG(width: 96, height: 96, seed: 1_000 + $0) }
server.setFallback { request in
    let parts = request.path.split(separator: "/")
    guard parts.count == 2, let index = Int(parts[1].dropLast(4)) else { return nil }
    if parts[0] == "avatars", index < authors { return .ok(avatars[index], contentType: "image/png") }
    if parts[0] == "photos", index < rows { return .ok(photos[index], contentType: "image/png") }
    return nil
}

/// The phone network of this simulation: nothing arrives while the finger moves (a scroll of 180
/// rows a second outruns any phone), and what is still wanted goes out once it stops. A load
/// cancelled while it waits never reaches the server.
struct HeldNetwork: DataLoading {
    static let isOpen = Locked(false)
    let base = URLSessionDataLoader()
    func canLoad(_ url: URL) -> Bool { base.canLoad(url) }
    func load(_ request: DataLoadRequest, receiver: any DataLoadReceiver) async throws -> DataLoadResponse {
        receiver.requestIsWaitingForConnection()  // the wait is not the idle timeout's business
        while !Self.isOpen.withLock({ $0 }) { try await Task.sleep(nanoseconds: 2_000_000) }
        return try await base.load(request, receiver: receiver)
    }
}

/// A table cell: an avatar and a photo view, reused for whatever row scrolls into it. The oids keep
/// the cache keys stable while the server's port changes from run to run.
final class Cell: Sendable {
    let avatar: ManagedImageView, photo: ManagedImageView
    init(manager: ObjectManager) { (avatar, photo) = (ManagedImageView(manager: manager), ManagedImageView(manager: manager)) }
    func show(row: Int) {
        avatar.load(url: server.url("/avatars/\(authorOfRow[row]).png"), oid: "avatar-\(authorOfRow[row])")
        photo.load(url: server.url("/photos/\(row).png"), oid: "photo-\(row)")
    }
    var showsImages: Bool { [avatar, photo].allSatisfy { $0.displayed.loadedImage != nil } }
}

/// One launch of the app: a new manager and new cells on the file cache; a scroll from the top to
/// the end of the feed, or (`reopened`) the last rows at once, as an app restores its position.
@MainActor func launch(reopened: Bool) -> (statistics: ManagerStatistics, seconds: Double) {
    var configuration = ObjectManager.Configuration()
    configuration.loadingBufferSize = 20  // what is on screen (at most 16 images) and a little more
    configuration.memoryCacheCountLimit = 60
    configuration.fileCache = try? FileCache(directory: cacheDirectory)
    configuration.dataLoader = HeldNetwork()
    configuration.policy.fileCacheDelivery = .synchronous  // small images: on screen inside `load`,
    configuration.synchronousFileReadTimeBudget = .infinity  // however slow the disk: the same counts every run
    configuration.manageLockWaitBudget = .infinity  // and however busy the locks (the cache's opening holds its own)
    let manager = ObjectManager(configuration: configuration)
    let cells = (0..<visibleRows).map { _ in Cell(manager: manager) }
    HeldNetwork.isOpen.withLock { $0 = false }
    var top = reopened ? rows - visibleRows : 0
    for row in top..<top + visibleRows { cells[row % visibleRows].show(row: row) }
    while top < rows - visibleRows {
        let next = min(rows - visibleRows, top + rowsPerFrame)
        for row in top + visibleRows..<next + visibleRows { cells[row % visibleRows].show(row: row) }  // reuse
        top = next
        if isTerminal, top % 15 == 0 { write("\rscrolling: row \(top + visibleRows) of \(rows)\u{1B}[K") }
        usleep(16_000)  // one frame at 60 frames a second
    }
    let stopped = Date()
    HeldNetwork.isOpen.withLock { $0 = true }
    let deadline = Date().addingTimeInterval(30)
    while !cells.allSatisfy(\.showsImages), Date() < deadline { usleep(2_000) }
    let seconds = Date().timeIntervalSince(stopped)
    while manager.activeLoadCount > 0, Date() < deadline { usleep(2_000) }  // loads still in the buffer
    if isTerminal { write("\r\u{1B}[K") }
    guard cells.allSatisfy(\.showsImages) else {  // CI runs this example: the rows at rest must show
        for (index, cell) in cells.enumerated() { write("cell \(index): \(cell.avatar.displayed), \(cell.photo.displayed)\n") }
        exit(1)
    }
    return (manager.statistics, seconds)
}

/// A line of the report: a label, its count right-aligned in column 79.
func line(_ label: String, _ count: Int) -> String {
    label + String(repeating: " ", count: max(1, 79 - label.count - String(count).count)) + String(count)
}

write(
    """
    Feed: a phone scrolls 300 posts (avatar + photo) through 8 reused cells faster
    than its network answers, then stops. Look at shared, cancelled and launch 2.

    """)
let (first, firstSeconds) = launch(reopened: false)
let (second, secondSeconds) = launch(reopened: true)
server.stop()
let naive = (0..<rows).reduce(0) { $0 + avatars[authorOfRow[$1]].count + photos[$1].count }
let newLoads = first.requests - first.memoryHits - first.sharedObjectHits - first.coalescedJoins - first.fileCacheHits
write(
    """
    launch 1: empty caches, a scroll from the top to rows 293-300
    \(line("  image requests: each row's photo, and its avatar unless the cell has it", first.requests))
    \(line("    shared: the avatar of a row above by that author, still loading", first.coalescedJoins + first.sharedObjectHits))
    \(line("    new loads: the rest, each waiting for the network", newLoads))
    \(line("      cancelled: scrolled past, pushed out of the loading buffer (20)", first.loadsCancelledByBuffer))
    \(line("      downloaded: the rows at rest, and the buffer's other last loads", first.networkLoads))
    \(line("  KiB downloaded", first.bytesDownloaded / 1024))
    \(line("  KiB a naive loader would download: every image of every row shown", naive / 1024))
      rows at rest on screen \(String(format: "%.2f", firstSeconds)) s after the scroll stopped
    launch 2: a new manager on the same file cache, reopened at rows 293-300
    \(line("  image requests", second.requests))
    \(line("    from the file cache: read inside `load`, on screen at once", second.fileCacheHits))
    \(line("    from memory: the avatar a row above just read (one shared object)", second.memoryHits))
    \(line("    downloaded", second.networkLoads))
      rows at rest on screen \(String(format: "%.2f", secondSeconds)) s after the launch
    (times vary with the machine; every count is the same on every run)

    """)

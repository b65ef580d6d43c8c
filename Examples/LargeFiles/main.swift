// Large files: three "PDFs" (8 MB each) streamed straight into a `BigFileCache` with a progress
// bar (redrawn in place on a terminal, plain lines in a pipe), handed back as file URLs (never
// copied into memory), then read back from disk.
//
//     swift run LargeFiles
import Foundation
import LoopbackServer
import ManagedCache

let server = try LoopbackServer(configuration: .init(bytesPerSecond: 40_000_000))
let documents = (1...3).map { index -> Data in
    var bytes = Data("%PDF-1.7\n% document \(index)\n".utf8)
    bytes.append(Data(repeating: UInt8(index), count: 8_000_000))
    bytes.append(Data("\n%%EOF\n".utf8))
    return bytes
}
for (index, document) in documents.enumerated() {
    server.setRoute(
        "/docs/\(index + 1).pdf",
        LoopbackResponse.ok(document, contentType: "application/pdf")
            .caching(etag: "\"doc-\(index + 1)\""))
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ManagedCacheLargeFilesExample")
try? FileManager.default.removeItem(at: directory)
var configuration = ObjectManager.Configuration()
configuration.fileCache = try BigFileCache(directory: directory, configuration: .init(byteLimit: 100_000_000))
configuration.inMemoryThreshold = 1 << 20  // bodies over 1 MiB go to disk only
let manager = ObjectManager(configuration: configuration)

/// The progress of one download: a bar redrawn in place on a terminal, plain lines elsewhere
/// (a pipe, a CI log), where a carriage return would pile every redraw onto one long line.
struct ProgressBar {
    static let isTerminal = isatty(STDOUT_FILENO) == 1
    let label: String
    var shown = -1  // the last percentage (terminal) or quarter (plain lines) shown

    mutating func update(_ progress: LoadProgress) {
        let fraction = progress.fractionCompleted ?? 0
        let percent = Int(fraction * 100)
        if Self.isTerminal {
            guard percent != shown else { return }
            shown = percent
            let filled = Int(fraction * 40)
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: 40 - filled)
            let received = "\(progress.receivedBytes / 1_000_000) MB"
            write("\r\(label) [\(bar)] \(String(format: "%3d%%", percent)) \(received)\u{1B}[K")
        } else if percent / 25 > shown {
            shown = percent / 25
            write("\(label): \(percent) % (\(progress.receivedBytes) bytes)\n")
        }
    }

    /// Ends the bar's line on a terminal, so the next output starts on a line of its own.
    func finish() { if Self.isTerminal { write("\n") } }

}

/// Every line goes out unbuffered, in order with the bar (print's buffer would hold lines back in a pipe).
func write(_ text: String) { FileHandle.standardOutput.write(Data(text.utf8)) }

for index in 1...3 {
    let request = ObjectRequest(url: server.url("/docs/\(index).pdf"), oid: "document-\(index)")
    var bar = ProgressBar(label: "document \(index)")
    for try await event in manager.loadEvents(for: request, decoder: FileURLDecoder()) {
        switch event {
        case .progress(let progress):
            bar.update(progress)
        case .object(let file, let origin):
            bar.finish()
            let size = try FileManager.default.attributesOfItem(atPath: file.url.path)[.size] as? Int ?? 0
            write("document \(index): \(size) bytes in the cache's file \(file.url.lastPathComponent.prefix(12))…, from \(origin)\n")
        }
    }
}

// Ask again: the file cache answers with the same files, no download.
manager.removeAllObjects()
let again = try await manager.object(
    for: ObjectRequest(url: server.url("/docs/2.pdf"), oid: "document-2"),
    decoder: FileURLDecoder())
let handle = try FileHandle(forReadingFrom: again.url)
let header = String(decoding: try handle.read(upToCount: 8) ?? Data(), as: UTF8.self)
try handle.close()
let statistics = manager.statistics
write(
    """

    again: the same file \(again.url.lastPathComponent.prefix(12))…, starting with "\(header)"
    downloads: \(statistics.networkLoads), file-cache hits: \(statistics.fileCacheHits), \
    downloaded: \(statistics.bytesDownloaded / 1_000_000) MB
    file cache: \(configuration.fileCache!.statistics.count) entries, \(configuration.fileCache!.statistics.totalBytes / 1_000_000) MB

    """)

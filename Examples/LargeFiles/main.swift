// Large files: three "PDFs" (8 MB each) streamed straight into a `BigFileCache` with a progress
// bar, handed back as file URLs (never copied into memory), then read back from disk.
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
    server.setRoute("/docs/\(index + 1).pdf", LoopbackResponse.ok(document, contentType: "application/pdf")
        .caching(etag: "\"doc-\(index + 1)\""))
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ManagedCacheLargeFilesExample")
try? FileManager.default.removeItem(at: directory)
var configuration = ObjectManager.Configuration()
configuration.fileCache = try BigFileCache(directory: directory, configuration: .init(byteLimit: 100_000_000))
configuration.inMemoryThreshold = 1 << 20  // bodies over 1 MiB go to disk only
let manager = ObjectManager(configuration: configuration)

/// Draws `[#####.....]  42%` on one line.
func bar(_ progress: LoadProgress, label: String) -> String {
    let fraction = progress.fractionCompleted ?? 0
    let filled = Int(fraction * 30)
    return "\r\(label) [" + String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled)
        + "] " + String(format: "%3.0f%%", fraction * 100)
}

for index in 1...3 {
    let request = ObjectRequest(url: server.url("/docs/\(index).pdf"), oid: "document-\(index)")
    var lastDrawn = -1
    for try await event in manager.loadEvents(for: request, decoder: FileURLDecoder()) {
        switch event {
        case .progress(let progress):
            let percent = Int((progress.fractionCompleted ?? 0) * 100)
            if percent != lastDrawn {
                lastDrawn = percent
                FileHandle.standardOutput.write(Data(bar(progress, label: "document \(index)").utf8))
            }
        case .object(let file, let origin):
            let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? 0
            print("\ndocument \(index): \(size) bytes at \(file.lastPathComponent) (from \(origin))")
        }
    }
}

// Ask again: the file cache answers with the same files, no download.
manager.removeAllObjects()
let again = try await manager.object(for: ObjectRequest(url: server.url("/docs/2.pdf"), oid: "document-2"),
                                     decoder: FileURLDecoder())
let handle = try FileHandle(forReadingFrom: again)
let header = String(decoding: try handle.read(upToCount: 8) ?? Data(), as: UTF8.self)
try handle.close()
let statistics = manager.statistics
print("""

again: \(again.lastPathComponent) starts with "\(header)"
downloads: \(statistics.networkLoads), file-cache hits: \(statistics.fileCacheHits), \
downloaded: \(statistics.bytesDownloaded / 1_000_000) MB
file cache: \(configuration.fileCache!.statistics.count) entries, \(configuration.fileCache!.statistics.totalBytes / 1_000_000) MB
""")

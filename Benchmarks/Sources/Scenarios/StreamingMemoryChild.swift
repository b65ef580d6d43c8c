import Foundation
import ManagedCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The streaming scenario's measuring half, run in a fresh child process (`--streaming-child`):
/// one large download from the parent's loopback server at full speed, with the resident memory
/// of this process only. `client=cache`: the manager with a `FileCache` and a `FileURLDecoder`;
/// `client=nocache`: the manager without a file cache (the body goes to a temporary file in the
/// directory given); `client=session`: raw `URLSession` with a delegate writing each chunk to a
/// file (what FoundationNetworking does without back-pressure). Prints one `streaming-result` line.
struct StreamingMemoryChild {
    /// The command-line flag that selects this mode.
    static let flag = "--streaming-child"

    let url: URL
    let client: String
    let directory: URL
    let byteCount: Int

    init(arguments: [String: String]) {
        url = arguments["url"].flatMap { URL(string: $0) } ?? URL(string: "http://127.0.0.1:1/")!
        client = arguments["client"] ?? "cache"
        directory = URL(fileURLWithPath: arguments["directory"] ?? NSTemporaryDirectory())
        byteCount = arguments["bytes"].flatMap { Int($0) } ?? 0
    }

    /// The arguments that make a child run this workload.
    static func arguments(url: URL, client: String, directory: URL, byteCount: Int) -> [String] {
        [flag, "url=\(url.absoluteString)", "client=\(client)", "directory=\(directory.path)", "bytes=\(byteCount)"]
    }

    /// Runs the workload; returns the exit status.
    func run() -> Int32 {
        do {
            print(try measure())
            return 0
        } catch {
            print("streaming-error \(error)")
            return 1
        }
    }

    private func measure() throws -> String {
        // The file, and what keeps it (a `DecodedFile` deletes its temporary file when released).
        let load: (URL) throws -> (URL, AnyObject?)
        var manager: ObjectManager?
        if client == "session" {
            load = { url in
                (try SessionFileDownload.run(url, to: directory.appendingPathComponent("session-\(UUID().uuidString)")), nil)
            }
        } else {
            var configuration = ObjectManager.Configuration()
            if client == "cache" { configuration.fileCache = try FileCache(directory: directory.appendingPathComponent("cache")) }
            configuration.policy.timeout = 120
            let made = ObjectManager(configuration: configuration)
            manager = made
            load = { url in
                let file = try AsyncBridge.wait { try await made.object(for: ObjectRequest(url: url), decoder: FileURLDecoder()) }
                return (file.url, file)
            }
        }
        // Warm up the session, libcurl and the executors: that is idle.
        _ = try load(url.appendingPathComponent("warm-up"))
        Thread.sleep(forTimeInterval: 0.2)
        let idle = ProcessMemory.residentBytes ?? 0
        let reset = ProcessMemory.resetPeak()
        let start = Stopwatch.now()
        let (file, owner) = try load(url)
        let seconds = Stopwatch.seconds(since: start)
        let peak = ProcessMemory.peakResidentBytes ?? 0
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? -1
        withExtendedLifetime((manager, owner)) {}
        return "streaming-result idle=\(idle) peak=\(peak) seconds=\(seconds) size=\(size) reset=\(reset)"
    }
}

/// Raw `URLSession` downloading one URL to a file through a data delegate that writes each chunk
/// as it is delivered (on the session's default delegate queue).
final class SessionFileDownload: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // Safe to be Sendable: `handle` is only used on the session's serial delegate queue, and
    // `failure` is written there before `done` is signalled and read after `done.wait()`.
    private let handle: FileHandle
    private let done = DispatchSemaphore(value: 0)
    private var failure: (any Error)?

    private init(handle: FileHandle) {
        self.handle = handle
    }

    /// Downloads `url` into `file`; returns `file`.
    static func run(_ url: URL, to file: URL) throws -> URL {
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw BenchmarkFailure("cannot create \(file.path)")
        }
        let delegate = SessionFileDownload(handle: try FileHandle(forWritingTo: file))
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        session.dataTask(with: url).resume()
        delegate.done.wait()
        try delegate.handle.close()
        if let failure = delegate.failure { throw failure }
        return file
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        do { try handle.write(contentsOf: data) } catch { failure = error }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error, failure == nil { failure = error }
        done.signal()
    }
}

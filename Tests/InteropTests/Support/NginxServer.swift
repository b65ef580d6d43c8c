import ChildProcesses
import Foundation
import ManagedCacheLocking
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real nginx on 127.0.0.1, started for one test with a configuration of its own in a
/// temporary directory, and stopped by its PID.
///
/// Everything nginx writes stays in that directory: the configuration, the PID file, the error
/// and access logs, the temporary-file folders and the document root (`www/`). nginx runs in the
/// foreground as a single process (`daemon off; master_process off;`), so the process the test
/// launched is the one serving, and it never switches users (no `user` directive, no writes under
/// `/var`). The access log has one line per request in a fixed format, see ``AccessLogLine``.
final class NginxServer: Sendable {
    /// The nginx executable: `$NGINX` when set (set it to a path that does not exist to see the
    /// tests skip), else the first `nginx` on `PATH`, `/usr/sbin` or `/usr/local/sbin`.
    static let executable: String? = {
        if let explicit = ProcessInfo.processInfo.environment["NGINX"] {
            return FileManager.default.isExecutableFile(atPath: explicit) ? explicit : nil
        }
        var candidates: [String] = []
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        candidates += path.split(separator: ":").map { "\($0)/nginx" }
        candidates += ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Whether the interoperability tests can run (the tests' `.enabled(if:)` condition).
    static var isAvailable: Bool { executable != nil }

    /// The directory holding everything of this instance.
    let directory: TemporaryDirectory
    /// The document root.
    let root: URL
    /// The port nginx listens on (127.0.0.1 only).
    let port: Int
    /// The nginx process (in a lock only to make this class `Sendable`; tests call `stop` once).
    private let process: SpawnedProcess

    /// Writes the configuration (`http` directives and the `server` block's `locations` are
    /// inserted as given), creates the document root and starts nginx on a free port; returns
    /// once it accepts connections. Blocks: call it from a test marked `.offCooperativePool`.
    init(http: String = "", locations: String) throws {
        guard let executable = Self.executable else { throw NginxError.notInstalled }
        directory = TemporaryDirectory(prefix: "ManagedCacheInterop")
        root = directory.appending("www")
        let fileManager = FileManager.default
        for folder in ["www", "temp/body", "temp/proxy", "temp/fastcgi", "temp/uwsgi", "temp/scgi"] {
            try fileManager.createDirectory(at: directory.appending(folder), withIntermediateDirectories: true)
        }
        var lastError: (any Error)?
        // A port found free can be taken before nginx binds it: try a few.
        for _ in 0..<5 {
            let port = try Self.freePort()
            let configuration = Self.configuration(directory: directory.url.path, port: port, http: http, locations: locations)
            let file = directory.appending("nginx.conf")
            try configuration.write(to: file, atomically: true, encoding: .utf8)
            // -p: the prefix; -e: the error log before the configuration is read (the compiled-in
            // one is under /var/log); -c: the configuration.
            let process = try SpawnedProcess(
                executable: URL(fileURLWithPath: executable),
                arguments: ["-p", directory.url.path + "/", "-e", directory.appending("error.log").path, "-c", file.path],
                standardOutput: .discard, standardError: .discard)
            // Ready: it accepts connections and has written its PID file (nginx listens first).
            let pidFile = directory.appending("nginx.pid")
            if Self.waitUntilListening(port: port, process: process),
                waitUntilBlocking(
                    timeout: 20,
                    {
                        (try? String(contentsOf: pidFile, encoding: .utf8)).flatMap {
                            Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
                        }
                            == process.processIdentifier
                    })
            {
                self.port = port
                self.process = process
                return
            }
            process.send(SIGKILL)
            process.waitUntilExit()
            lastError = NginxError.didNotStart(errorLog: (try? String(contentsOf: directory.appending("error.log"), encoding: .utf8)) ?? "")
        }
        throw lastError ?? NginxError.didNotStart(errorLog: "")
    }

    deinit {
        stop()
    }

    /// The PID nginx wrote to its PID file (the launched process: it runs as a single process).
    var pid: Int32? {
        guard let text = try? String(contentsOf: directory.appending("nginx.pid"), encoding: .utf8) else { return nil }
        return Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Stops nginx by its PID with SIGKILL and waits for it. Idempotent.
    ///
    /// Not SIGTERM: `Process` starts nginx from one of the test process's threads, whose signal
    /// mask blocks SIGTERM (Dispatch's worker threads block most signals), and the child inherits
    /// that mask; nginx in single-process mode never unblocks it (its status showed SIGTERM in
    /// `SigBlk`), so a SIGTERM only ever waited out a timeout. Nothing of nginx's needs to outlive
    /// the test: its files are in the test's temporary directory.
    func stop() {
        process.send(SIGKILL)
        process.waitUntilExit()
    }

    /// `http://127.0.0.1:PORT/path`.
    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    /// Writes `data` at `path` under the document root (folders created as needed).
    func publish(_ data: Data, at path: String) throws {
        let file = root.appendingPathComponent(String(path.drop(while: { $0 == "/" })))
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file)
    }

    /// Sets the modification time of the file at `path` (nginx's `Last-Modified` and `ETag` come from it).
    func setModificationDate(_ date: Date, at path: String) throws {
        let file = root.appendingPathComponent(String(path.drop(while: { $0 == "/" })))
        try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: file.path)
    }

    /// The access log so far, one entry per finished request, oldest first.
    var accessLog: [AccessLogLine] {
        guard let text = try? String(contentsOf: directory.appending("access.log"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { AccessLogLine(String($0)) }
    }

    /// The access log's entries for `path` (the request URI, query included).
    func requests(for path: String) -> [AccessLogLine] {
        accessLog.filter { $0.uri == path }
    }

    // MARK: Start-up

    private static func configuration(directory: String, port: Int, http: String, locations: String) -> String {
        """
        daemon off;
        master_process off;
        worker_processes 1;
        pid \(directory)/nginx.pid;
        error_log \(directory)/error.log warn;
        events { worker_connections 128; }
        http {
            log_format interop escape=json '$request_method\\t$request_uri\\t$status\\t$body_bytes_sent\\t'
                '$http_range\\t$http_if_range\\t$http_if_none_match\\t$http_if_modified_since\\t'
                '$http_accept_encoding\\t$sent_http_content_encoding\\t$sent_http_etag';
            access_log \(directory)/access.log interop;
            client_body_temp_path \(directory)/temp/body;
            proxy_temp_path \(directory)/temp/proxy;
            fastcgi_temp_path \(directory)/temp/fastcgi;
            uwsgi_temp_path \(directory)/temp/uwsgi;
            scgi_temp_path \(directory)/temp/scgi;
            default_type application/octet-stream;
            keepalive_timeout 30s;
        \(http)
            server {
                listen 127.0.0.1:\(port);
                server_name interop;
                root \(directory)/www;
        \(locations)
            }
        }
        """
    }

    /// A port nothing listens on now: bind port 0 on 127.0.0.1, read it, close.
    private static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw NginxError.noFreePort }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else { throw NginxError.noFreePort }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether a TCP connection to the port succeeds before the process exits (bounded wait).
    private static func waitUntilListening(port: Int, process: SpawnedProcess) -> Bool {
        waitUntilBlocking(timeout: 20) {
            guard process.isRunning else { return true }
            return canConnect(port: port)
        } && process.isRunning
    }

    private static func canConnect(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// Why an nginx could not be started.
enum NginxError: Error {
    case notInstalled
    case noFreePort
    case didNotStart(errorLog: String)
}

/// One line of the interop access log: what the request asked and what nginx answered.
struct AccessLogLine: Sendable, Equatable {
    var method: String
    var uri: String
    var status: Int
    var bodyBytesSent: Int
    var range: String
    var ifRange: String
    var ifNoneMatch: String
    var ifModifiedSince: String
    var acceptEncoding: String
    var contentEncoding: String
    var etag: String

    init?(_ line: String) {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map {
            // `escape=json` writes a quote as \" in the log.
            $0.replacingOccurrences(of: "\\\"", with: "\"")
        }
        guard fields.count == 11, let status = Int(fields[2]), let bytes = Int(fields[3]) else { return nil }
        method = fields[0]
        uri = fields[1]
        self.status = status
        bodyBytesSent = bytes
        range = fields[4]
        ifRange = fields[5]
        ifNoneMatch = fields[6]
        ifModifiedSince = fields[7]
        acceptEncoding = fields[8]
        contentEncoding = fields[9]
        etag = fields[10]
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over the system calls the file caches use.
///
/// The caches avoid `FileManager` on every path that runs per entry: on Linux it stats where a
/// name would do, its `replaceItemAt` is broken and `moveItem` refuses to replace. Every wrapper
/// retries `EINTR`, opens descriptors close-on-exec (a child process must never inherit a
/// descriptor that holds one of the caches' `flock` locks) and reports failure as an `errno`
/// value instead of throwing, so callers decide what a failure means.
enum Posix {
    /// Opens `path`; returns the descriptor, or `-errno`. With `O_CREAT` the file is set to `mode`
    /// (default `0600`), whatever the umask (`PrivateFiles`); with `settlingMode: false` it keeps
    /// what `open(2)` gave it, `mode` less the umask's bits, for a caller that knows the umask
    /// takes none of `mode`'s (see `StoreState.entryFilesNeedModeSettled`).
    static func openFile(
        _ path: String, _ flags: Int32, mode: mode_t = PrivateFiles.fileMode, settlingMode: Bool = true
    ) -> Int32 {
        while true {
            let fd = path.withCString { open($0, flags | O_CLOEXEC, mode) }
            if fd >= 0, settlingMode, flags & O_CREAT != 0 { PrivateFiles.settleMode(of: fd, mode) }
            if fd >= 0 { return fd }
            if errno != EINTR { return -errno }
        }
    }

    /// Opens the file of a cache entry to read it; returns the descriptor, or `-errno`.
    ///
    /// On Linux without updating the file's access time (`O_NOATIME`; Glibc's module does not
    /// export the flag, whose value is the same on x86-64 and arm64). The caches keep their own
    /// recency, and the first read of a file written since it was last read (under `relatime`,
    /// the default) updates that time: it dirties the inode, which ext4 then journals. That was
    /// 18 % of a synchronous file-cache hit's read in `manage-latency`. `O_NOATIME`
    /// needs the file's owner; another user's file is opened plainly.
    static func openForReading(_ path: String) -> Int32 {
        #if os(Linux) && (arch(x86_64) || arch(arm64))
        let descriptor = openFile(path, O_RDONLY | 0o1_000_000)
        if descriptor != -EPERM { return descriptor }
        #endif
        return openFile(path, O_RDONLY)
    }

    /// Closes a descriptor, ignoring errors (nothing useful can be done about them here).
    static func closeFile(_ fd: Int32) {
        if fd >= 0 { _ = close(fd) }
    }

    /// Writes all of `buffer` at the descriptor's offset; returns 0 or an `errno` value.
    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32 {
        guard let base = buffer.baseAddress else { return 0 }
        var offset = 0
        while offset < buffer.count {
            let written = write(fd, base + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if written == 0 { return EIO }
            offset += written
        }
        return 0
    }

    /// Reads up to `count` bytes at `offset` (or the current position when `offset` is nil) into
    /// `buffer`, looping over short reads; returns the number read (less only at end of file) or `-errno`.
    static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int? = nil) -> Int {
        var done = 0
        while done < count {
            let got: Int
            if let offset {
                got = pread(fd, buffer + done, count - done, off_t(offset + done))
            } else {
                got = read(fd, buffer + done, count - done)
            }
            if got < 0 {
                if errno == EINTR { continue }
                return -Int(errno)
            }
            if got == 0 { break }
            done += got
        }
        return done
    }

    /// The first `limit` bytes of the file at `path` (all of a smaller file), or nil when it
    /// cannot be opened or read.
    static func contents(ofSmallFile path: String, limit: Int) -> [UInt8]? {
        let descriptor = openFile(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { closeFile(descriptor) }
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: limit) { buffer, count in
            let got = readFully(descriptor, into: buffer.baseAddress!, count: limit)
            failed = got < 0
            count = max(0, got)
        }
        return failed ? nil : bytes
    }

    /// `rename(2)`: atomically replaces `destination`. Returns 0 or an `errno` value.
    static func renameItem(_ source: String, _ destination: String) -> Int32 {
        let result = source.withCString { from in destination.withCString { to in rename(from, to) } }
        return result == 0 ? 0 : errno
    }

    /// `unlink(2)`; returns 0 or an `errno` value.
    @discardableResult
    static func unlinkItem(_ path: String) -> Int32 {
        path.withCString { unlink($0) } == 0 ? 0 : errno
    }

    /// `mkdir(2)`, `0700` whatever the umask (`PrivateFiles`); an existing directory (or file:
    /// callers find out at the next step) is success, and keeps its mode.
    static func makeDirectory(_ path: String) -> Int32 {
        let result = path.withCString { mkdir($0, PrivateFiles.directoryMode) }
        if result == 0 { PrivateFiles.settleMode(ofDirectory: path) }
        if result == 0 || errno == EEXIST { return 0 }
        return errno
    }

    /// Creates `path` and its missing parents; returns 0 or the `errno` of the failing step.
    static func makeDirectories(_ path: String) -> Int32 {
        let first = makeDirectory(path)
        if first != ENOENT { return first == 0 ? requireDirectory(path) : first }
        var parent = path
        while parent.hasSuffix("/") { parent.removeLast() }
        guard let slash = parent.lastIndex(of: "/"), slash != parent.startIndex else { return first }
        let made = makeDirectories(String(parent[..<slash]))
        if made != 0 { return made }
        let again = makeDirectory(path)
        return again == 0 ? requireDirectory(path) : again
    }

    /// 0 when `path` is a directory, `ENOTDIR` when it is something else, `errno` when it cannot be statted.
    static func requireDirectory(_ path: String) -> Int32 {
        guard let info = status(path) else { return errno }
        return (info.st_mode & S_IFMT) == S_IFDIR ? 0 : ENOTDIR
    }

    /// `flock(2)` with `operation` (`LOCK_EX`, `LOCK_SH`, `LOCK_UN`, optionally `| LOCK_NB`).
    /// Returns 0 or an `errno` value (`EWOULDBLOCK` when a non-blocking request is refused).
    static func lockFile(_ fd: Int32, _ operation: Int32) -> Int32 {
        while true {
            if flock(fd, operation) == 0 { return 0 }
            if errno != EINTR { return errno }
        }
    }

    /// An exclusive `flock(2)`, waited for at most `seconds`: tried at once, then again after
    /// pauses growing from 0.1 ms to 5 ms. Returns 0, `EWOULDBLOCK` when it stayed held by
    /// another descriptor that long, or another `errno` value.
    static func lockFile(_ fd: Int32, waitingAtMost seconds: Double) -> Int32 {
        let deadline = monotonicNanoseconds() + Int64(seconds * 1e9)
        var pause: UInt32 = 100
        while true {
            let error = lockFile(fd, LOCK_EX | LOCK_NB)
            guard error == EWOULDBLOCK, monotonicNanoseconds() < deadline else { return error }
            usleep(pause)
            pause = min(pause * 2, 5_000)
        }
    }

    /// A monotonic clock, in nanoseconds.
    static func monotonicNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// `fstat(2)`, or nil.
    static func status(of fd: Int32) -> stat? {
        var info = stat()
        return fstat(fd, &info) == 0 ? info : nil
    }

    /// `stat(2)`, or nil (with `errno` set).
    static func status(_ path: String) -> stat? {
        var info = stat()
        return path.withCString { stat($0, &info) } == 0 ? info : nil
    }

    /// `fsync(2)`; returns 0 or an `errno` value.
    @discardableResult
    static func synchronize(_ fd: Int32) -> Int32 {
        fsync(fd) == 0 ? 0 : errno
    }

    /// Truncates the file to `length`; returns 0 or an `errno` value.
    static func truncate(_ fd: Int32, to length: Int) -> Int32 {
        ftruncate(fd, off_t(length)) == 0 ? 0 : errno
    }

    /// Calls `body` with each name in `path` (without "." and ".."), the directory's descriptor
    /// (for `fstatat`/`unlinkat`) and the entry's `d_type`. Returns 0 or an `errno` value
    /// (`ENOENT` when the directory does not exist). Reads names only: no stat per entry.
    static func forEachName(in path: String, _ body: (_ name: UnsafePointer<CChar>, _ directoryFD: Int32, _ type: UInt8) -> Void) -> Int32 {
        guard let directory = path.withCString({ opendir($0) }) else { return errno }
        defer { closedir(directory) }
        let directoryFD = dirfd(directory)
        while let entry = readdir(directory) {
            let type = entry.pointee.d_type
            withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                let name = raw.baseAddress!.assumingMemoryBound(to: CChar.self)
                // Skip "." and "..".
                if name[0] == 0x2E && (name[1] == 0 || (name[1] == 0x2E && name[2] == 0)) { return }
                body(name, directoryFD, type)
            }
        }
        return 0
    }

    /// The names in `path` (no "." and ".."), or nil when it cannot be listed.
    static func names(in path: String) -> [String]? {
        var names: [String] = []
        let result = forEachName(in: path) { name, _, _ in names.append(String(cString: name)) }
        return result == 0 ? names : nil
    }

    /// Deletes `path` and, if it is a directory, everything in it. Best effort.
    static func removeTree(_ path: String) {
        let result = unlinkItem(path)
        guard result == EISDIR || result == EPERM else { return }
        var children: [String] = []
        _ = forEachName(in: path) { name, _, _ in children.append(String(cString: name)) }
        for child in children { removeTree(path + "/" + child) }
        _ = path.withCString { rmdir($0) }
    }

    /// Wall-clock time in nanoseconds since 1970 (for comparing with file timestamps).
    static func wallClockNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// The process id, for unique temporary names (read once: a `getpid` per write adds up).
    static let processID: Int32 = getpid()
}

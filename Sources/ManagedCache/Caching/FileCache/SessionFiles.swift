import ManagedCacheLocking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files in `sessions/`: one per open instance, naming the process that opened it, so that
/// an opening tells instances still open from instances that ended without closing (a crash)
/// while no instance holds any lock between its operations.
///
/// A session file is empty (so a full disk can still create one) and named
/// `<pid>-<start>-<unique>`: the process's id and, where the system says when a process started
/// (Linux), that start time (0 elsewhere), so a process id the system gave again to another
/// process is not taken for the one that opened the file. An instance is open when:
/// - its file names this process and this process has it open (a file of this process's id that
///   this process did not create was left by an earlier process with the same id);
/// - or its process is alive (`kill(pid, 0)` does not answer `ESRCH`) and, where start times are
///   known, started when the file says.
///
/// A file an earlier version made is named `<pid>-<unique>`: its instances held a shared `flock` on
/// `session.lock` for their whole life, so such a file is open exactly while an exclusive try of
/// that lock fails (taken and released at once).
///
/// Misjudging a crashed instance as open (a process id reused on a system without start times)
/// only delays the reconciliation until that process ends; an open instance is never judged
/// crashed.
enum SessionFiles {
    /// The session files this process has open, by path.
    private static let openHere = Lock<Set<String>>([])

    /// The start of this process's session files' names: its id and start time.
    private static let namePrefix = "\(Posix.processID)-\(startTime(of: Posix.processID) ?? 0)-"

    /// Creates a new session file in `directory` for this process, `0600`. Returns its path and
    /// the mode `open(2)` gave it (before it was set to `0600`: what the umask left), or the
    /// `errno` when it cannot be created or written.
    static func create(in directory: String) -> (path: String?, createdMode: mode_t?, errno: Int32) {
        let path = directory + "/" + namePrefix + String(FileNames.uniqueRandom(), radix: 16)
        let descriptor = Posix.openFile(path, O_WRONLY | O_CREAT | O_EXCL, settlingMode: false)
        guard descriptor >= 0 else { return (nil, nil, -descriptor) }
        let createdMode = Posix.status(of: descriptor).map { $0.st_mode & 0o777 }
        PrivateFiles.settleMode(of: descriptor, PrivateFiles.fileMode)
        Posix.closeFile(descriptor)
        openHere.withLock { _ = $0.insert(path) }
        return (path, createdMode, 0)
    }

    /// Forgets that this process has `path` open (it was deleted, or is kept for the next opening
    /// to reconcile).
    static func release(_ path: String) {
        openHere.withLock { _ = $0.remove(path) }
    }

    /// Whether the instance of the session file at `path` is still open; `legacyLock` is the
    /// path of `session.lock`, which earlier versions held.
    static func isOpen(_ path: String, legacyLock: String) -> Bool {
        if openHere.withLock({ $0.contains(path) }) { return true }
        let name = path.split(separator: "/").last ?? ""
        let fields = name.split(separator: "-")
        guard fields.count == 3, let pid = Int32(fields[0]), let started = UInt64(fields[1]) else {
            return legacyInstanceIsOpen(legacyLock)
        }
        if pid == Posix.processID { return false }  // not among this process's: an earlier process's
        if kill(pid, 0) != 0, errno == ESRCH { return false }
        if started != 0, let now = startTime(of: pid), now != started { return false }
        return true
    }

    /// Whether an instance of an earlier version holds `session.lock` (shared, for its whole
    /// life): an exclusive try fails then. Taken and released at once.
    private static func legacyInstanceIsOpen(_ path: String) -> Bool {
        let descriptor = Posix.openFile(path, O_RDWR)
        guard descriptor >= 0 else { return false }  // no lock file: no earlier version ran here
        defer { Posix.closeFile(descriptor) }
        guard Posix.lockFile(descriptor, LOCK_EX | LOCK_NB) == 0 else { return true }
        _ = Posix.lockFile(descriptor, LOCK_UN)
        return false
    }

    /// When process `pid` started, in clock ticks since boot (Linux's `/proc/<pid>/stat`, field
    /// 22); nil where the system does not say.
    static func startTime(of pid: Int32) -> UInt64? {
        #if os(Linux)
        guard let contents = Posix.contents(ofSmallFile: "/proc/\(pid)/stat", limit: 4096),
            let close = contents.lastIndex(of: UInt8(ascii: ")"))
        else { return nil }
        // After "pid (comm)": field 3 (state) onwards; the command may hold spaces and parentheses.
        let fields = contents[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 19 else { return nil }
        return UInt64(String(decoding: fields[19], as: UTF8.self))
        #else
        return nil
        #endif
    }
}

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the package's files are: readable by the app alone.
///
/// Every file the package creates is `0600` (read and write for its owner, nothing for anyone
/// else) and every directory `0700`, whatever the process's umask: each is created with that mode,
/// which a umask can only narrow, and then set to it exactly (under a umask that removes the
/// owner's own bits, a cache could otherwise not reopen its journal). So on a shared host no other
/// account can list a cache's entries or read a cached response, and an app with a permissive
/// umask (`000`) does not leak. `Posix.openFile` and `Posix.makeDirectory` apply the modes;
/// this type has what Foundation's defaults would otherwise decide (`Data.write` creates `0644`
/// files) and the Data Protection class on Apple platforms (``FileProtection``).
///
/// Directories the caller made (a cache's root, the parents it names) keep their mode: a cache
/// never changes a directory it did not create, and the files it puts in one are private anyway.
enum PrivateFiles {
    /// The mode of every file the package creates.
    static let fileMode: mode_t = 0o600
    /// The mode of every directory the package creates.
    static let directoryMode: mode_t = 0o700

    /// Sets a file the package just created (or opened with `O_CREAT`: its own lock files) to
    /// `mode` exactly. Best effort: where the file system refuses (no POSIX modes), the file keeps
    /// the mode `open(2)` gave it, which the umask can only have narrowed.
    static func settleMode(of descriptor: Int32, _ mode: mode_t) {
        _ = fchmod(descriptor, mode)
    }

    /// Sets a directory the package just created to `0700` exactly (best effort, as for files).
    static func settleMode(ofDirectory path: String) {
        _ = path.withCString { chmod($0, directoryMode) }
    }

    /// Writes `data` into a new private file at `path`, which must not exist (`O_EXCL`): created,
    /// written and closed, or removed again. Returns 0 or the `errno` of the failing step.
    static func writeNewFile(_ data: Data, at path: String) -> Int32 {
        let descriptor = Posix.openFile(path, O_WRONLY | O_CREAT | O_EXCL)
        guard descriptor >= 0 else { return -descriptor }
        var error: Int32 = 0
        for region in data.regions where error == 0 {
            error = region.withUnsafeBytes { Posix.writeAll(descriptor, $0) }
        }
        Posix.closeFile(descriptor)
        if error != 0 { Posix.unlinkItem(path) }
        return error
    }

    /// Replaces `path` atomically with a private file holding `data`, written first at
    /// `temporaryPath` (on the same file system) and renamed over it: a reader sees the old file
    /// or the whole new one. Returns 0 or the `errno` of the failing step; nothing is left behind
    /// on failure.
    static func replaceFile(at path: String, with data: Data, writingFirstTo temporaryPath: String) -> Int32 {
        let written = writeNewFile(data, at: temporaryPath)
        guard written == 0 else { return written }
        let renamed = Posix.renameItem(temporaryPath, path)
        if renamed != 0 { Posix.unlinkItem(temporaryPath) }
        return renamed
    }

    /// Makes `path` a private directory of this user in a place others can write to (the
    /// temporary directory): creates it `0700` (with any missing parent), or accepts an existing one only when it is a
    /// directory itself (not a symbolic link to one) owned by this user, narrowing its mode to
    /// `0700` when it is wider (made by an earlier version). Returns 0, `ENOTDIR` when something
    /// else is there, `EPERM` when it belongs to another user, or the `errno` of the failing step.
    static func prepareOwnDirectory(_ path: String) -> Int32 {
        let made = Posix.makeDirectories(path)
        guard made == 0 else { return made }
        var info = stat()
        guard path.withCString({ lstat($0, &info) }) == 0 else { return errno }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { return ENOTDIR }
        guard info.st_uid == geteuid() else { return EPERM }
        if info.st_mode & 0o077 != 0, path.withCString({ chmod($0, directoryMode) }) != 0 { return errno }
        return 0
    }

    /// Narrows the cache's own items at `paths` that an earlier version created wider (`0755`
    /// directories, a `0644` journal) to `0700` / `0600`, so that a cache made before keeps no
    /// readable entry: its subdirectories are the cache's own, never the caller's, and the entries
    /// in them are out of other accounts' reach once they are `0700`. One `lstat` per path at each
    /// opening; items that are missing, of another user or already private are left as they are.
    static func narrowOwnItems(_ paths: [String]) {
        for path in paths {
            var info = stat()
            guard path.withCString({ lstat($0, &info) }) == 0, info.st_uid == geteuid(), info.st_mode & 0o077 != 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR: _ = path.withCString { chmod($0, directoryMode) }
            case S_IFREG: _ = path.withCString { chmod($0, fileMode) }
            default: continue
            }
        }
    }

    /// Gives the directories at `paths` the Data Protection class `protection`, on Apple platforms:
    /// the files created in them afterwards inherit it. Nothing on other platforms, nor for
    /// ``FileProtection/inherited``.
    static func applyProtection(_ protection: FileProtection, toDirectories paths: [String]) {
        guard platformHasDataProtection, let type = protection.foundationType else { return }
        for path in paths { setProtection(type, ofItemAt: path) }
    }

    /// Whether the platform has Data Protection classes (Apple's). A constant rather than an `#if`
    /// around the calls, so that Linux compiles the code Apple platforms run.
    #if canImport(Darwin)
    static let platformHasDataProtection = true
    #else
    static let platformHasDataProtection = false
    #endif

    /// Sets the class of one file or directory with `FileManager`'s documented attribute
    /// (`FileAttributeKey.protectionKey`). Best effort: a volume without Data Protection refuses,
    /// and the item keeps its class. Compiled everywhere (Linux's Foundation has the same names,
    /// and ignores the attribute), called on Apple platforms only.
    static func setProtection(_ type: FileProtectionType, ofItemAt path: String) {
        try? FileManager.default.setAttributes([.protectionKey: type], ofItemAtPath: path)
    }
}

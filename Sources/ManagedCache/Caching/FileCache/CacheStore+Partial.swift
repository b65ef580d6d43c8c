import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Resumable downloads: an interrupted download's bytes are kept in `partial/` so the next
/// request for the key fetches only the rest.
///
/// Layout: `partial/<SHA-256 of the key>.part` holds the bytes; `.info` beside it holds the
/// validator, a newline, and the full key (compared on lookup, as entries are). Unlike
/// `loading/`, `partial/` survives reopening: resuming after the app was killed is the point.
/// Resuming moves the file back into `loading/` first, so two writers never append to one file.
/// At most `maximumPartials` are kept; the oldest go first.
extension CacheStore {
    static let maximumPartials = 8

    private var partialDirectory: String { layout.root + "/partial" }

    private func partialPaths(forKey key: String) -> (data: String, info: String) {
        let name = SHA256.digest(key.utf8).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        return (partialDirectory + "/" + name + ".part", partialDirectory + "/" + name + ".info")
    }

    func partialDownload(forKey key: String) -> PartialDownload? {
        guard !isClosed else { return nil }
        let paths = partialPaths(forKey: key)
        guard let info = FileManager.default.contents(atPath: paths.info),
            let newline = info.firstIndex(of: 0x0A),
            info[info.index(after: newline)...].elementsEqual(key.utf8),
            let status = Posix.status(paths.data), status.st_size > 0
        else { return nil }
        let validator = String(decoding: info[..<newline], as: UTF8.self)
        return PartialDownload(key: key, byteCount: Int(status.st_size), validator: validator)
    }

    func makeWriter(resuming partial: PartialDownload, pinned: Bool = false) throws(FileCacheError) -> StoreWriter {
        guard !isClosed else { throw .closed }
        guard partialDownload(forKey: partial.key) == partial else {
            throw .io(operation: "resume: the partial download changed or is gone", errno: ENOENT)
        }
        let paths = partialPaths(forKey: partial.key)
        let temporary = layout.newTemporaryPath()
        let moved = Posix.renameItem(paths.data, temporary)
        _ = Posix.unlinkItem(paths.info)
        guard moved == 0 else { throw .io(operation: "resume: move into loading/", errno: moved) }
        // The checksum covers the whole entry: read back what is kept.
        var checksum = XXH64()
        guard let handle = FileHandle(forReadingAtPath: temporary) else {
            _ = Posix.unlinkItem(temporary)
            throw .io(operation: "resume: read the kept bytes", errno: EIO)
        }
        var size = 0
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            chunk.withUnsafeBytes { checksum.update($0) }
            size += chunk.count
        }
        try? handle.close()
        let descriptor = Posix.openFile(temporary, O_WRONLY | O_APPEND)
        guard size == partial.byteCount, descriptor >= 0 else {
            if descriptor >= 0 { Posix.closeFile(descriptor) }
            _ = Posix.unlinkItem(temporary)
            throw .io(operation: "resume: reopen the kept bytes", errno: descriptor < 0 ? -descriptor : EIO)
        }
        return StoreWriter(
            store: self, key: partial.key, id: FileID.makeNew(forKey: partial.key), temporaryPath: temporary,
            descriptor: descriptor, initialSize: size, initialChecksum: checksum, pinned: pinned)
    }

    func discardPartialDownload(forKey key: String) {
        let paths = partialPaths(forKey: key)
        _ = Posix.unlinkItem(paths.data)
        _ = Posix.unlinkItem(paths.info)
    }

    /// Keeps a writer's file as the partial download of `key`; removes it if that fails.
    func keepPartial(temporaryPath: String, key: String, validator: String) {
        guard !validator.contains("\n"), Posix.makeDirectories(partialDirectory) == 0 else {
            _ = Posix.unlinkItem(temporaryPath)
            return
        }
        let paths = partialPaths(forKey: key)
        var info = Data(validator.utf8)
        info.append(0x0A)
        info.append(contentsOf: key.utf8)
        guard PrivateFiles.replaceFile(at: paths.info, with: info, writingFirstTo: layout.newTemporaryPath()) == 0,
            Posix.renameItem(temporaryPath, paths.data) == 0
        else {
            _ = Posix.unlinkItem(temporaryPath)
            _ = Posix.unlinkItem(paths.info)
            return
        }
        prunePartials()
    }

    /// Removes every partial download (with `removeAll`).
    func removeAllPartials() {
        guard !isClosed else { return }
        Posix.removeTree(partialDirectory)
    }

    /// Keeps the newest `maximumPartials` partial downloads.
    private func prunePartials() {
        guard let names = Posix.names(in: partialDirectory) else { return }
        let parts = names.filter { $0.hasSuffix(".part") }
        guard parts.count > Self.maximumPartials else { return }
        let byAge = parts.sorted { first, second in
            // FileStamp reads the modification time under its Glibc or Darwin name.
            let a = Posix.status(partialDirectory + "/" + first).map { FileStamp($0).modified } ?? 0
            let b = Posix.status(partialDirectory + "/" + second).map { FileStamp($0).modified } ?? 0
            return a < b
        }
        for name in byAge.prefix(parts.count - Self.maximumPartials) {
            _ = Posix.unlinkItem(partialDirectory + "/" + name)
            _ = Posix.unlinkItem(partialDirectory + "/" + name.dropLast(5) + ".info")
        }
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}

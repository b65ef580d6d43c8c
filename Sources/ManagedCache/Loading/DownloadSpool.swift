import Foundation
import ManagedCacheLocking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A download's body in a temporary file instead of memory: what a fetch without a file cache
/// keeps once the body is larger than `Configuration.inMemoryThreshold`, so that a 200 MB file is
/// never held in memory, with or without a file cache.
///
/// A decoder that prefers files is handed the file itself, in a `LoadedData` that keeps this
/// object (`FileURLDecoder` keeps it with its `DecodedFile`). Other decoders get the bytes mapped
/// from the file (`mappedData`: file-backed pages the kernel can drop and reread, not anonymous
/// memory). The file is deleted when the last reference to this object goes away (a mapping stays
/// valid after that); it lives among `FileURLDecoder`'s temporary files, so a process that ends
/// first leaves it to the next one to delete.
final class DownloadSpool: Sendable {
    private struct State {
        var descriptor: Int32
        var size = 0
        var mapped: Data?
    }

    /// The temporary file.
    let url: URL
    private let state: Lock<State>

    private init(url: URL, descriptor: Int32) {
        self.url = url
        state = Lock(State(descriptor: descriptor))
    }

    /// Creates an empty file among `FileURLDecoder`'s temporary files; nil when it cannot be created.
    static func make() -> DownloadSpool? {
        guard let url = try? TemporaryFiles.makeURL() else { return nil }
        let descriptor = Posix.openFile(url.path, O_RDWR | O_CREAT | O_EXCL, mode: 0o600)
        guard descriptor >= 0 else { return nil }
        return DownloadSpool(url: url, descriptor: descriptor)
    }

    deinit {
        Posix.closeFile(state.withLock { $0.descriptor })
        Posix.unlinkItem(url.path)
    }

    /// Appends `chunk`; throws `FileCacheError.io` when the disk refuses or the spool was closed.
    func write(_ chunk: Data) throws(FileCacheError) {
        try state.withLock { state throws(FileCacheError) in
            guard state.descriptor >= 0 else { throw .writerClosed }
            var error: Int32 = 0
            for region in chunk.regions where error == 0 {
                error = region.withUnsafeBytes { Posix.writeAll(state.descriptor, $0) }
            }
            guard error == 0 else { throw .io(operation: "write the download's temporary file", errno: error) }
            state.size += chunk.count
        }
    }

    /// Bytes written so far.
    var size: Int { state.withLock { $0.size } }

    /// Closes the descriptor (the download ended or was cancelled); the file stays until release.
    func close() {
        state.withLock { state in
            Posix.closeFile(state.descriptor)
            state.descriptor = -1
        }
    }

    /// The bytes, mapped from the file (read into memory where mapping fails); nil when the file
    /// cannot be read. Mapped once; later calls share the mapping.
    var mappedData: Data? {
        state.withLock { state in
            if let mapped = state.mapped { return mapped }
            let mapped = Self.map(url.path, size: state.size)
            state.mapped = mapped
            return mapped
        }
    }

    private static func map(_ path: String, size: Int) -> Data? {
        guard size > 0 else { return Data() }
        let descriptor = Posix.openFile(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { Posix.closeFile(descriptor) }
        // MAP_FAILED is (void *)-1, which not every platform's overlay imports.
        let failed = UnsafeMutableRawPointer(bitPattern: -1)
        guard let mapping = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), mapping != failed else {
            return try? Data(contentsOf: URL(fileURLWithPath: path))
        }
        return Data(bytesNoCopy: mapping, count: size, deallocator: .custom { pointer, count in munmap(pointer, count) })
    }
}

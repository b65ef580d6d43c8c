import Foundation

/// Loads `file://` URLs in chunks, so local files go through the same pipeline (decoding, memory
/// cache, progress, cancellation) as downloads.
public struct FileURLDataLoader: DataLoading {
    /// Bytes read per chunk. Default 64 KiB.
    public var chunkSize: Int

    /// Creates a file loader.
    ///
    /// - Parameter chunkSize: Bytes read per chunk, at least 1. Default 64 KiB.
    public init(chunkSize: Int = 64 << 10) {
        self.chunkSize = max(1, chunkSize)
    }

    /// Whether the URL is a `file://` URL.
    ///
    /// - Parameter url: The URL of a request about to load.
    /// - Returns: `url.isFileURL`.
    public func canLoad(_ url: URL) -> Bool { url.isFileURL }

    /// Reads the file in chunks of ``chunkSize`` bytes, checking for cancellation between them.
    ///
    /// - Parameters:
    ///   - request: What to read; only its URL matters.
    ///   - receiver: Receives a response with the file's size and no status, then the chunks.
    /// - Returns: That response, once the whole file is read.
    /// - Throws: ``ManagedCacheError/invalidRequest(reason:)`` for a URL that is not a file URL,
    ///   ``ManagedCacheError/transport(code:description:)`` when the file cannot be opened, the
    ///   file handle's error when a read fails, `CancellationError` when the task is cancelled, or
    ///   the receiver's error.
    public func load(_ request: DataLoadRequest, receiver: any DataLoadReceiver) async throws -> DataLoadResponse {
        guard request.url.isFileURL else {
            throw ManagedCacheError.invalidRequest(reason: "not a file URL: \(request.url)")
        }
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: request.url)
        } catch {
            throw ManagedCacheError.transport(code: (error as NSError).code, description: "cannot open \(request.url.path)")
        }
        defer { try? handle.close() }
        let size = (try? handle.seekToEnd()).map(Int.init)
        try handle.seek(toOffset: 0)
        let response = DataLoadResponse(statusCode: nil, expectedContentLength: size, url: request.url)
        try receiver.didReceive(response: response)
        while true {
            try Task.checkCancellation()
            guard let chunk = try handle.read(upToCount: chunkSize), !chunk.isEmpty else { break }
            try receiver.didReceive(chunk)
        }
        return response
    }
}

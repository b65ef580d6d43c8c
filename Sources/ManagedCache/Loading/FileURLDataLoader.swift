import Foundation

/// Loads `file://` URLs in chunks, so local files go through the same pipeline (decoding, memory
/// cache, progress, cancellation) as downloads.
public struct FileURLDataLoader: DataLoading {
    /// Bytes read per chunk. Default 64 KiB.
    public var chunkSize: Int

    /// Creates a file loader reading `chunkSize` bytes at a time.
    public init(chunkSize: Int = 64 << 10) {
        self.chunkSize = max(1, chunkSize)
    }

    public func canLoad(_ url: URL) -> Bool { url.isFileURL }

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

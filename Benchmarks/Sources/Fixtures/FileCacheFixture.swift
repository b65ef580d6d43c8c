import Foundation
import ManagedCache

/// Fills a file cache with many small entries quickly: `count` entries of `size` bytes under
/// image-like URL keys, optionally set to expire at a given date.
enum FileCacheFixture {
    /// The key of entry `index`.
    static func key(_ index: Int) -> String {
        "https://images.example.com/photos/\(index)/thumbnail-160x160.jpg"
    }

    /// Stores entries `firstIndex ..< firstIndex + count`, all expiring at `expiration` (`nil`: never).
    static func fill(_ cache: any FileCaching, count: Int, size: Int, firstIndex: Int = 0, expiration: Date? = nil) throws {
        let body = Data(repeating: 0x5A, count: size)
        let metadata = FileCacheMetadata(expirationDate: expiration)
        for index in firstIndex..<(firstIndex + count) {
            try cache.store(body, forKey: key(index), metadata: metadata)
        }
    }

    /// Creates `count` empty files named `f0`, `f1`, … in `directory`.
    static func createEmptyFiles(_ count: Int, in directory: URL, size: Int = 0) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let contents = Data(repeating: 0x5A, count: size)
        for index in 0..<count {
            guard FileManager.default.createFile(atPath: directory.path + "/f\(index)", contents: contents) else {
                throw BenchmarkFailure("cannot create files in \(directory.path)")
            }
        }
    }
}

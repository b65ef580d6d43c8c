import Foundation
import ManagedCacheLocking

/// Turns downloaded bytes into the object that users of a key share: an image, a JSON model, a
/// PDF document, or the bytes themselves.
///
/// Decoding runs once per key, off the caller's thread (except for synchronous file-cache
/// delivery), and its result is shared by every user of the key. Throwing fails the load with
/// `.decodingFailed` and purges the bytes from every cache, so a corrupt object is never served again.
///
/// ```swift
/// struct UppercaseDecoder: ObjectDecoding {
///     func decode(_ data: LoadedData) throws -> String {
///         String(decoding: try data.bytes(), as: UTF8.self).uppercased()
///     }
/// }
/// ```
public protocol ObjectDecoding: Sendable {
    /// The shared, decoded object.
    associatedtype Object: Sendable

    /// Names what this decoder makes, as part of the object's key. Two decoders with the same
    /// identifier must make the same object from the same bytes. Default: the object type's full
    /// name, so decoders of different types never share objects.
    var identifier: String { get }

    /// Whether the decoder wants the bytes as a file (a large PDF, a video) rather than in memory.
    /// When `true` and a file cache holds the bytes, `LoadedData.fileURL` is set and the bytes are
    /// not read into memory by the manager. Default `false`.
    var prefersFileURL: Bool { get }

    /// Makes the object from the loaded bytes. Throw to reject them.
    func decode(_ data: LoadedData) throws -> Object

    /// The memory-cache cost of `object`, in bytes. Default: `byteCount`, the size of the data it
    /// came from. Image decoders return the decoded bitmap size instead.
    func cost(of object: Object, byteCount: Int) -> Int

    /// Whether this decoder makes a **variant** worth keeping on disk in its own right (a resized,
    /// rounded or re-encoded image: Haneke's formats). When `true` and the manager has a file cache,
    /// the object's `encodedVariant(of:)` bytes are stored under the object's key, and later loads
    /// decode those (with `LoadedData.isStoredVariant` set) instead of downloading and transforming
    /// the original again. Default `false`.
    var storesVariant: Bool { get }

    /// The bytes to store for a variant object. Return `nil` to store nothing for this object.
    /// Called off the caller's thread after a successful decode. Default `nil`.
    func encodedVariant(of object: Object) -> Data?

    /// Whether the original bytes stay in the file cache once a variant of them is stored.
    /// Default `true`; `false` keeps only the variant (Kingfisher's `cacheOriginalImage = false`).
    var keepsOriginal: Bool { get }
}

extension ObjectDecoding {
    public var identifier: String { TypeNames.name(of: Object.self) }
    public var prefersFileURL: Bool { false }
    public func cost(of object: Object, byteCount: Int) -> Int { byteCount }
    public var storesVariant: Bool { false }
    public func encodedVariant(of object: Object) -> Data? { nil }
    public var keepsOriginal: Bool { true }
}

/// The bytes a decoder receives: in memory, or as a file in the file cache (for decoders that
/// prefer files), with what the server said about them.
public struct LoadedData: Sendable {
    /// The number of bytes.
    public let byteCount: Int
    /// Where they came from.
    public let origin: DataOrigin
    /// The file holding the bytes, when they are in a file cache and the decoder prefers files.
    /// Its content has been verified against the cache's checksum.
    public let fileURL: URL?
    /// The response's `Content-Type`, when known.
    public let contentType: String?
    /// `true` when these are the bytes of a stored variant (`ObjectDecoding.encodedVariant(of:)`),
    /// already transformed, rather than the original download.
    public let isStoredVariant: Bool

    private let memory: Data?

    /// Creates loaded data from bytes in memory.
    public init(data: Data, origin: DataOrigin, contentType: String? = nil, isStoredVariant: Bool = false) {
        self.memory = data
        self.byteCount = data.count
        self.origin = origin
        self.fileURL = nil
        self.contentType = contentType
        self.isStoredVariant = isStoredVariant
    }

    /// Creates loaded data that lives in a file.
    public init(fileURL: URL, byteCount: Int, origin: DataOrigin, contentType: String? = nil, isStoredVariant: Bool = false) {
        self.memory = nil
        self.byteCount = byteCount
        self.origin = origin
        self.fileURL = fileURL
        self.contentType = contentType
        self.isStoredVariant = isStoredVariant
    }

    /// The bytes, read from the file if they are not in memory.
    public func bytes() throws -> Data {
        if let memory { return memory }
        guard let fileURL else { return Data() }
        return try Data(contentsOf: fileURL, options: .mappedIfSafe)
    }
}

/// Where a load's bytes or object came from. Users receive it with the object, and the
/// statistics count by it.
public enum DataOrigin: String, Sendable, Hashable {
    /// The manager's memory cache.
    case memory
    /// Another user's live handler: the object was already decoded and shared.
    case sharedObject
    /// Bytes kept in memory undecoded (a prefetch with no decoder and no file cache).
    case undecodedData
    /// The file cache.
    case fileCache
    /// A new download.
    case network
    /// Cached bytes or a cached object the server confirmed unchanged (`304 Not Modified`).
    case revalidated
}

/// Keeps the downloaded bytes as they are: `Data`.
public struct DataDecoder: ObjectDecoding {
    /// Creates the identity decoder.
    public init() {}
    public func decode(_ data: LoadedData) throws -> Data { try data.bytes() }
}

/// Decodes a JSON body into a `Decodable` model, for feed responses and API payloads.
public struct JSONObjectDecoder<Model: Decodable & Sendable>: ObjectDecoding {
    /// Creates a decoder for `Model`; `configure` can set date and key strategies.
    public init(configure: (@Sendable (JSONDecoder) -> Void)? = nil) {
        self.configure = configure
    }

    private let configure: (@Sendable (JSONDecoder) -> Void)?

    public func decode(_ data: LoadedData) throws -> Model {
        let decoder = JSONDecoder()
        configure?(decoder)
        return try decoder.decode(Model.self, from: try data.bytes())
    }
}

/// Hands over the cached file itself, for large objects (PDFs, archives, video) that should be
/// opened or mapped rather than copied into memory. Needs a file cache; without one the bytes
/// are written to a temporary file first.
public struct FileURLDecoder: ObjectDecoding {
    /// Creates the decoder.
    public init() {}
    public var prefersFileURL: Bool { true }
    /// A file's memory cost is the size of its URL, not of its contents.
    public func cost(of object: URL, byteCount: Int) -> Int { 256 }

    public func decode(_ data: LoadedData) throws -> URL {
        if let url = data.fileURL { return url }
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("ManagedCache-\(UUID().uuidString)")
        try data.bytes().write(to: url, options: .atomic)
        return url
    }
}

/// Full type names, computed once per type: `String(reflecting:)` formats the name anew on every
/// call, and the default decoder identifier is read on every `manage`.
enum TypeNames {
    private static let names = Lock<[ObjectIdentifier: String]>([:])

    static func name(of type: Any.Type) -> String {
        let identifier = ObjectIdentifier(type)
        if let name = names.withLock({ $0[identifier] }) { return name }
        let name = String(reflecting: type)
        names.withLock { $0[identifier] = name }
        return name
    }
}

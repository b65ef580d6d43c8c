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

    /// Makes the object from the loaded bytes. Throw to reject them. Called on one of the
    /// engine's few threads: it must not block waiting for another load.
    ///
    /// - Parameter data: The bytes, in memory or as a verified file (``LoadedData/fileURL``).
    /// - Returns: The object every user of the key will share.
    /// - Throws: Any error, to reject the bytes: the load fails with
    ///   ``ManagedCacheError/decodingFailed(reason:)`` and the bytes are purged from every cache.
    func decode(_ data: LoadedData) throws -> Object

    /// The memory-cache cost of an object, in bytes, counted against
    /// ``ObjectManager/Configuration/memoryCacheCostLimit``. Default: `byteCount`, the size of the
    /// data it came from. Image decoders return the decoded bitmap size instead.
    ///
    /// - Parameters:
    ///   - object: An object this decoder made.
    ///   - byteCount: The size of the bytes it was decoded from.
    /// - Returns: The bytes the object occupies in memory, as well as it can be told.
    func cost(of object: Object, byteCount: Int) -> Int

    /// Whether this decoder makes a **variant** worth keeping on disk in its own right (a resized,
    /// rounded or re-encoded image: Haneke's formats). When `true` and the manager has a file cache,
    /// the object's `encodedVariant(of:)` bytes are stored under the object's key, and later loads
    /// decode those (with `LoadedData.isStoredVariant` set) instead of downloading and transforming
    /// the original again. Default `false`.
    var storesVariant: Bool { get }

    /// The bytes to store for a variant object. Called off the caller's thread after a successful
    /// decode, when ``storesVariant`` is `true`. Default `nil`.
    ///
    /// - Parameter object: An object this decoder just made.
    /// - Returns: The encoded variant, or `nil` to store nothing for this object.
    func encodedVariant(of object: Object) -> Data?

    /// Whether the original bytes stay in the file cache once a variant of them is stored.
    /// Default `true`; `false` keeps only the variant (Kingfisher's `cacheOriginalImage = false`).
    var keepsOriginal: Bool { get }

    /// Turns `object` back into bytes that `decode(_:)` makes an equal object from: what
    /// `ObjectManager.store(_:for:decoder:toFileCache:pinned:cost:completion:)` writes to the file cache for
    /// an object the app made itself. For a decoder that stores variants
    /// (`storesVariant`), these are the variant's bytes.
    ///
    /// Return `nil` when the decoder cannot encode (the default): such objects are stored in memory
    /// only. Throw when this object cannot be encoded. Called off the caller's thread.
    ///
    /// - Parameter object: The object to turn into bytes.
    /// - Returns: The bytes `decode(_:)` reads back, or `nil` when this decoder does not encode.
    /// - Throws: Any error of encoding this object; the store then fails with
    ///   `StoreError.encodingFailed(reason:)`.
    func encode(_ object: Object) throws -> Data?
}

extension ObjectDecoding {
    public var identifier: String { TypeNames.name(of: Object.self) }
    public var prefersFileURL: Bool { false }
    public func cost(of object: Object, byteCount: Int) -> Int { byteCount }
    public var storesVariant: Bool { false }
    public func encodedVariant(of object: Object) -> Data? { nil }
    public var keepsOriginal: Bool { true }
    public func encode(_ object: Object) throws -> Data? { nil }
}

/// The bytes a decoder receives: in memory, or as a file in the file cache (for decoders that
/// prefer files), with what the server said about them.
public struct LoadedData: Sendable {
    /// The number of bytes.
    public let byteCount: Int
    /// Where they came from.
    public let origin: DataOrigin
    /// The file holding the bytes, when the decoder prefers files and they are in one: the file
    /// cache's entry, its content verified against the cache's checksum, or (without a file
    /// cache, a download past ``ObjectManager/Configuration/inMemoryThreshold``) the temporary file
    /// the download streamed into, which exists as long as this value does (``FileURLDecoder``
    /// keeps it with its ``DecodedFile``).
    public let fileURL: URL?
    /// The response's `Content-Type`, when known.
    public let contentType: String?
    /// `true` when these are the bytes of a stored variant (`ObjectDecoding.encodedVariant(of:)`),
    /// already transformed, rather than the original download.
    public let isStoredVariant: Bool

    private let memory: Data?
    /// The download's temporary file `fileURL` names, kept while this value exists.
    let temporaryFile: DownloadSpool?

    /// Creates loaded data from bytes in memory.
    ///
    /// - Parameters:
    ///   - data: The bytes.
    ///   - origin: Where they came from.
    ///   - contentType: The response's `Content-Type`. Default `nil`.
    ///   - isStoredVariant: Whether these are a stored variant's bytes. Default `false`.
    public init(data: Data, origin: DataOrigin, contentType: String? = nil, isStoredVariant: Bool = false) {
        self.memory = data
        self.byteCount = data.count
        self.origin = origin
        self.fileURL = nil
        self.contentType = contentType
        self.isStoredVariant = isStoredVariant
        self.temporaryFile = nil
    }

    /// Creates loaded data that lives in a file.
    ///
    /// - Parameters:
    ///   - fileURL: The file holding exactly the bytes.
    ///   - byteCount: The file's size.
    ///   - origin: Where the bytes came from.
    ///   - contentType: The response's `Content-Type`. Default `nil`.
    ///   - isStoredVariant: Whether these are a stored variant's bytes. Default `false`.
    public init(fileURL: URL, byteCount: Int, origin: DataOrigin, contentType: String? = nil, isStoredVariant: Bool = false) {
        self.memory = nil
        self.byteCount = byteCount
        self.origin = origin
        self.fileURL = fileURL
        self.contentType = contentType
        self.isStoredVariant = isStoredVariant
        self.temporaryFile = nil
    }

    /// Loaded data in a download's temporary file (no file cache, a large body).
    init(temporaryFile: DownloadSpool, byteCount: Int, origin: DataOrigin, contentType: String?) {
        self.memory = nil
        self.byteCount = byteCount
        self.origin = origin
        self.fileURL = temporaryFile.url
        self.contentType = contentType
        self.isStoredVariant = false
        self.temporaryFile = temporaryFile
    }

    /// The bytes, read from the file if they are not in memory.
    ///
    /// - Returns: The bytes (mapped from the file when the system allows).
    /// - Throws: The error of reading the file (`CocoaError`), when the bytes live in one.
    public func bytes() throws -> Data {
        if let memory { return memory }
        guard let fileURL else { return Data() }
        return try Data(contentsOf: fileURL, options: .mappedIfSafe)
    }

    /// Whether these are a file-cache entry's bytes whose file is gone: another instance of the
    /// cache (or anything else) removed it between the lookup and the decode. The manager then
    /// drops the entry and loads again, as after a miss, instead of failing with the decoder's
    /// error. Checked only after a decode failed.
    var fileCacheEntryVanished: Bool {
        guard temporaryFile == nil, let fileURL else { return false }
        return !FileManager.default.fileExists(atPath: fileURL.path)
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
    /// The app stored the object itself (`ObjectManager.store`): users waiting for the key, or
    /// sharing its previous object, receive it with this origin.
    case stored
}

extension DataOrigin: CustomStringConvertible {
    /// The case's name (`network`, `fileCache`), also where it is printed inside another value
    /// (a ``PrefetchOutcome``, an ``ObjectDelivery``).
    public var description: String { rawValue }
}

/// Keeps the downloaded bytes as they are: `Data`.
public struct DataDecoder: ObjectDecoding {
    /// Creates the identity decoder.
    public init() {}

    /// Returns the bytes unchanged.
    ///
    /// - Parameter data: The loaded bytes.
    /// - Returns: The bytes, read from the file if they are in one.
    /// - Throws: The error of reading the file, when the bytes live in one.
    public func decode(_ data: LoadedData) throws -> Data { try data.bytes() }
    /// The bytes themselves: their count (what decoding them would report).
    ///
    /// - Parameters:
    ///   - object: The bytes.
    ///   - byteCount: The size of the bytes they were decoded from; ignored (0 for a stored object).
    /// - Returns: `object.count`.
    public func cost(of object: Data, byteCount: Int) -> Int { object.count }
    /// The bytes themselves: a stored `Data` goes to the file cache as it is.
    ///
    /// - Parameter object: The bytes to store.
    /// - Returns: `object`, unchanged.
    /// - Throws: Never; the signature is the protocol's.
    public func encode(_ object: Data) throws -> Data? { object }
}

/// Decodes a JSON body into a `Decodable` model, for feed responses and API payloads. A model
/// that is also `Encodable` can be stored with `ObjectManager.store` and written to the file
/// cache as JSON.
public struct JSONObjectDecoder<Model: Decodable & Sendable>: ObjectDecoding {
    /// Creates a decoder for `Model`.
    ///
    /// - Parameters:
    ///   - configure: Sets the decoder's date and key strategies (default `nil`: JSONDecoder's defaults).
    ///   - configureEncoder: Sets the matching strategies for `encode(_:)`, so a stored model reads
    ///     back the same (default `nil`: JSONEncoder's defaults, which match JSONDecoder's).
    public init(
        configure: (@Sendable (JSONDecoder) -> Void)? = nil, configureEncoder: (@Sendable (JSONEncoder) -> Void)? = nil
    ) {
        self.configure = configure
        self.configureEncoder = configureEncoder
    }

    private let configure: (@Sendable (JSONDecoder) -> Void)?
    private let configureEncoder: (@Sendable (JSONEncoder) -> Void)?

    /// The model as JSON when it is `Encodable`; `nil` (not encodable) otherwise.
    ///
    /// - Parameter object: The model to store.
    /// - Returns: Its JSON (with the `configureEncoder` strategies), or `nil` when `Model` is not
    ///   `Encodable`.
    /// - Throws: `EncodingError` when the model cannot be encoded (a non-finite `Double`, …).
    public func encode(_ object: Model) throws -> Data? {
        guard let encodable = object as? any Encodable else { return nil }
        let encoder = JSONEncoder()
        configureEncoder?(encoder)
        return try encoder.encode(encodable)
    }

    /// Decodes the JSON body.
    ///
    /// - Parameter data: The loaded bytes.
    /// - Returns: The decoded model.
    /// - Throws: `DecodingError` when the body is not a valid `Model`.
    public func decode(_ data: LoadedData) throws -> Model {
        let decoder = JSONDecoder()
        configure?(decoder)
        return try decoder.decode(Model.self, from: try data.bytes())
    }
}

/// Hands over the cached file itself, for large objects (PDFs, archives, video) that should be
/// opened or mapped rather than copied into memory: the object is a ``DecodedFile``. Meant for
/// a manager with a file cache, whose entry it hands over. Without one, a download past
/// ``ObjectManager/Configuration/inMemoryThreshold`` has streamed into a temporary file, which it
/// hands over; a smaller one is written to a temporary file. Either is deleted when the last
/// reference to its `DecodedFile` goes away (or, if the process ended first, by the next process
/// that uses the decoder).
public struct FileURLDecoder: ObjectDecoding {
    /// Creates the decoder.
    public init() {}
    public var prefersFileURL: Bool { true }
    /// A file's memory cost is the size of its reference, not of its contents.
    ///
    /// - Parameters:
    ///   - object: The file.
    ///   - byteCount: The file's size, not held in memory.
    /// - Returns: 256 bytes.
    public func cost(of object: DecodedFile, byteCount: Int) -> Int { 256 }

    public func decode(_ data: LoadedData) throws -> DecodedFile {
        if let temporaryFile = data.temporaryFile { return DecodedFile(temporaryFile) }
        if let url = data.fileURL { return DecodedFile(url: url, isTemporary: false) }
        let url = try TemporaryFiles.makeURL()
        let error = PrivateFiles.writeNewFile(try data.bytes(), at: url.path)
        guard error == 0 else { throw FileCacheError.io(operation: "write FileURLDecoder's temporary file", errno: error) }
        return DecodedFile(url: url, isTemporary: true)
    }
}

/// A file handed over by ``FileURLDecoder``: the file-cache entry itself, or a temporary copy.
///
/// Keep this object (not only its `url`) while you use the file: a temporary copy is deleted
/// when the last reference to it goes away. A file-cache entry belongs to the cache, which may
/// remove it when it trims; copy it out to keep it for good.
public final class DecodedFile: Sendable {
    /// Where the file is.
    public let url: URL
    /// Whether the file is a temporary copy (no file cache), deleted with this object.
    public let isTemporary: Bool
    /// A download's temporary file, shared by every `DecodedFile` of that download: it deletes the
    /// file when the last of them goes away.
    private let download: DownloadSpool?

    /// Wraps a file.
    ///
    /// - Parameters:
    ///   - url: Where the file is.
    ///   - isTemporary: Whether the file is a temporary copy, deleted when this object is released.
    public init(url: URL, isTemporary: Bool) {
        self.url = url
        self.isTemporary = isTemporary
        self.download = nil
    }

    /// Wraps a download's temporary file (no file cache, a large body).
    init(_ download: DownloadSpool) {
        self.url = download.url
        self.isTemporary = true
        self.download = download
    }

    deinit {
        if isTemporary, download == nil { try? FileManager.default.removeItem(at: url) }
    }
}

/// The temporary files of ``FileURLDecoder`` and of downloads spooled to disk: in
/// `ManagedCache-files-<uid>` in the temporary directory, each named after the process that made
/// it (`<pid>-<uuid>`). The first use in a process deletes the files of processes that are no
/// longer running, which ended before releasing them.
///
/// The folder is private (`0700`, its files `0600`, `PrivateFiles`) and one per user: on a shared
/// host the temporary directory is everyone's, and another account must not read a download or
/// be able to make this folder its own. One that exists already is used only when it is a real
/// directory of this user; otherwise (another account made it first, or left something else
/// there) the process uses a new private folder of its own, which nothing cleans after a crash.
enum TemporaryFiles {
    static let directory: URL = {
        let temporary = FileManager.default.temporaryDirectory
        let shared = temporary.appendingPathComponent("ManagedCache-files-\(geteuid())", isDirectory: true)
        if PrivateFiles.prepareOwnDirectory(shared.path) == 0 { return shared }
        var template = Array((shared.path + "-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else { return shared }
        let own = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        PrivateFiles.settleMode(ofDirectory: own)
        return URL(fileURLWithPath: own, isDirectory: true)
    }()
    private static let prepared = Lock<Bool>(false)

    static func makeURL() throws -> URL {
        try prepared.withLock { prepared in
            guard !prepared else { return }
            let error = PrivateFiles.prepareOwnDirectory(directory.path)
            guard error == 0 else { throw FileCacheError.io(operation: "prepare \(directory.path)", errno: error) }
            removeFilesOfEndedProcesses()
            prepared = true
        }
        return directory.appendingPathComponent("\(getpid())-\(UUID().uuidString)")
    }

    /// Deletes files whose maker process is gone (`kill(pid, 0)` fails with `ESRCH`).
    static func removeFilesOfEndedProcesses() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names {
            guard let pid = name.split(separator: "-").first.flatMap({ Int32($0) }), pid != getpid() else { continue }
            if kill(pid, 0) == -1, errno == ESRCH {
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            }
        }
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

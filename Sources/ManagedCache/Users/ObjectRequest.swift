import Foundation

/// What to load: a URL, an optional object id that overrides the URL as the cache key, extra
/// request headers, and policy overrides for this request only.
///
/// Several URLs with the same `oid` (the same picture behind load-balanced hosts, or signed URLs
/// whose query changes) share one handler, one download, one file and one decoded object.
public struct ObjectRequest: Sendable, Hashable {
    /// Where the bytes come from: `http`, `https` or `file`, or any scheme a custom `DataLoading` accepts.
    public var url: URL {
        get { storage.fields.url }
        set { change { $0.url = newValue } }
    }
    /// The key that identifies the object instead of the URL. `nil` means "use the URL".
    public var oid: String? {
        get { storage.fields.oid }
        set { change { $0.oid = newValue } }
    }
    /// Headers added to the HTTP request (authorization, `Accept`, …). Not part of the key unless
    /// listed in `keyHeaders`.
    public var headers: [String: String] {
        get { storage.fields.headers }
        set { change { $0.headers = newValue } }
    }
    /// Names of headers in `headers` whose values become part of the key (HTTP `Vary` by the
    /// caller's choice): an `Accept: image/webp` and an `Accept: image/png` request then cache apart.
    public var keyHeaders: [String] {
        get { storage.fields.keyHeaders }
        set { change { $0.keyHeaders = newValue } }
    }
    /// Overrides of the manager's policy for this request. Fields left `nil` use the manager's.
    public var policy: PolicyOverrides {
        get { storage.fields.policy }
        set { change(keepingKey: true) { $0.policy = newValue } }
    }
    /// How urgent the load is (default `.normal`); not part of the key. See ``LoadPriority``:
    /// re-managing a user with a higher priority raises the running load of its key.
    public var priority: LoadPriority {
        get { storage.fields.priority }
        set { change(keepingKey: true) { $0.priority = newValue } }
    }

    /// What the caller set.
    private struct Fields: Hashable {
        var url: URL
        var oid: String?
        var headers: [String: String]
        var keyHeaders: [String]
        var policy: PolicyOverrides
        var priority: LoadPriority
    }

    /// The fields, in one immutable shared box, with the key computed once.
    ///
    /// Why a box: a request is copied into every handler, attachment and delivery, and `manage`
    /// needs its key each time. As five inline fields a copy cost five reference-count updates,
    /// and the key (`URL.absoluteString` plus a scan for bytes to escape) was recomputed on every
    /// call: together more than a memory hit's lookup. Immutable, so sharing it between threads
    /// is safe; a setter makes a new box.
    private final class Storage: Sendable {
        let fields: Fields
        let dataKey: String
        let dataKeyHash: Int
        /// Whether `fields.policy` overrides anything: most requests override nothing, and
        /// applying empty overrides copied the manager's whole policy on every `manage`.
        let overridesPolicy: Bool

        /// `keyOf`: a box whose key fields are the same as these (only the policy changed).
        init(_ fields: Fields, keyOf sameKey: Storage? = nil) {
            self.fields = fields
            overridesPolicy = fields.policy != PolicyOverrides()
            if let sameKey {
                dataKey = sameKey.dataKey
                dataKeyHash = sameKey.dataKeyHash
                return
            }
            dataKey = ObjectRequest.makeDataKey(fields)
            var hasher = Hasher()
            hasher.combine(dataKey)
            dataKeyHash = hasher.finalize()
        }
    }

    private var storage: Storage

    /// Creates a request for `url`, keyed by `oid` when given.
    ///
    /// - Parameters:
    ///   - url: Where the bytes come from.
    ///   - oid: The key that identifies the object instead of the URL (default `nil`: the URL).
    ///   - headers: Headers added to the HTTP request (default none).
    ///   - keyHeaders: Names of `headers` whose values become part of the key (default none).
    ///   - policy: Overrides of the manager's policy for this request (default none).
    ///   - priority: How urgent the load is (default `.normal`).
    public init(
        url: URL, oid: String? = nil, headers: [String: String] = [:], keyHeaders: [String] = [],
        policy: PolicyOverrides = PolicyOverrides(), priority: LoadPriority = .normal
    ) {
        storage = Storage(
            Fields(
                url: url, oid: oid, headers: headers, keyHeaders: keyHeaders, policy: policy,
                priority: priority))
    }

    /// Replaces the box with one holding the changed fields; `keepingKey` when the change cannot
    /// affect the key.
    private mutating func change(keepingKey: Bool = false, _ body: (inout Fields) -> Void) {
        var fields = storage.fields
        body(&fields)
        storage = Storage(fields, keyOf: keepingKey ? storage : nil)
    }

    /// The key of the downloaded bytes: the `oid` if there is one, else the URL, plus any key headers
    /// (`\u{1F}name=value`, names lowercased and sorted). The file cache stores the bytes under this key.
    ///
    /// Distinct requests have distinct keys, byte for byte and as Swift `String`s: a component
    /// with a byte outside printable ASCII, or a backslash (and, in a key header, an `=`), has
    /// every such byte written as `\xHH`. So canonically equivalent oids (`"caf\u{E9}"` and
    /// `"cafe\u{301}"`, equal as `String`s) stay apart in memory as on disk, and no oid can spell
    /// another request's key-header suffix. Printable ASCII oids and URLs without a backslash are
    /// used as they are. Computed once per request value.
    public var dataKey: String { storage.dataKey }

    /// `base` with this request's policy overrides applied (`base` itself when it has none).
    func policy(over base: LoadPolicy) -> LoadPolicy {
        storage.overridesPolicy ? base.applying(storage.fields.policy) : base
    }

    /// The key of the object `decoder` makes from this request's bytes.
    package func objectKey(variant: String) -> ObjectKey {
        ObjectKey(dataKey: storage.dataKey, dataKeyHash: storage.dataKeyHash, variant: variant)
    }

    /// Whether two requests are the same in every field, policy and priority included (two
    /// requests of one key may differ).
    ///
    /// - Parameters:
    ///   - lhs: A request.
    ///   - rhs: Another request.
    /// - Returns: `true` when every field is equal.
    public static func == (lhs: ObjectRequest, rhs: ObjectRequest) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.fields == rhs.storage.fields
    }

    /// Hashes every field, as `==` compares them.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.fields)
    }

    private static func makeDataKey(_ fields: Fields) -> String {
        var key = escapedKeyComponent(fields.oid ?? fields.url.absoluteString, escapingEquals: false)
        for name in fields.keyHeaders.sorted() {
            let value = fields.headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value ?? ""
            key +=
                "\u{1F}" + escapedKeyComponent(name.lowercased(), escapingEquals: true)
                + "=" + escapedKeyComponent(value, escapingEquals: true)
        }
        return key
    }

    /// `component` itself when every byte is printable ASCII other than `\` (and `=` when
    /// `escapingEquals`), else with each other byte written as `\xHH`. Injective, and the result is
    /// printable ASCII, where `String` equality is byte equality.
    static func escapedKeyComponent(_ component: String, escapingEquals: Bool) -> String {
        func needsEscape(_ byte: UInt8) -> Bool {
            byte < 0x20 || byte > 0x7E || byte == 0x5C || (escapingEquals && byte == 0x3D)
        }
        guard component.utf8.contains(where: needsEscape) else { return component }
        let digits = Array("0123456789abcdef".utf8)
        var escaped: [UInt8] = []
        escaped.reserveCapacity(component.utf8.count + 24)
        for byte in component.utf8 {
            if needsEscape(byte) {
                escaped += [0x5C, 0x78, digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]  // \xHH
            } else {
                escaped.append(byte)
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }
}

/// The key of one decoded object: the data key plus the decoder that made the object.
///
/// Two users of the same URL with different decoders (an image view and a raw-data user, or two
/// image formats) share the download but get their own objects; users with the same decoder share
/// one object instance.
public struct ObjectKey: Sendable, Hashable, CustomStringConvertible {
    /// The key of the bytes (`ObjectRequest.dataKey`).
    public let dataKey: String
    /// The decoder's identifier (`ObjectDecoding.identifier`), which includes the object type.
    public let variant: String
    /// The data key's hash, made once (by the request, or at creation): keys are hashed on every
    /// cache and table lookup, and hashing URL-length strings each time cost more than the
    /// lookups themselves. The variant is left out: the keys of one data key with different
    /// decoders (one or two per URL) share a hash and are told apart by `==`, and a `manage` call
    /// does not hash the decoder's identifier.
    private let precomputedHash: Int

    /// Creates the key of the object a decoder makes from the bytes stored under a data key.
    ///
    /// - Parameters:
    ///   - dataKey: The bytes' key (``ObjectRequest/dataKey``).
    ///   - variant: The decoder's ``ObjectDecoding/identifier``.
    public init(dataKey: String, variant: String) {
        var hasher = Hasher()
        hasher.combine(dataKey)
        self.init(dataKey: dataKey, dataKeyHash: hasher.finalize(), variant: variant)
    }

    /// Creates the key from a data key whose hash its request already computed.
    init(dataKey: String, dataKeyHash: Int, variant: String) {
        self.dataKey = dataKey
        self.variant = variant
        precomputedHash = dataKeyHash
    }

    /// Whether two keys name the same object: same data key, same decoder.
    ///
    /// - Parameters:
    ///   - lhs: A key.
    ///   - rhs: Another key.
    /// - Returns: `true` when both strings are equal, byte for byte.
    public static func == (lhs: ObjectKey, rhs: ObjectKey) -> Bool {
        lhs.precomputedHash == rhs.precomputedHash && lhs.dataKey == rhs.dataKey && lhs.variant == rhs.variant
    }

    /// Feeds the hash computed once at creation.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(precomputedHash)
    }

    /// The hash computed once at creation, mixed with the table's seed without running a
    /// `Hasher`: the precomputed value is already a seeded hash, and finalizing a `Hasher` over
    /// it again was a tenth of a memory-cache hit.
    ///
    /// - Parameter seed: The table's per-instance seed.
    /// - Returns: The key's hash for that table.
    public func _rawHashValue(seed: Int) -> Int {
        precomputedHash ^ seed
    }

    /// The data key and the variant, as `dataKey [variant]`.
    public var description: String { "\(dataKey) [\(variant)]" }
}

extension ObjectRequest {
    /// A request for the object known by `oid` alone, with no URL to load it from: for storing an
    /// object the app made (`ObjectManager.store`) and finding it again by its oid. Its `url` is
    /// `cacheOnlyURL`, which no loader loads, so a user managed with it gets the object from the
    /// memory cache (or a user sharing it) and `.invalidRequest` otherwise. Give a request with a
    /// real URL and the same oid where the object may have to be loaded again.
    ///
    /// - Parameter oid: The object's identifier, the whole of its key (with the decoder's).
    public init(oid: String) {
        self.init(url: ObjectRequest.cacheOnlyURL, oid: oid)
    }

    /// The URL of `ObjectRequest(oid:)`: "managedcache:stored", a scheme no loader handles.
    public static let cacheOnlyURL = URL(string: "managedcache:stored")!
}

extension ObjectKey {
    /// The file-cache key of a stored variant: the bytes' key plus the decoder's identifier, after
    /// a `\u{1E}`, which no data key contains (`ObjectRequest.dataKey` escapes it), so no request's
    /// bytes can be looked up under a variant's key.
    var variantFileKey: String { dataKey + Self.variantMarker + variant }

    /// What separates a variant's file key from its data key.
    static let variantMarker = "\u{1E}variant="
}

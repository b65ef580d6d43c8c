import Foundation
import ManagedCache

/// Bodies that carry their own length and checksum, so a decoder can tell a complete body from
/// one cut short, padded, damaged or replaced: what an image decoder's end marker does for real
/// images, for tests that have no image decoder.
///
/// Layout: `"MCFB"`, the payload length (8 bytes, big-endian), the payload, the payload's CRC-32
/// (4 bytes, big-endian), `"END!"`.
public enum FramedBody {
    /// The content type `FramedDecoder` expects by default.
    public static let contentType = "application/x-managedcache-framed"

    private static let head = Data("MCFB".utf8)
    private static let tail = Data("END!".utf8)

    /// Why `unwrap` refused a body.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case tooShort(Int)
        case badHead
        case lengthMismatch(declared: UInt64, actual: Int)
        case badChecksum
        case badTail

        public var description: String {
            switch self {
            case .tooShort(let count): return "\(count) bytes: too short for a frame"
            case .badHead: return "no frame head"
            case .lengthMismatch(let declared, let actual): return "frame declares \(declared) payload bytes, has \(actual)"
            case .badChecksum: return "payload checksum mismatch"
            case .badTail: return "no frame tail"
            }
        }
    }

    /// `payload` in a frame.
    public static func wrap(_ payload: Data) -> Data {
        var body = head
        var length = UInt64(payload.count).bigEndian
        withUnsafeBytes(of: &length) { body.append(contentsOf: $0) }
        body.append(payload)
        var checksum = CRC32.checksum(payload).bigEndian
        withUnsafeBytes(of: &checksum) { body.append(contentsOf: $0) }
        body.append(tail)
        return body
    }

    /// A frame around `count` deterministic bytes derived from `seed` (the same in every process).
    public static func make(seed: String, count: Int) -> Data {
        wrap(payload(seed: seed, count: count))
    }

    /// `count` deterministic bytes derived from `seed`'s UTF-8 bytes (FNV-1a, then a linear
    /// congruential generator): the same in every process, unlike `String.hashValue`.
    public static func payload(seed: String, count: Int) -> Data {
        var state: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in seed.utf8 { state = (state ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        var bytes = [UInt8](repeating: 0, count: count)
        for index in bytes.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes[index] = UInt8(truncatingIfNeeded: state >> 33)
        }
        return Data(bytes)
    }

    /// The payload of a complete, undamaged frame; throws `Problem` otherwise.
    public static func unwrap(_ body: Data) throws(Problem) -> Data {
        let bytes = [UInt8](body)
        let overhead = head.count + 8 + 4 + tail.count
        guard bytes.count >= overhead else { throw .tooShort(bytes.count) }
        guard bytes.prefix(head.count).elementsEqual(head) else { throw .badHead }
        var declared: UInt64 = 0
        for byte in bytes[head.count..<(head.count + 8)] { declared = declared << 8 | UInt64(byte) }
        let actual = bytes.count - overhead
        guard declared == UInt64(actual) else { throw .lengthMismatch(declared: declared, actual: actual) }
        guard bytes.suffix(tail.count).elementsEqual(tail) else { throw .badTail }
        let payloadStart = head.count + 8
        let payload = Data(bytes[payloadStart..<(payloadStart + actual)])
        var stored: UInt32 = 0
        for byte in bytes[(payloadStart + actual)..<(payloadStart + actual + 4)] { stored = stored << 8 | UInt32(byte) }
        guard CRC32.checksum(payload) == stored else { throw .badChecksum }
        return payload
    }
}

/// A decoder that accepts only complete `FramedBody` frames (and, when `requiredContentType` is
/// set, only responses that say they are one): a validating decoder for tests, as an image
/// decoder is for images. The object is a `Blob` of the payload.
public struct FramedDecoder: ObjectDecoding {
    /// Why the decoder refused the bytes.
    public struct Refusal: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// Bytes whose response declared another content type are refused; `nil` accepts any.
    public let requiredContentType: String?
    /// How many times `decode` ran.
    public let decodes: Counter

    /// Creates a decoder requiring `FramedBody.contentType` unless told otherwise.
    public init(requiredContentType: String? = FramedBody.contentType, decodes: Counter = Counter()) {
        self.requiredContentType = requiredContentType
        self.decodes = decodes
    }

    public var identifier: String { "test.framed" }

    public func decode(_ data: LoadedData) throws -> Blob {
        decodes.increment()
        if let requiredContentType, let declared = data.contentType,
            declared.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() != requiredContentType
        {
            throw Refusal(reason: "content type '\(declared)' is not '\(requiredContentType)'")
        }
        do {
            return Blob(try FramedBody.unwrap(try data.bytes()))
        } catch let problem as FramedBody.Problem {
            throw Refusal(reason: problem.description)
        }
    }
}

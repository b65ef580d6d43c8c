import Foundation

/// A type-erased `ObjectDecoding`, so one handler table can hold handlers of every object type.
struct AnyObjectDecoder: Sendable {
    let identifier: String
    let prefersFileURL: Bool
    let storesVariant: Bool
    let keepsOriginal: Bool
    private let encodeVariantBody: @Sendable (any Sendable) -> Data?
    private let decodeBody: @Sendable (LoadedData) throws -> any Sendable
    private let costBody: @Sendable (any Sendable, Int) -> Int

    init<Decoder: ObjectDecoding>(_ decoder: Decoder) {
        identifier = decoder.identifier
        prefersFileURL = decoder.prefersFileURL
        storesVariant = decoder.storesVariant
        keepsOriginal = decoder.keepsOriginal
        encodeVariantBody = { object in
            guard let object = object as? Decoder.Object else { return nil }
            return decoder.encodedVariant(of: object)
        }
        decodeBody = { try decoder.decode($0) }
        costBody = { object, byteCount in
            guard let object = object as? Decoder.Object else { return byteCount }
            return decoder.cost(of: object, byteCount: byteCount)
        }
    }

    /// Decodes, mapping any thrown error to `.decodingFailed`.
    func decode(_ data: LoadedData) -> Result<any Sendable, ManagedCacheError> {
        do {
            return .success(try decodeBody(data))
        } catch let error as ManagedCacheError {
            return .failure(error)
        } catch {
            return .failure(.decodingFailed(reason: String(describing: error)))
        }
    }

    func cost(of object: any Sendable, byteCount: Int) -> Int { costBody(object, byteCount) }

    func encodedVariant(of object: any Sendable) -> Data? { encodeVariantBody(object) }
}

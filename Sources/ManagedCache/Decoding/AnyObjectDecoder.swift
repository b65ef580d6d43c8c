import Foundation

/// A type-erased `ObjectDecoding`, so one handler table can hold handlers of every object type.
///
/// It keeps the decoder as an existential and reaches it through generic helpers (the existential
/// is opened at each call), so making one, which happens for every new handler, allocates nothing
/// for small decoders.
struct AnyObjectDecoder: Sendable {
    let base: any ObjectDecoding
    let identifier: String

    init(_ decoder: some ObjectDecoding, identifier: String? = nil) {
        base = decoder
        self.identifier = identifier ?? decoder.identifier
    }

    var prefersFileURL: Bool { base.prefersFileURL }
    var storesVariant: Bool { base.storesVariant }
    var keepsOriginal: Bool { base.keepsOriginal }

    /// Decodes, mapping any thrown error to `.decodingFailed`.
    func decode(_ data: LoadedData) -> Result<any Sendable, ManagedCacheError> {
        Self.decode(data, with: base)
    }

    func cost(of object: any Sendable, byteCount: Int) -> Int {
        Self.cost(of: object, byteCount: byteCount, with: base)
    }

    func encodedVariant(of object: any Sendable) -> Data? {
        Self.encodedVariant(of: object, with: base)
    }

    private static func decode<Decoder: ObjectDecoding>(_ data: LoadedData, with decoder: Decoder) -> Result<
        any Sendable, ManagedCacheError
    > {
        do {
            return .success(try decoder.decode(data))
        } catch let error as ManagedCacheError {
            return .failure(error)
        } catch {
            return .failure(.decodingFailed(reason: String(describing: error)))
        }
    }

    private static func cost<Decoder: ObjectDecoding>(of object: any Sendable, byteCount: Int, with decoder: Decoder) -> Int {
        guard let object = object as? Decoder.Object else { return byteCount }
        return decoder.cost(of: object, byteCount: byteCount)
    }

    private static func encodedVariant<Decoder: ObjectDecoding>(of object: any Sendable, with decoder: Decoder) -> Data? {
        guard let object = object as? Decoder.Object else { return nil }
        return decoder.encodedVariant(of: object)
    }
}

// MARK: - Previews

extension AnyObjectDecoder {
    /// Whether the decoder makes previews at all.
    var makesPreviews: Bool { base is any PreviewDecoding }

    /// A preview session for one download, when the decoder makes previews.
    func makePreviewSession() -> AnyPreviewSession? {
        guard let previewing = base as? any PreviewDecoding else { return nil }
        return Self.previewSession(previewing)
    }

    private static func previewSession<Decoder: PreviewDecoding>(_ decoder: Decoder) -> AnyPreviewSession? {
        decoder.makePreviewSession().map(AnyPreviewSession.init)
    }
}

import Foundation

/// A decoder that can show an object before its download is complete: a progressive JPEG's first
/// scans, an interlaced PNG's first passes. It makes one `PreviewSession` per download; the manager
/// feeds the session the bytes as they arrive and asks it for a preview each time it says a new
/// stage is complete, at most every `ObjectManager.Configuration.previewInterval`.
///
/// Previews are made only for downloads that a user wanting previews (`wantsPreviews`) waits for
/// when the first bytes arrive, and delivered only to such users (`managedObjectPreview`). They are
/// never put in a cache and never delivered after the object itself or a failure.
/// `ImageDecoder` makes previews of progressive JPEGs.
///
/// ```swift
/// /// Text that shows its lines as they arrive.
/// struct TextDecoder: PreviewDecoding {
///     func decode(_ data: LoadedData) throws -> String { String(decoding: try data.bytes(), as: UTF8.self) }
///     func makePreviewSession() -> LineSession? { LineSession() }
/// }
///
/// final class LineSession: PreviewSession, @unchecked Sendable {
///     // Safe to be Sendable: `text` is read and written only while `lock` is held.
///     private let lock = NSLock()
///     private var text = Data()
///
///     func append(_ chunk: Data) -> PreviewStep {
///         lock.lock()
///         defer { lock.unlock() }
///         text.append(chunk)
///         return chunk.contains(0x0A) ? .ready : .waiting  // a new complete line
///     }
///
///     func makePreview() -> String? {
///         lock.lock()
///         defer { lock.unlock() }
///         return String(decoding: text, as: UTF8.self)
///     }
/// }
/// ```
public protocol PreviewDecoding: ObjectDecoding {
    /// The session type, making previews of this decoder's objects.
    associatedtype Session: PreviewSession where Session.Object == Object

    /// A session for one download from its first byte. Called on the thread receiving the
    /// download; keep it cheap.
    ///
    /// - Returns: A new session, or `nil` when this decoder makes no previews (for now).
    func makePreviewSession() -> Session?
}

/// What a `PreviewSession` says after taking more bytes.
public enum PreviewStep: Sendable, Hashable {
    /// Nothing new to show yet.
    case waiting
    /// A new stage is complete: a preview made now would show more than the last one.
    case ready
    /// This download will make no (more) previews: not a progressive file, or its end arrived
    /// and the object itself follows. The session is dropped.
    case finished
}

/// Makes previews of one download from its bytes, as they arrive (see `PreviewDecoding`).
///
/// Calls to `append(_:)` come one at a time, in the order of the bytes, on the thread receiving
/// the download: they must be cheap (find stage boundaries, keep the bytes; no decoding). Calls to
/// `makePreview()` come one at a time too, off the main thread, but may overlap an `append`: a
/// session keeps its state behind a lock.
public protocol PreviewSession: AnyObject, Sendable {
    /// The object previews are made of: the decoder's object type.
    associatedtype Object: Sendable

    /// Takes the next bytes of the download.
    ///
    /// - Parameter chunk: The next bytes, in order (the first call gets the first bytes).
    /// - Returns: ``PreviewStep/ready`` when a new stage is complete, ``PreviewStep/waiting``
    ///   otherwise, ``PreviewStep/finished`` when this download will make no (more) previews.
    func append(_ chunk: Data) -> PreviewStep

    /// Makes a preview of what has arrived. Called after ``append(_:)`` returned
    /// ``PreviewStep/ready`` (not necessarily at once: previews are throttled).
    ///
    /// - Returns: The preview, or `nil` when none can be made.
    func makePreview() -> Object?
}

/// A `PreviewSession` with its object type erased, for the manager's tables.
struct AnyPreviewSession: Sendable {
    let append: @Sendable (Data) -> PreviewStep
    let makePreview: @Sendable () -> (any Sendable)?

    init<Session: PreviewSession>(_ session: Session) {
        append = { session.append($0) }
        makePreview = { session.makePreview() }
    }
}

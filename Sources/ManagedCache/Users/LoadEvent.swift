/// What a load reports to ``ObjectManager/loadEvents(for:decoder:)``.
public enum LoadEvent<Object: Sendable>: Sendable {
    /// Bytes arrived.
    case progress(LoadProgress)
    /// The object is ready; the stream ends after this event.
    case object(Object, DataOrigin)
}

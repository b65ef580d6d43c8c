import Foundation
import ManagedCacheLocking

/// The preview sessions of one fetch, one per handler key whose users wanted previews when the
/// first bytes arrived, and when each may show its next preview.
///
/// The manager starts it with the first chunk (offset 0) and feeds it every chunk in order, on the
/// thread receiving the download. A chunk that does not continue the bytes seen (a resumed
/// download's first chunk is not its first byte) turns previews off for the fetch. A session's
/// preview is due when it said a stage is complete, no preview of it is being made, and
/// `interval` seconds have passed since its last one; a stage completed sooner waits for a later
/// chunk.
final class PreviewFeed: Sendable {
    private enum Phase {
        /// No chunk yet.
        case waiting
        /// Sessions are taking the bytes.
        case active
        /// No previews for this fetch.
        case off
    }

    private struct Entry {
        let session: AnyPreviewSession
        var lastPreview: MonotonicInstant?
        /// A completed stage has not been shown yet.
        var isDue = false
        /// A preview is being made.
        var isMaking = false
    }

    private struct State {
        var phase = Phase.waiting
        var entries: [ObjectKey: Entry] = [:]
        var nextOffset = 0
    }

    private let state = Lock(State())
    /// The shortest time between two previews of a session.
    let interval: Double

    init(interval: Double) {
        self.interval = interval
    }

    /// (Re)starts with `sessions`, for the bytes from offset 0; none turns previews off.
    func start(_ sessions: [(key: ObjectKey, session: AnyPreviewSession)]) {
        state.withLock { state in
            state.entries = [:]
            for (key, session) in sessions { state.entries[key] = Entry(session: session) }
            state.phase = sessions.isEmpty ? .off : .active
            state.nextOffset = 0
        }
    }

    /// Feeds `chunk` (starting at `offset` in the body) to every session; returns the sessions
    /// whose preview is to be made now (each then marked as making one until `previewMade(for:)`).
    func append(_ chunk: Data, at offset: Int) -> [(key: ObjectKey, session: AnyPreviewSession)] {
        let sessions = state.withLock { state -> [(key: ObjectKey, session: AnyPreviewSession)] in
            guard state.phase == .active, offset == state.nextOffset else {
                state.phase = .off
                state.entries = [:]
                return []
            }
            state.nextOffset += chunk.count
            return state.entries.map { ($0.key, $0.value.session) }
        }
        guard !sessions.isEmpty else { return [] }
        // Outside the lock: sessions find their stages themselves (chunks come one at a time).
        let steps = sessions.map { ($0.key, $0.session.append(chunk)) }
        let now = MonotonicInstant.now
        return state.withLock { state in
            var due: [(key: ObjectKey, session: AnyPreviewSession)] = []
            for (key, step) in steps {
                guard var entry = state.entries[key] else { continue }
                switch step {
                case .finished:
                    state.entries[key] = nil
                    continue
                case .ready:
                    entry.isDue = true
                case .waiting:
                    break
                }
                let rested = entry.lastPreview.map { now.seconds(since: $0) >= interval } ?? true
                if entry.isDue, !entry.isMaking, rested {
                    entry.isDue = false
                    entry.isMaking = true
                    entry.lastPreview = now
                    due.append((key, entry.session))
                }
                state.entries[key] = entry
            }
            return due
        }
    }

    /// The preview of `key`'s session has been made (or could not be).
    func previewMade(for key: ObjectKey) {
        state.withLock { $0.entries[key]?.isMaking = false }
    }
}

import Foundation

extension LoadCore {
    /// A fetch's first bytes arrived: which of its handlers get a preview session. Those that
    /// still wait for this fetch, whose decoder makes previews, and that have a live user
    /// wanting them; a handler joined later gets none (its previews would start mid-file).
    func _previewsWanted(dataKey: String, fetch identifier: UInt64, in state: inout ManagerState) -> [(
        ObjectKey, AnyObjectDecoder
    )] {
        guard let fetch = state.fetches[dataKey], fetch.identifier == identifier else { return [] }
        return fetch.subscribers.compactMap { key in
            guard let handler = state.handlers[key], case .loading(identifier) = handler.phase,
                handler.decoder.makesPreviews, handler.users.contains(where: { $0.isAlive && $0.link.wantsPreviews })
            else { return nil }
            return (key, handler.decoder)
        }
    }

    /// A preview of `key` was made from fetch `identifier`'s bytes: it goes to the users that
    /// want previews if the handler still waits for that fetch, and is dropped otherwise (the
    /// object or a failure got there first). Nothing is cached.
    func _previewMade(_ preview: any Sendable, key: ObjectKey, fetch identifier: UInt64, in state: inout ManagerState)
        -> PendingWork
    {
        var work = PendingWork()
        guard let handler = state.handlers[key], case .loading(identifier) = handler.phase else { return work }
        work.deliveries = handler.deliveries(of: .preview(preview), fetch: identifier) { $0.link.wantsPreviews }
        return work
    }
}

import Foundation

extension ObjectManager {
    /// A chunk of fetch `identifier` arrived, starting at `offset` in the body: the first chunk
    /// makes a preview session for each handler of the fetch that has a user wanting previews
    /// and a decoder that makes them; every chunk goes to the sessions, and the previews that are
    /// due are made off this thread and delivered to the users that want them.
    func previewBytesArrived(_ chunk: Data, offset: Int, feed: PreviewFeed, dataKey: String, fetch identifier: UInt64) {
        if offset == 0 {
            let decoders = state.withLock { state -> [(ObjectKey, AnyObjectDecoder)] in
                guard let fetch = state.fetches[dataKey], fetch.identifier == identifier else { return [] }
                return fetch.subscribers.compactMap { key in
                    guard let handler = state.handlers[key], case .loading(identifier) = handler.phase,
                        handler.decoder.makesPreviews, handler.users.contains(where: { $0.isAlive && $0.link.wantsPreviews })
                    else { return nil }
                    return (key, handler.decoder)
                }
            }
            // Outside the lock: a session may allocate.
            feed.start(decoders.compactMap { key, decoder in decoder.makePreviewSession().map { (key, $0) } })
        }
        for (key, session) in feed.append(chunk, at: offset) {
            DispatchQueue.global(qos: .utility).async { [weak self] in
                let preview = session.makePreview()
                feed.previewMade(for: key)
                if let preview { self?.deliverPreview(preview, key: key, fetch: identifier) }
            }
        }
    }

    /// Gives `preview` to the users of `key` that want previews, if the handler still waits for
    /// fetch `identifier`. Nothing is cached; a delivery that finds the handler no longer loading
    /// that fetch (the object or a failure got there first) is dropped.
    private func deliverPreview(_ preview: any Sendable, key: ObjectKey, fetch identifier: UInt64) {
        let work = state.withLock { state -> PendingWork in
            guard let handler = state.handlers[key], case .loading(identifier) = handler.phase else { return PendingWork() }
            var work = PendingWork()
            work.deliveries = handler.deliveries(of: .preview(preview), fetch: identifier) { $0.link.wantsPreviews }
            return work
        }
        performer.perform(work)
    }
}

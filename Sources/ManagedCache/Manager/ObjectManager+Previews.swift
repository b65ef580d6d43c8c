import Foundation

extension ObjectManager {
    /// A chunk of a fetch arrived, starting at `offset` in the body. At the first chunk a session
    /// is made (`feed`) for each handler its audience names (a decoder that makes previews, a
    /// user listening who wants them); every chunk goes to the sessions, and the previews that
    /// are due are made off this thread and delivered to the users listening who want them.
    /// None of it takes the manager's lock: each delivery passes its user's gate, which drops a
    /// preview once the user's final callback is decided.
    func previewBytesArrived(_ chunk: Data, offset: Int, feed: PreviewFeed, audience: FetchAudience) {
        if offset == 0 {
            // Outside any lock: a session may allocate.
            feed.start(audience.previewSubscribers().compactMap { key, decoder in decoder.makePreviewSession().map { (key, $0) } })
        }
        for (key, session) in feed.append(chunk, at: offset) {
            DispatchQueue.global(qos: .utility).async { [weak self] in
                let preview = session.makePreview()
                feed.previewMade(for: key)
                guard let self, let preview else { return }
                var work = PendingWork()
                work.deliveries = audience.previewDeliveries(preview, key: key)
                performer.perform(work)
            }
        }
    }
}

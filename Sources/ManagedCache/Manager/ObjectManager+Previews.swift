import Foundation

extension ObjectManager {
    /// A chunk of fetch `identifier` arrived, starting at `offset` in the body. At the first
    /// chunk the core names the handlers that get previews and a session is made for each
    /// (`feed`); every chunk goes to the sessions, and the previews that are due are made off
    /// this thread and handed to the core, which delivers them to the users that want them. A
    /// fetch no handler with a previewing decoder joined asks the core nothing.
    func previewBytesArrived(_ chunk: Data, offset: Int, feed: PreviewFeed, dataKey: String, fetch identifier: UInt64) {
        if offset == 0 {
            guard feed.hasPreviewingSubscriber else {
                feed.start([])
                return
            }
            let wanted = decide(.previewsWanted(dataKey: dataKey, fetch: identifier)).previewDecoders
            // Outside the lock: a session may allocate.
            feed.start(wanted.compactMap { key, decoder in decoder.makePreviewSession().map { (key, $0) } })
        }
        for (key, session) in feed.append(chunk, at: offset) {
            EngineThreads.workers.async { [weak self] in
                let preview = session.makePreview()
                feed.previewMade(for: key)
                guard let self, let preview else { return }
                performer.perform(decide(.previewMade(preview, key: key, fetch: identifier)).work)
            }
        }
    }
}

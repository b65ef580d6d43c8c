import Foundation

extension ObjectManager {
    /// Finds or creates the handler for the user's key, attaches the user (weakly), and starts or
    /// joins the load. Callable from any thread or task.
    ///
    /// - A memory hit (or an object a live handler already shares) is delivered synchronously, on the
    ///   calling thread, before `manage` returns: no placeholder flicker. For a `.mainQueue` user
    ///   that is only when `manage` runs on the main queue; otherwise the hit goes to the main
    ///   queue like every other callback: `.mainQueue` callbacks run there, whoever calls.
    /// - A user managed again with another request is detached from the old one first and never
    ///   receives its object afterwards.
    /// - A user whose `objectRequest` is `nil` is detached.
    /// - Each call is one request, answered by exactly one final callback: ready, or failed. A
    ///   failure or a cancellation detaches the user: it hears nothing of a later load of the key
    ///   (another user's retry) until it is managed again. A ready user stays attached, sharing
    ///   the object, and receives the newer object if a revalidation brings one.
    /// - The user's properties (`objectRequest`, `objectDecoder`, `callbackDelivery`) are read
    ///   here, on the calling thread, and never again until the next `manage`.
    public func manage<User: ManagedObjectUser>(_ user: User) {
        manage(user, isAwaiting: false)
    }

    /// `manage`, for a user behind an `async` call when `isAwaiting` (see `inlineFileRead`).
    func manage<User: ManagedObjectUser>(_ user: User, isAwaiting: Bool) {
        guard let request = user.objectRequest else {
            unmanage(user)
            return
        }
        let delivery = user.callbackDelivery
        let call = ManageCall(request: request, userID: ObjectIdentifier(user), delivery: delivery, isAwaiting: isAwaiting)
        manage(call, decoder: user.objectDecoder, link: { ThreadSafeUserLink(user, delivery: delivery) }, deliverHit: { event, request in
            user.receive(event, request: request)
        })
    }

    /// `manage` once the user's properties are read: `makeLink` makes the user's link when it
    /// needs a new one; `deliverHit` calls the user with a memory hit on this thread, when its
    /// delivery allows that here.
    func manage<Decoder: ObjectDecoding>(
        _ call: ManageCall, decoder: Decoder, link makeLink: @Sendable () -> any UserLink,
        deliverHit: (UserEvent, ObjectRequest) -> Void
    ) {
        let request = call.request
        let identifier = decoder.identifier
        let key = request.objectKey(variant: identifier)
        let policy = configuration.policy.applying(request.policy)

        var staleHit: CachedObject?
        if policy.cacheInMemory, let cached = memoryCache.value(forKey: key) {
            if cached.isFresh(policy: policy.freshness) {
                var (work, attachment, link) = state.withLock { state in
                    state.statistics.requests += 1
                    state.statistics.memoryHits += 1
                    return _attachForHit(call, link: makeLink, key: key, policy: policy, cached: cached,
                                         decoder: decoder, identifier: identifier, in: &state)
                }
                // `.mainQueue` callbacks run on the main queue, whoever calls: synchronously only there.
                if call.delivery == .immediate || MainQueue.isCurrent {
                    if !work.isEmpty { perform(work) }
                    deliverHit(.ready(cached.object, .memory), request)
                } else {
                    work.deliveries.append(PendingDelivery(
                        user: link, request: request, key: key, attachment: attachment, event: .ready(cached.object, .memory)))
                    perform(work)
                }
                return
            }
            staleHit = cached
        }

        guard !key.dataKey.isEmpty, configuration.dataLoader.canLoad(request.url) else {
            let reason = key.dataKey.isEmpty ? "empty key" : "unsupported URL '\(request.url.absoluteString)'"
            let work = state.withLock { state -> PendingWork in
                state.statistics.requests += 1
                var work = _detach(userID: call.userID, in: &state)
                state.statistics.failures[.invalidRequest, default: 0] += 1
                work.deliveries.append(PendingDelivery(
                    user: makeLink(), request: request, key: key, attachment: 0,
                    event: .failed(.invalidRequest(reason: reason))))
                return work
            }
            perform(work, synchronousUser: call.userID)
            return
        }

        var fileLookup: (generation: UInt64, policy: LoadPolicy, inline: InlineFileRead?)?
        let work = state.withLock { state -> PendingWork in
            state.statistics.requests += 1
            var work = PendingWork()
            let (attachment, handler, user) = _attach(
                call, link: makeLink, key: key, policy: policy,
                decoder: AnyObjectDecoder(decoder, identifier: identifier), work: &work, in: &state)
            if case .ready(let object, _) = handler.phase, staleHit == nil, let freshness = handler.freshness,
               freshness.isStale(policy: policy.freshness) {
                staleHit = CachedObject(object: object, freshness: freshness, cost: handler.objectCost)
            }
            if let stale = staleHit, !handler.phase.isBusy {
                if policy.staleWhileRevalidate, stale.freshness?.mustRevalidate != true {
                    // Deliver the stale object now; revalidate in the background.
                    state.statistics.memoryHits += 1
                    work.deliveries.append(PendingDelivery(
                        user: user, request: request, key: key, attachment: attachment,
                        event: .ready(stale.object, .memory)))
                    work.append(_startRevalidation(key, stale: stale, in: &state))
                    return work
                }
                if handler.revalidatingFetch == nil {
                    handler.staleObject = stale
                    handler.request = request
                    handler.policy = policy
                    handler.phase = .new
                    state.handlers[key] = handler
                    work.append(_startLoading(key, evictable: policy.participatesInLoadingBuffer, in: &state))
                    return work
                }
            }
            switch handler.phase {
            case .ready(let object, _):
                state.statistics.sharedObjectHits += 1
                if policy.cacheInMemory {
                    work.released += memoryCache.setValue(
                        CachedObject(object: object, freshness: handler.freshness, cost: handler.objectCost),
                        forKey: key, cost: handler.objectCost
                    ).map(\.object)
                }
                work.deliveries.append(PendingDelivery(
                    user: user, request: request, key: key, attachment: attachment,
                    event: .ready(object, .sharedObject)))
            case .loading, .loaded:
                state.statistics.coalescedJoins += 1
                if policy.participatesInLoadingBuffer, case .loading(let fetchID) = handler.phase {
                    _promoteFetchFromPrefetchLane(dataKey: key.dataKey, fetch: fetchID, work: &work, in: &state)
                    // Joining makes the load the newest in the buffer, even if it was already
                    // there: a row that just scrolled in wants it now, and a load started long
                    // ago for a row that left (a shared avatar) must not be the next pushed out.
                    work.append(_pushToLoadingBuffer(key, in: &state))
                }
            case .new, .failed:
                if policy.failureMemoryInterval > 0,
                   let failure = state.failures.failure(for: key) {
                    state.statistics.failures[.recentlyFailed, default: 0] += 1
                    work.deliveries.append(PendingDelivery(
                        user: user, request: request, key: key, attachment: attachment,
                        event: .failed(.recentlyFailed(failure))))
                    // That answers its request: it hears nothing of a later load of this key.
                    handler.users.removeAll { $0.attachment == attachment }
                    return work
                }
                handler.request = request
                handler.policy = policy
                state.handlers[key] = handler
                let inline = inlineFileRead(isAwaiting: call.isAwaiting, request: request, policy: policy)
                if policy.cacheInFile, fileCache != nil, inline != nil || handler.decoder.storesVariant {
                    // Look in the file cache first (on this thread, or in the background for a
                    // variant lookup under the asynchronous policy); a miss starts the load.
                    handler.generation &+= 1
                    handler.phase = .loaded
                    state.handlers[key] = handler
                    _cancelPreloads(in: &state)
                    fileLookup = (handler.generation, policy, inline)
                } else {
                    work.append(_startLoading(key, evictable: policy.participatesInLoadingBuffer, in: &state))
                }
            }
            return work
        }
        perform(work, synchronousUser: call.userID)
        if let fileLookup {
            if let inline = fileLookup.inline {
                loadFromFileCache(key: key, generation: fileLookup.generation, policy: fileLookup.policy,
                                  synchronousUser: call.userID, maximumBytes: inline.maximumBytes)
            } else {
                Task(executorPreference: LoadingExecutor.shared) { [weak self] in
                    self?.loadFromFileCache(key: key, generation: fileLookup.generation, policy: fileLookup.policy,
                                            synchronousUser: nil, maximumBytes: nil)
                }
            }
        }
    }

    /// How a file-cache hit of this request may be read inside `manage`, on the caller's thread:
    /// any size under the `.synchronous` policy; up to `Configuration.inMemoryThreshold` bytes for
    /// an awaiting caller (`object(for:)`, `loadEvents`) whose request leaves the policy to the
    /// manager; `nil`: in the background.
    ///
    /// Why awaiting callers: they run on the cooperative pool, never on the main thread, and
    /// reading a few kilobytes from the page cache costs less than the two thread hops of the
    /// background lookup (there and back), which made an awaited hit about three times slower.
    /// Larger entries are a miss here and are read by the fetch task, so a long read never holds a
    /// cooperative thread.
    func inlineFileRead(isAwaiting: Bool, request: ObjectRequest, policy: LoadPolicy) -> InlineFileRead? {
        if policy.fileCacheDelivery == .synchronous { return InlineFileRead(maximumBytes: nil) }
        guard request.policy.fileCacheDelivery == nil, isAwaiting else { return nil }
        return InlineFileRead(maximumBytes: configuration.inMemoryThreshold)
    }

    /// Starts revalidating the ready object of `key` in the background, unless that is under way.
    func _startRevalidation(_ key: ObjectKey, stale: CachedObject, in state: inout ManagerState) -> PendingWork {
        guard let handler = state.handlers[key], handler.revalidatingFetch == nil, !handler.phase.isBusy else {
            return PendingWork()
        }
        handler.phase = .ready(stale.object, .memory)
        handler.freshness = stale.freshness
        handler.objectCost = stale.cost
        handler.staleObject = stale
        if var fetch = state.fetches[key.dataKey] {
            fetch.subscribers.insert(key)
            state.fetches[key.dataKey] = fetch
            handler.revalidatingFetch = fetch.identifier
        } else {
            handler.revalidatingFetch = _createFetch(
                dataKey: key.dataKey, request: handler.request, policy: handler.policy, subscriber: key,
                inPrefetchLane: false, validators: stale.freshness, in: &state)
        }
        state.handlers[key] = handler
        return PendingWork()
    }

    /// Detaches `user` from whatever it was managed for: HJCache's `clear` before cell reuse.
    /// It receives no more callbacks for that request. If it was the last user of a load and the
    /// policy does not finish loads without users, the load is cancelled.
    public func unmanage<User: ManagedObjectUser>(_ user: User) {
        let work = state.withLock { _detach(userID: ObjectIdentifier(user), in: &$0) }
        perform(work)
    }

    // MARK: - Attaching users (under the lock)

    /// Attaches the user of `call` to the handler of `key` (creating it), detaching it from any
    /// other key. Returns the new attachment's identifier, the handler and the user's link.
    @discardableResult
    func _attach(
        _ call: ManageCall, link makeLink: @Sendable () -> any UserLink, key: ObjectKey, policy: LoadPolicy,
        decoder: @autoclosure () -> AnyObjectDecoder, work: inout PendingWork, in state: inout ManagerState
    ) -> (attachment: UInt64, handler: HandlerRecord, link: any UserLink) {
        let request = call.request
        // The user's record from its last `manage`, reused. A record whose user is gone belonged
        // to a deallocated object that had the same address: replaced, it stays in its handler's
        // list until the next sweep, which it brings closer (taking it out now would scan that
        // list on every such `manage`).
        var record = state.attachments[call.userID]
        if let existing = record {
            if !existing.isAlive {
                state.replacedRecords += 1
                record = nil
            } else {
                if existing.link.delivery != call.delivery { existing.link = makeLink() }
                if existing.isListed {
                    if existing.key == key, let handler = state.handlers[key] {
                        // The same key again (a new signed URL for the oid, another header or
                        // policy): the user stays on this handler and joins what it is doing, but
                        // its answer carries the request it is managed with now, under a new
                        // identifier, so a callback decided for the previous request is dropped
                        // and not mistaken for it.
                        existing.request = request
                        existing.attachment = state._makeIdentifier()
                        existing.evictable = policy.participatesInLoadingBuffer
                        return (existing.attachment, handler, existing.link)
                    }
                    work.append(_detach(existing, in: &state))
                }
                // Not listed: its last request ended in a failure or a cancellation, which detached it.
            }
        }
        _sweepIfNeeded(in: &state)  // before the handler lookup: a sweep may drop handlers
        let handler: HandlerRecord
        if let existing = state.handlers[key] {
            handler = existing
        } else {
            handler = HandlerRecord(key: key, decoder: decoder(), request: request, policy: policy)
            state.handlers[key] = handler
        }
        let attachment = state._makeIdentifier()
        let evictable = policy.participatesInLoadingBuffer
        if let record {
            record.key = key
            record.request = request
            record.attachment = attachment
            record.evictable = evictable
            handler.users.append(record)
            return (attachment, handler, record.link)
        }
        let created = Attachment(link: makeLink(), key: key, request: request, attachment: attachment, evictable: evictable)
        state.attachments[call.userID] = created
        handler.users.append(created)
        return (attachment, handler, created.link)
    }

    /// The memory-hit path: attaches the user to a handler holding the object. Returns the work
    /// that detaching it from a previous key caused (usually none), and the attachment and link,
    /// for a caller that cannot deliver the hit on its own thread.
    func _attachForHit<Decoder: ObjectDecoding>(
        _ call: ManageCall, link makeLink: @Sendable () -> any UserLink, key: ObjectKey, policy: LoadPolicy,
        cached: CachedObject, decoder: Decoder, identifier: String, in state: inout ManagerState
    ) -> (work: PendingWork, attachment: UInt64, link: any UserLink) {
        var work = PendingWork()
        let (attachment, handler, link) = _attach(
            call, link: makeLink, key: key, policy: policy,
            decoder: AnyObjectDecoder(decoder, identifier: identifier), work: &work, in: &state)
        if !handler.phase.isBusy, handler.revalidatingFetch == nil {
            handler.phase = .ready(cached.object, .memory)
            handler.freshness = cached.freshness
            handler.objectCost = cached.cost
        }
        return (work, attachment, link)
    }

    /// Detaches the user `userID` from whatever it was managed for (and forgets its record),
    /// cancelling that load if nobody else wants it.
    func _detach(userID: ObjectIdentifier, in state: inout ManagerState) -> PendingWork {
        guard let record = state.attachments.removeValue(forKey: userID) else { return PendingWork() }
        return _detach(record, in: &state)
    }

    /// Takes `record` off its handler's list, dropping the handler if nothing needs it any more,
    /// or cancelling its load if nobody else wants it.
    func _detach(_ record: Attachment, in state: inout ManagerState) -> PendingWork {
        let key = record.key
        defer { record.isListed = false }
        guard let handler = state.handlers[key] else { return PendingWork() }
        handler.users.removeAll { $0 === record || !$0.isAlive }
        if handler.users.isEmpty, !handler.phase.isBusy, !handler.heldByPrefetch, handler.revalidatingFetch == nil {
            // Nobody uses it and nothing is under way: drop it. Only users keep a handler's object
            // alive; the memory cache keeps its own reference within its limits.
            state.handlers.removeValue(forKey: key)
            return PendingWork()
        }
        return _cancelIfAbandoned(key, in: &state)
    }

    /// Cancels the load of `key` if it has no live users, no prefetch wants it, and its policy
    /// does not finish such loads.
    func _cancelIfAbandoned(_ key: ObjectKey, in state: inout ManagerState) -> PendingWork {
        guard let handler = state.handlers[key], case .loading = handler.phase,
              !handler.policy.finishLoadingWithoutUsers, !handler.heldByPrefetch, !handler.hasLiveUsers
        else { return PendingWork() }
        return _cancelHandler(key, reason: .noUsers, in: &state)
    }

    /// Drops handlers nobody uses and the records of deallocated users, when either table has
    /// grown past twice its size at the last sweep, counting the records of deallocated users
    /// replaced since (amortized constant time per new handler or record). Checked whenever a
    /// user is attached anew: users released without `unmanage` (as views are) would otherwise
    /// pile up in one handler's list and in the side table while the handler table stays small.
    /// The low floor (64) bounds how many objects of silently deallocated users a handler can keep
    /// alive beyond the memory cache's limits.
    func _sweepIfNeeded(in state: inout ManagerState) {
        // Records in handlers' lists are at most those in the side table plus those replaced in
        // it: bounding the sum bounds the lists, however the allocator reuses addresses.
        guard state.handlers.count >= state.sweepThreshold
                || state.attachments.count + state.replacedRecords >= state.sweepThreshold else { return }
        state.replacedRecords = 0
        state.handlers = state.handlers.filter { _, handler in
            handler.phase.isBusy || handler.heldByPrefetch || handler.hasLiveUsers
        }
        for key in Array(state.handlers.keys) { state.handlers[key]?.compactUsers() }
        state.attachments = state.attachments.filter { $0.value.isAlive }
        state.sweepThreshold = max(64, 2 * max(state.handlers.count, state.attachments.count))
    }

    // MARK: - Delivering

    /// Makes the callbacks and disk work collected under the lock. Deliveries to `synchronousUser`
    /// happen on this thread (used inside `manage`, so a hit arrives before it returns) when its
    /// delivery allows: always for `.immediate`, on the main queue for `.mainQueue`. Every other
    /// delivery is made as its user's delivery says, after a check that it is still current.
    func perform(_ work: PendingWork, synchronousUser: ObjectIdentifier? = nil) {
        for dataKey in work.fileCachePurges { fileCache?.removeEntry(forKey: dataKey) }
        if let handler = configuration.eventHandler {
            for event in work.events { handler(event) }
        }
        for delivery in work.deliveries {
            let link = delivery.user
            if let synchronousUser, link.userID == synchronousUser,
               link.delivery == .immediate || MainQueue.isCurrent {
                // Decided a moment ago on this very thread, inside `manage`: no re-check needed.
                link.deliver(delivery.event, request: delivery.request)
            } else {
                switch link.delivery {
                case .immediate:
                    deliverIfCurrent(delivery)
                case .mainQueue:
                    DispatchQueue.main.async { [weak self] in self?.deliverIfCurrent(delivery) }
                }
            }
        }
    }

    /// Calls the user unless it has been released, re-managed or unmanaged since the delivery
    /// was decided.
    private func deliverIfCurrent(_ delivery: PendingDelivery) {
        if delivery.attachment != 0 {
            let current = state.withLock { state in
                guard state.attachments[delivery.user.userID]?.attachment == delivery.attachment
                else { return false }
                // Progress decided before a cancellation, failure or success that got here first is stale.
                guard let fetch = delivery.fetch else { return true }
                guard case .loading(fetch)? = state.handlers[delivery.key]?.phase else { return false }
                return true
            }
            guard current else { return }
        }
        delivery.user.deliver(delivery.event, request: delivery.request)
    }
}

/// What `manage` read from a user, on the calling thread (with its decoder, passed beside it):
/// the manager reads nothing else of it.
struct ManageCall: Sendable {
    let request: ObjectRequest
    let userID: ObjectIdentifier
    let delivery: CallbackDelivery
    /// Whether the user is an `async` caller (see `inlineFileRead`).
    let isAwaiting: Bool
}

/// A file-cache hit read inside `manage`, on the caller's thread; entries over `maximumBytes`
/// (when set) are left to the background load.
struct InlineFileRead {
    let maximumBytes: Int?
}

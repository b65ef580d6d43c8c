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
    ///   receives its object afterwards: once `manage` (or `unmanage`) returns, no callback for the
    ///   request it replaced reaches the user; one already running on another thread is waited
    ///   for. So a callback must not wait for a thread that may be managing the same user (an
    ///   `.immediate` callback calling `DispatchQueue.main.sync` while the main thread re-manages
    ///   it): use `.mainQueue` delivery for that.
    /// - A user whose `objectRequest` is `nil` is detached.
    /// - Each call is one request, answered by exactly one final callback: ready, or failed. A
    ///   failure or a cancellation detaches the user: it hears nothing of a later load of the key
    ///   (another user's retry) until it is managed again. A ready user stays attached, sharing
    ///   the object, and receives the newer object if a revalidation brings one.
    /// - The user's properties (`objectRequest`, `objectDecoder`, `callbackDelivery`, `wantsPreviews`) are read
    ///   here, on the calling thread, and never again until the next `manage`.
    ///
    /// ```swift
    /// // Assumes `manager` (an ObjectManager) and `avatarURL` (a URL).
    /// let user = ObjectUser(request: ObjectRequest(url: avatarURL), decoder: DataDecoder()) { data, origin in
    ///     print("\(data.count) bytes from \(origin)")
    /// }
    /// manager.manage(user)  // keep `user`: the manager holds it weakly
    /// ```
    ///
    /// - Parameter user: The user, held weakly: keep a strong reference for as long as it wants
    ///   the object. A main-actor type conforms to ``MainActorObjectUser`` instead, and goes to
    ///   ``manage(_:)-4he8m`` (the overload for it).
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
        let wantsPreviews = user.wantsPreviews
        let call = ManageCall(
            request: request, userID: ObjectIdentifier(user), delivery: delivery, wantsPreviews: wantsPreviews,
            isAwaiting: isAwaiting)
        manage(
            call, decoder: user.objectDecoder, link: { ThreadSafeUserLink(user, delivery: delivery, wantsPreviews: wantsPreviews) },
            deliverHit: { event, request in
                user.receive(event, request: request)
            })
    }

    /// `manage` once the user's properties are read: `makeLink` makes the user's link when it
    /// needs a new one; `deliverHit` calls the user with a memory hit on this thread, when its
    /// delivery allows that here.
    ///
    /// The algorithm, one step per line (each step is a function below):
    func manage<Decoder: ObjectDecoding>(
        _ call: ManageCall, decoder: Decoder, link makeLink: @Sendable () -> any UserLink,
        deliverHit: (UserEvent, ObjectRequest) -> Void
    ) {
        let identifier = decoder.identifier
        let key = call.request.objectKey(variant: identifier)
        let policy = configuration.policy.applying(call.request.policy)
        // 1. A fresh memory hit is attached and delivered at once (on this thread when allowed).
        let cached = policy.cacheInMemory ? memoryCache.value(forKey: key) : nil
        if let cached, cached.isFresh(policy: policy.freshness) {
            deliverMemoryHit(
                cached, call, key: key, policy: policy, decoder: decoder, identifier: identifier,
                link: makeLink, deliverHit: deliverHit)
            return
        }
        // 2. A request nothing can load fails at once.
        guard requestIsLoadable(call, key: key, link: makeLink) else { return }
        // 3. Whether the file cache certainly lacks the bytes, asked before the lock: then a start
        //    needs no lookup after it, and no second acquisition of the lock to start the load.
        let knownFileMiss = fileCacheReader.isKnownMiss(call, key: key, policy: policy, storesVariant: decoder.storesVariant)
        // 4. Under the lock: attach the user, then share, join, revalidate, answer from the
        //    failure memory, or start (from the file cache or the network).
        //    Past the lock's wait budget, the section is left to the lock's holder (and the file
        //    cache, if it is next, is read in the background).
        let anyDecoder = AnyObjectDecoder(decoder, identifier: identifier)
        let now = configuration.failureClock()
        let decided = withoutActuallyEscaping(makeLink) { makeLink in
            state.withLock(
                waitingAtMost: configuration.manageLockWaitBudget,
                { state in
                    core.decide(
                        .manage(
                            call, key: key, policy: policy, decoder: anyDecoder, stale: cached, link: makeLink,
                            knownFileMiss: knownFileMiss, deferred: false), at: now, in: &state)
                },
                otherwise: {
                    leaveAttachAndDecide(
                        call, key: key, policy: policy, decoder: anyDecoder, stale: cached, link: makeLink(),
                        knownFileMiss: knownFileMiss)
                })
        }
        guard let decided else { return }
        // 5. Deliver what was decided, with the rest handed off this thread; then read the file
        //    cache when that is the next step.
        performer.perform(decided.result.work, synchronousUser: call.userID, handingOff: decided.starts)
        if let fileLookup = decided.result.fileLookup { fileCacheReader.read(fileLookup, key: key, synchronousUser: call.userID) }
    }

    /// Step 4 when the lock stays busy past the budget: retires the user's current attachment
    /// (nothing decided for its earlier request reaches it from now on) and returns the section
    /// to leave, which decides as step 4 does, then delivers in the background and reads the
    /// file cache there, if that is next.
    private func leaveAttachAndDecide(
        _ call: ManageCall, key: ObjectKey, policy: LoadPolicy, decoder: AnyObjectDecoder, stale: CachedObject?,
        link: any UserLink, knownFileMiss: Bool
    ) -> ManagerLock.LeftSection {
        currencies.retireCurrentAttachment(of: call.userID)
        let now = configuration.failureClock()
        return { state in
            let decision = self.core.decide(
                .manage(
                    call, key: key, policy: policy, decoder: decoder, stale: stale, link: { link }, knownFileMiss: knownFileMiss,
                    deferred: true), at: now, in: &state)
            return {
                self.performer.perform(decision.work)
                if let fileLookup = decision.fileLookup {
                    self.fileCacheReader.read(fileLookup, key: key, synchronousUser: nil, maximumBytes: nil)
                }
            }
        }
    }

    /// Step 1: attaches the user to the handler of a fresh memory hit and delivers the object:
    /// on this thread when the user's delivery allows it here (`.immediate`, or `.mainQueue` on
    /// the main queue), else through the main queue.
    private func deliverMemoryHit<Decoder: ObjectDecoding>(
        _ cached: CachedObject, _ call: ManageCall, key: ObjectKey, policy: LoadPolicy, decoder: Decoder,
        identifier: String, link makeLink: @Sendable () -> any UserLink, deliverHit: (UserEvent, ObjectRequest) -> Void
    ) {
        let onThisThread = call.delivery == .immediate || MainQueue.isCurrent
        let now = configuration.failureClock()
        var work = PendingWork()
        let attached = state.withLock(
            waitingAtMost: configuration.manageLockWaitBudget,
            { state in
                core._memoryHit(
                    call, link: makeLink, key: key, policy: policy, cached: cached,
                    decoder: AnyObjectDecoder(decoder, identifier: identifier), deferred: false, at: now, work: &work, in: &state)
            },
            otherwise: {
                leaveAttachForHit(
                    call, link: makeLink(), key: key, policy: policy, cached: cached,
                    decoder: AnyObjectDecoder(decoder, identifier: identifier), deliversHit: !onThisThread)
            })
        guard let attached else {
            // Left to the lock's holder, which attaches the user; the hit is answered now all the same.
            if onThisThread { deliverHit(.ready(cached.object, .memory), call.request) }
            return
        }
        if onThisThread {
            // Most hits have nothing else to do: no call for them (a hot path, `manage-hit`).
            if !work.isEmpty || !attached.starts.isEmpty { performer.perform(work, handingOff: attached.starts) }
            deliverHit(.ready(cached.object, .memory), call.request)
        } else {
            work.deliveries.append(PendingDelivery(to: attached.result, key: key, event: .ready(cached.object, .memory)))
            performer.perform(work, handingOff: attached.starts)
        }
    }

    /// Step 1 when the lock stays busy past the budget: retires the user's current attachment
    /// and returns the section to leave, which attaches the user as step 1 does, and delivers
    /// the hit itself when `deliversHit` (a `.mainQueue` user managed off the main queue).
    private func leaveAttachForHit(
        _ call: ManageCall, link: any UserLink, key: ObjectKey, policy: LoadPolicy, cached: CachedObject,
        decoder: AnyObjectDecoder, deliversHit: Bool
    ) -> ManagerLock.LeftSection {
        currencies.retireCurrentAttachment(of: call.userID)
        let now = configuration.failureClock()
        return { state in
            var work = PendingWork()
            let record = self.core._memoryHit(
                call, link: { link }, key: key, policy: policy, cached: cached, decoder: decoder, deferred: true, at: now,
                work: &work, in: &state)
            if deliversHit { work.deliveries.append(PendingDelivery(to: record, key: key, event: .ready(cached.object, .memory))) }
            return { self.performer.perform(work) }
        }
    }

    /// Step 2: `false` (and the user told `.invalidRequest`) for an empty key or a URL the data
    /// loader cannot load, unless the key's handler holds or is getting its object (a user with
    /// the same oid loads it, or the app is storing it: `ObjectRequest(oid:)`).
    private func requestIsLoadable(_ call: ManageCall, key: ObjectKey, link makeLink: @Sendable () -> any UserLink) -> Bool {
        guard key.dataKey.isEmpty || !configuration.dataLoader.canLoad(call.request.url) else { return true }
        let reason = key.dataKey.isEmpty ? "empty key" : "unsupported URL '\(call.request.url.absoluteString)'"
        let decision = withoutActuallyEscaping(makeLink) { makeLink in
            decide(.unloadable(call, key: key, reason: reason, link: makeLink))
        }
        guard decision.answeredAsUnloadable else { return true }
        performer.perform(decision.work, synchronousUser: call.userID)
        return false
    }

    /// Detaches `user` from whatever it was managed for: HJCache's `clear` before cell reuse.
    /// It receives no more callbacks for that request once this returns (a callback already
    /// running on another thread is waited for). If it was the last user of a load and the
    /// policy does not finish loads without users, the load is cancelled.
    ///
    /// - Parameter user: The user; nothing happens when it is not managed.
    public func unmanage<User: ManagedObjectUser>(_ user: User) {
        let work = decide(.unmanage(ObjectIdentifier(user))).work
        performer.perform(work)
    }

    // MARK: - Attaching users (under the lock)
}

/// What `manage` read from a user, on the calling thread (with its decoder, passed beside it):
/// the manager reads nothing else of it.
struct ManageCall: Sendable {
    let request: ObjectRequest
    let userID: ObjectIdentifier
    let delivery: CallbackDelivery
    /// Whether the user wants previews.
    let wantsPreviews: Bool
    /// Whether the user is an `async` caller (see `inlineFileRead`).
    let isAwaiting: Bool
}

/// A file-cache hit read inside `manage`, on the caller's thread; entries over `maximumBytes`
/// (when set) are left to the background load.
struct InlineFileRead {
    let maximumBytes: Int?
}

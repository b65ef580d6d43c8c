import Foundation

extension LoadCore {
    /// The app stores `object` under `plan.key`: the key is taken from whatever had it
    /// (`_supersede`), and the object goes to the key's users and the memory cache at once.
    /// Returns what the store's write waits for.
    func _storeObject(_ object: any Sendable, plan: StorePlan, cost: Int, in state: inout ManagerState) -> (PendingWork, StoreTicket) {
        var work = PendingWork()
        let ticket = _supersede(for: plan, work: &work, in: &state)
        _ = state.handlers[plan.key]?.startStoring()
        _deliverStored(object, plan: plan, cost: cost, work: &work, in: &state)
        return (work, ticket)
    }

    /// The app stores an object it is still making: the key is taken (`_supersede`), and its
    /// handler (made if need be) waits for the object; users managed meanwhile join it. Returns
    /// the generation the object is for.
    func _startStoring(
        _ plan: StorePlan, request: ObjectRequest, decoder: @autoclosure () -> AnyObjectDecoder, in state: inout ManagerState
    ) -> (PendingWork, StoreTicket, UInt64) {
        var work = PendingWork()
        let ticket = _supersede(for: plan, work: &work, in: &state)
        let handler: ObjectHandler
        if let existing = state.handlers[plan.key] {
            handler = existing
        } else {
            handler = ObjectHandler(key: plan.key, decoder: decoder(), request: request, policy: plan.policy)
            state.handlers[plan.key] = handler
        }
        return (work, ticket, handler.startStoring())
    }

    /// The object of `_startStoring` is made (or making it failed): stored, if the key still
    /// waits for it (the same generation); a failure fails the users waiting for it, with nothing
    /// remembered and nothing purged. `false` when the key no longer waits for it.
    func _finishStoring(
        _ made: Result<any Sendable, StoreError>, plan: StorePlan, cost: Int, generation: UInt64, in state: inout ManagerState
    ) -> (PendingWork, Bool) {
        var work = PendingWork()
        guard let handler = state.handlers[plan.key], handler.generation == generation, handler.phase.isLoaded else {
            return (work, false)
        }
        switch made {
        case .success(let object):
            _deliverStored(object, plan: plan, cost: cost, work: &work, in: &state)
        case .failure(let error):
            let failure = ManagedCacheError.decodingFailed(reason: error.description)
            handler.fail(failure)
            state.prefetchWatch.settleHandler(plan.key, .failed(failure))
            work.deliveries += handler.deliveries(of: .failed(failure))
            handler.endUsersRequests()
        }
        return (work, true)
    }

    /// A store's write is over (or will not happen): its gate leaves the table of pending
    /// stores, unless a later store of the file key has replaced it already.
    func _endPendingStore(_ gate: WriteGate, fileKey: String, in state: inout ManagerState) {
        if state.pendingStores[fileKey]?.gate === gate { state.pendingStores.removeValue(forKey: fileKey) }
    }

    /// Under the lock: takes the key from whatever had it. Its remembered failures and its old
    /// memory-cache object go; its load leaves its fetch (cancelled when nobody else wants it);
    /// every gate its pending writes go through is closed (the fetch's commit when the store
    /// writes the data key, the decode's variant, an earlier store's bytes).
    private func _supersede(for plan: StorePlan, work: inout PendingWork, in state: inout ManagerState) -> StoreTicket {
        let key = plan.key
        var ticket = StoreTicket()
        if plan.writesFile {
            state.failures.forget(dataKey: key.dataKey)
        } else {
            state.failures.forget(key)
        }
        if let removed = memoryCache.removeValue(forKey: key) { work.released.append(removed.object) }
        state.loadingBuffer.remove(key)
        if let handler = state.handlers[key] {
            if case .loading(let fetch) = handler.phase {
                ticket.superseded += _leaveFetch(key, fetch: fetch, closing: plan.writesDataKey, work: &work, in: &state)
            }
            if let fetch = handler.revalidatingFetch {
                ticket.superseded += _leaveFetch(key, fetch: fetch, closing: plan.writesDataKey, work: &work, in: &state)
            }
            if let gate = handler.writeGate {
                gate.close()
                ticket.superseded.append(gate)
            }
        }
        if plan.writesDataKey {
            undecodedData.removeValue(forKey: key.dataKey)
            if let fetch = state.fetches[key.dataKey] {
                fetch.writeGate.close()
                ticket.superseded.append(fetch.writeGate)
            }
        }
        // An earlier store's bytes still to be written under the same file key: replaced by these
        // bytes, or (without them) superseded when they are the same object key's.
        if let previous = state.pendingStores[plan.fileKey], plan.writesFile || previous.key == key {
            state.pendingStores.removeValue(forKey: plan.fileKey)
            previous.gate.close()
            ticket.superseded.append(previous.gate)
        }
        if plan.writesFile {
            let own = WriteGate()
            state.pendingStores[plan.fileKey] = PendingStore(key: key, gate: own)
            ticket.own = own
        }
        state.statistics.storedObjects += 1
        return ticket
    }

    /// Under the lock: `key`'s handler stops waiting for fetch `identifier`. A fetch nobody else
    /// wants is cancelled (freeing its prefetch slot); its gate is closed then, or when `closing`.
    private func _leaveFetch(
        _ key: ObjectKey, fetch identifier: UInt64, closing: Bool, work: inout PendingWork, in state: inout ManagerState
    ) -> [WriteGate] {
        guard let fetch = state.fetches[key.dataKey], fetch.identifier == identifier else { return [] }
        fetch.unsubscribe(key)
        if fetch.isWanted {
            _refreshPriority(dataKey: key.dataKey, in: &state)
            guard closing else { return [] }
        } else {
            work.cancel(fetch.task)  // after the lock, as every cancellation
            state.fetches.removeValue(forKey: key.dataKey)
            state.prefetchWatch.settleFetch(fetch.identifier, .cancelled)
            if fetch.inPrefetchLane {
                state.runningPrefetches -= 1
                work.append(_startQueuedPrefetches(in: &state))
            }
        }
        fetch.writeGate.close()
        return [fetch.writeGate]
    }

    /// Under the lock: the handler (after `startStoring`) becomes ready with `object` and its live
    /// users receive it; the object goes to the memory cache.
    private func _deliverStored(
        _ object: any Sendable, plan: StorePlan, cost: Int, work: inout PendingWork, in state: inout ManagerState
    ) {
        let stored = CachedObject(object: object, freshness: nil, cost: cost)
        if let handler = state.handlers[plan.key], handler.phase.isLoaded {
            handler.finishDecoding(stored, origin: .stored)
            state.prefetchWatch.settleHandler(plan.key, .loaded(.stored))
            work.deliveries += handler.deliveries(of: .ready(object, .stored))
        }
        if plan.policy.cacheInMemory {
            work.released += memoryCache.setValue(stored, forKey: plan.key, cost: cost).map(\.object)
        }
    }
}

/// What a store does, decided before the lock.
struct StorePlan: Sendable {
    let key: ObjectKey
    let policy: LoadPolicy
    /// The file-cache key the object's bytes go under: the data key, or the variant's key.
    let fileKey: String
    /// The caller asked for the file cache.
    let asksForFile: Bool
    /// The bytes go to the file cache (asked, a file cache exists, the policy allows it).
    let writesFile: Bool
    /// The bytes are pinned in the file cache.
    var pinned = false

    /// The bytes go under the data key itself (a decoder that stores no variant): the
    /// download of that key, whoever it is for, must not commit over them.
    var writesDataKey: Bool { writesFile && fileKey == key.dataKey }
}

/// A store whose bytes are still to be written (`ManagerState.pendingStores`).
struct PendingStore {
    /// The object key it stores.
    let key: ObjectKey
    /// The gate its write goes through.
    let gate: WriteGate
}

/// What `_supersede` took over: the writes the store's own write waits for, and its own gate.
struct StoreTicket: Sendable {
    /// Gates closed for the store; a write begun through one before is waited for.
    var superseded: [WriteGate] = []
    /// The store's own gate, when it writes the file cache.
    var own: WriteGate?
}

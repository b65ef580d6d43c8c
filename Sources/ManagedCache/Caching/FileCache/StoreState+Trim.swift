/// Enforcing the limits: strict LRU for the single layout, a tenth of the buckets per pass for
/// the bucketed one. Every method here runs with the journal lock held and the index caught up.
extension StoreState {
    /// A rotation: this many passes visit every bucket once.
    static let passesPerRotation = 10
    /// An over-limit cache is brought down to this fraction of the limit, so that the next
    /// commits do not each need a pass.
    static let lowWaterFraction = 0.9
    /// How many entries a pass that a commit starts deletes beyond what brings the cache within
    /// its limits: the headroom that spares the next commits a pass, in steps small enough that
    /// no commit waits long for one (about a millisecond at 15 µs a deleted file).
    static let headroomPerCommit = 64
    /// How many entries a step of working off an opening's excess evicts at most (see
    /// `_stepTowardConfiguredLimits`): about a millisecond under the lock.
    static let excessStepSize = 256
    /// How much of each slice an over-limit enforcement keeps.
    struct SliceRatio {
        var count: Double
        var bytes: Double
    }

    /// Enforces the limits after a commit (the committed entry, `protecting`, is never evicted by
    /// it: a cache may exceed a limit by at most the object just written) or at open. Both
    /// layouts first delete every expired entry, taken from the expiry heap in O(expired · log n).
    /// Pinned entries are never evicted: they are in no bucket's list and not in the heap.
    mutating func _enforceLimits(now: Double, protecting: Int32?) {
        switch layout.kind {
        case .single:
            _enforceByRecency(now: now, protecting: protecting)
        case .bucketed:
            _ = _enforceBySlices(now: now, protecting: protecting)
        }
    }

    /// Evicts the entries the expiry heap says are expired, except `protecting`.
    mutating func _evictExpired(now: Double, protecting: Int32?, into encoder: inout JournalEncoder, paths: inout [String]) {
        var protectedExpired = false
        while let slot = index.popExpired(now: now) {
            if slot == protecting {
                protectedExpired = true
            } else {
                _evict(slot, into: &encoder, paths: &paths)
            }
        }
        if protectedExpired, let protecting { index.requeueExpiry(protecting) }
    }

    /// `FileCache`: deletes every expired entry, then least recently used entries until the
    /// cache is within its limits.
    mutating func _enforceByRecency(now: Double, protecting: Int32?) {
        var encoder = JournalEncoder()
        var paths: [String] = []
        _evictExpired(now: now, protecting: protecting, into: &encoder, paths: &paths)
        while limits.exceeded(count: index.unpinnedCount, bytes: index.unpinnedBytes) {
            let oldest = index.oldest(inBucket: 0)
            guard oldest >= 0, oldest != protecting else { break }
            _evict(oldest, into: &encoder, paths: &paths)
        }
        _finishEviction(encoder, paths)
    }

    /// `BigFileCache` after a commit: deletes every expired entry, then, when over a limit,
    /// passes over successive slices until the cache is within its limits (at most one rotation).
    /// After a commit (`protecting` set), each pass deletes at most `headroomPerCommit` entries
    /// beyond what the limits need: a pass's full share of its slice (a tenth of the excess, at
    /// a million entries ten thousand files) is left to the next commits, a few at a time, so no
    /// commit waits for a whole pass. At an opening (nothing protected) the passes are whole.
    mutating func _enforceBySlices(now: Double, protecting: Int32?) -> [BigFileCache.TrimPassReport] {
        var encoder = JournalEncoder()
        var paths: [String] = []
        _evictExpired(now: now, protecting: protecting, into: &encoder, paths: &paths)
        _finishEviction(encoder, paths)
        var reports: [BigFileCache.TrimPassReport] = []
        if let ratio = _overLimitRatio() {
            for _ in 0..<Self.passesPerRotation {
                let budget = protecting == nil ? nil : Self.headroomPerCommit
                reports.append(_trimPass(now: now, ratio: ratio, protecting: protecting, headroom: budget))
                if !limits.exceeded(count: index.unpinnedCount, bytes: index.unpinnedBytes) { break }
            }
        }
        return reports
    }

    // MARK: An opening's excess, in steps

    /// Enforces the limits at an opening. An excess over them (limits lowered since the cache was
    /// last used) is evicted at once when one step takes it all (`excessStepSize` entries, about
    /// a millisecond), so the first commit finds the cache within its limits, as before; a larger
    /// one is not evicted under the lock, where every call would wait for it (a tenth of a
    /// million entries took seconds). `limits` are then raised to the cache's size, so that
    /// commits meanwhile evict what they add, as at any limit, and the opening's thread works
    /// the rest off in steps (`_stepTowardConfiguredLimits`).
    mutating func _enforceLimitsAtOpening(now: Double) {
        _ = _stepTowardConfiguredLimits(now: now)
        _enforceLimits(now: now, protecting: nil)
    }

    /// Whether `limits` are still raised above the configured ones.
    var _isWorkingOffExcess: Bool { limits != configuredLimits }

    /// One step toward the configured limits: evicts at most `excessStepSize` least recently used
    /// entries (for a `BigFileCache`, slice after slice, each in proportion, as trim passes do),
    /// then lowers `limits` to the size left, or back to the configured limits once within them.
    /// Returns whether the cache is still over them. Runs with the journal lock held and the
    /// index caught up.
    mutating func _stepTowardConfiguredLimits(now: Double) -> Bool {
        var overConfigured: Bool { configuredLimits.exceeded(count: index.unpinnedCount, bytes: index.unpinnedBytes) }
        var evicted = 0
        switch layout.kind {
        case .single:
            var encoder = JournalEncoder()
            var paths: [String] = []
            while evicted < Self.excessStepSize, overConfigured {
                let oldest = index.oldest(inBucket: 0)
                guard oldest >= 0 else { break }
                _evict(oldest, into: &encoder, paths: &paths)
                evicted += 1
            }
            _finishEviction(encoder, paths)
        case .bucketed:
            var fruitlessPasses = 0
            while evicted < Self.excessStepSize, overConfigured, fruitlessPasses < Self.passesPerRotation {
                let ratio = _overLimitRatio(of: configuredLimits)
                let removed = _trimPass(now: now, ratio: ratio, protecting: nil, cap: Self.excessStepSize - evicted).entriesRemoved
                evicted += removed
                fruitlessPasses = removed == 0 ? fruitlessPasses + 1 : 0
            }
        }
        guard overConfigured else {
            limits = configuredLimits
            return false
        }
        _raiseLimitsToCurrentSize()
        return true
    }

    /// Sets `limits` to the configured ones, raised to the cache's current size where it
    /// exceeds them.
    private mutating func _raiseLimitsToCurrentSize() {
        limits = configuredLimits
        if let limit = configuredLimits.countLimit { limits.countLimit = max(limit, index.unpinnedCount) }
        if let limit = configuredLimits.byteLimit { limits.byteLimit = max(limit, index.unpinnedBytes) }
    }

    /// For an explicit trim of a `BigFileCache`: one pass, then more while over a limit.
    mutating func _trimBySlices(now: Double) -> [BigFileCache.TrimPassReport] {
        var reports = [_trimPass(now: now, ratio: _overLimitRatio(), protecting: nil)]
        if let ratio = _overLimitRatio() {
            for _ in 1..<Self.passesPerRotation {
                reports.append(_trimPass(now: now, ratio: ratio, protecting: nil))
                if !limits.exceeded(count: index.unpinnedCount, bytes: index.unpinnedBytes) { break }
            }
        }
        return reports
    }

    /// When over a limit, the fraction of every slice to keep so that, once every slice has had
    /// its pass, the cache is at the low-water mark. Nil when within the limits. Pinned entries
    /// count for neither: they are in no slice's lists and in no bucket's totals.
    func _overLimitRatio() -> SliceRatio? {
        _overLimitRatio(of: limits)
    }

    /// `_overLimitRatio()` against `limits`.
    func _overLimitRatio(of limits: CacheLimits) -> SliceRatio? {
        let (count, bytes) = (index.unpinnedCount, index.unpinnedBytes)
        guard limits.exceeded(count: count, bytes: bytes) else { return nil }
        var ratio = SliceRatio(count: 1, bytes: 1)
        if let limit = limits.countLimit, count > limit {
            ratio.count = Double(limit) * Self.lowWaterFraction / Double(count)
        }
        if let limit = limits.byteLimit, bytes > limit {
            ratio.bytes = Double(limit) * Self.lowWaterFraction / Double(bytes)
        }
        return ratio
    }

    /// One pass over the next tenth of the buckets (the slices rotate; the cursor belongs to this
    /// instance). Deletes the slice's expired entries (a scan of the slice, skipped when no entry
    /// can expire) and, given a ratio, its least recently used entries (merging the slice's
    /// bucket LRU lists) until it keeps that fraction of its entries and bytes. In-memory work is
    /// O(slice); disk work is one journal write plus one unlink per deleted file. With
    /// `headroom`, the pass stops once the cache is within its limits and it deleted that many
    /// least recently used entries (see `_enforceBySlices`); with `cap`, once it deleted that
    /// many, whatever the limits (see `_stepTowardConfiguredLimits`).
    mutating func _trimPass(
        now: Double, ratio: SliceRatio?, protecting: Int32?, headroom: Int? = nil, cap: Int? = nil
    ) -> BigFileCache.TrimPassReport {
        let slice = sliceCursor
        sliceCursor = (sliceCursor + 1) % Self.passesPerRotation
        let bucketCount = layout.bucketCount
        let buckets = (slice * bucketCount / Self.passesPerRotation)..<((slice + 1) * bucketCount / Self.passesPerRotation)
        var sliceCount = 0
        var sliceBytes = 0
        for bucket in buckets {
            sliceCount += index.buckets[bucket].count
            sliceBytes += index.buckets[bucket].bytes
        }
        let entriesInSlice = sliceCount
        let bytesInSlice = sliceBytes
        var examined = 0
        var removed = 0
        var encoder = JournalEncoder()
        var paths: [String] = []
        if index.expiringCount > 0 {
            // Expired entries come from the expiry heap, not from walking the slice's LRU lists
            // (which cost one cache miss per entry of the slice, whether expired or not): the
            // slice's are deleted, the others go back on the heap for their own slice's pass.
            var elsewhere: [Int32] = []
            while let slot = index.popExpired(now: now) {
                examined += 1
                guard buckets.contains(index.bucket(of: slot)), slot != protecting else {
                    elsewhere.append(slot)
                    continue
                }
                sliceCount -= 1
                sliceBytes -= index[slot].size
                removed += 1
                _evict(slot, into: &encoder, paths: &paths)
            }
            for slot in elsewhere { index.requeueExpiry(slot) }
        }
        if let ratio {
            let keepCount = Int((Double(entriesInSlice) * ratio.count).rounded(.down))
            let keepBytes = Int((Double(bytesInSlice) * ratio.bytes).rounded(.down))
            // Each bucket's least recently used entry not yet evicted, past `protecting`, and its
            // use: kept beside the cursors, so that choosing the next entry reads no slot (at a
            // million entries every slot read is a cache miss, and there are 25 tails).
            var cursors: [Int32] = []
            var uses: [UInt32] = []
            func advance(_ position: Int, to slot: Int32) {
                var slot = slot
                if slot >= 0 && slot == protecting { slot = index[slot].newer }
                cursors[position] = slot
                uses[position] = slot >= 0 ? index[slot].useSequence : .max
            }
            for bucket in buckets {
                cursors.append(-1)
                uses.append(.max)
                advance(cursors.count - 1, to: index.oldest(inBucket: bucket))
            }
            var evicted = 0
            while sliceCount > keepCount || sliceBytes > keepBytes {
                if let headroom, evicted >= headroom, !limits.exceeded(count: index.unpinnedCount, bytes: index.unpinnedBytes) {
                    break
                }
                if let cap, evicted >= cap { break }
                // The least recently used entry among the slice's bucket tails.
                var best = -1
                for position in cursors.indices where cursors[position] >= 0 && (best < 0 || uses[position] < uses[best]) {
                    best = position
                }
                guard best >= 0 else { break }
                let slot = cursors[best]
                advance(best, to: index[slot].newer)
                evicted += 1
                examined += 1
                sliceCount -= 1
                sliceBytes -= index[slot].size
                removed += 1
                _evict(slot, into: &encoder, paths: &paths)
            }
        }
        _finishEviction(encoder, paths)
        return BigFileCache.TrimPassReport(
            slice: slice, bucketsVisited: buckets.count, entriesInSlice: entriesInSlice,
            entriesExamined: examined, entriesRemoved: removed, bytesRemoved: bytesInSlice - sliceBytes)
    }
}

import CrashPayload
import Foundation
import Testing

@testable import ManagedCache

/// The in-memory index of the file caches against a model keyed by bytes: random inserts,
/// replacements and removals over keys that share long prefixes, canonically equivalent
/// spellings (distinct entries: keys are compared as bytes) and the empty key; the digest table
/// when many digests share a home position; a digest shared by two keys; the packed slot.
@Suite struct CacheIndexTests {
    private static func record(_ key: String, version: UInt64, size: Int = 1, id: FileID? = nil) -> EntryRecord {
        var identity = id ?? FileID.makeNew(forKey: key)
        identity.version = version
        return EntryRecord(
            key: key, id: identity, size: size, checksum: .xxh64(0), created: Double(version), session: 1,
            metadata: FileCacheMetadata())
    }

    @Test func theIndexFindsExactlyTheKeysAModelDictionaryHolds() {
        var generator = SplitMix64(state: 20_261_122)
        var index = CacheIndex(bucketCount: 10, maximumAge: nil)
        // Key bytes → version of its live entry (bytes: `String` equality would merge the
        // canonically equivalent keys below, which the index keeps apart).
        var model: [[UInt8]: UInt64] = [:]
        // Keys that differ only late, canonically equivalent spellings, and the empty key.
        let pool =
            (0..<700).map { "https://example.com/a/very/long/shared/prefix/\($0)" }
            + ["caf\u{E9}", "cafe\u{301}", "", "\u{212B}", "\u{C5}"]
        var operations = 0
        for step in 0..<30_000 {
            let key = pool[Int(generator.next() % UInt64(pool.count))]
            if generator.next() % 3 == 0 {
                if let slot = index.find(key) {
                    #expect(index[slot].version == model[Array(key.utf8)])
                    index.remove(slot)
                    model[Array(key.utf8)] = nil
                } else {
                    #expect(model[Array(key.utf8)] == nil)
                }
            } else {
                let version = UInt64(step + 1)
                let replaced = index.insert(Self.record(key, version: version), recordBytes: 10, addOffset: step * 10).replaced
                #expect(replaced?.version == model[Array(key.utf8)])
                model[Array(key.utf8)] = version
            }
            operations += 1
            if step % 1_000 == 0 {
                // Every key of the pool: found exactly when the model has it, with its version.
                for candidate in pool {
                    #expect(index.find(candidate).map { index[$0].version } == model[Array(candidate.utf8)])
                }
            }
            if step == 15_000 { index.pack() }
        }
        #expect(index.count == model.count)
        for (bytes, version) in model {
            let key = String(decoding: bytes, as: UTF8.self)
            let digest = FileID.makeNew(forKey: key)
            #expect(
                index.find(key).map { index[$0].id } == FileID(digestHigh: digest.digestHigh, digestLow: digest.digestLow, version: version)
            )
        }
        #expect(operations == 30_000)
    }

    /// Digests whose low words are small all have their home at the table's first positions: a
    /// long run of linear probing, which removals in its middle must not break (an entry behind a
    /// removed one is moved back, not lost).
    @Test func removalsInsideALongProbingRunKeepEveryOtherEntryFound() {
        var index = CacheIndex(bucketCount: 1, maximumAge: nil)
        var generator = SplitMix64(state: 7)
        var live: [UInt64: UInt64] = [:]  // digestHigh → version
        func id(_ high: UInt64, _ version: UInt64) -> FileID {
            // Low words below 2^40 put every home at position 0 of a table of fewer than 2^24 positions.
            FileID(digestHigh: high, digestLow: high & 0xFF_FFFF_FFFF, version: version)
        }
        for step in 0..<4_000 {
            let high = generator.next() % 500 + 1
            if generator.next() % 2 == 0, let slot = index.find(digestHigh: high, digestLow: high & 0xFF_FFFF_FFFF) {
                index.remove(slot)
                live[high] = nil
            } else {
                let version = UInt64(step + 1)
                index.insert(Self.record("k", version: version, id: id(high, version)), recordBytes: 10, addOffset: step)
                live[high] = version
            }
            if step % 250 == 0 {
                for high in 1...500 {
                    let found = index.find(digestHigh: UInt64(high), digestLow: UInt64(high) & 0xFF_FFFF_FFFF).map { index[$0].version }
                    #expect(found == live[UInt64(high)], "digest \(high) at step \(step)")
                }
            }
        }
        #expect(index.count == live.count)
    }

    /// Growth is local: slots are numbered for good (the slot array grows a chunk at a time,
    /// never moved), and the digest table grows shard by shard. Past several chunks and every
    /// shard's growths, with removals between, each entry keeps its slot and is found there; a
    /// copy of the index taken halfway is not changed by what the original does next.
    @Test func growingPastManyChunksAndShardGrowthsKeepsEverySlotInPlace() throws {
        var index = CacheIndex(bucketCount: 256, maximumAge: nil)
        var slotOf: [String: Int32] = [:]
        var halfway: (index: CacheIndex, slots: [String: Int32])?
        let count = 5 * IndexSlots.chunkSize
        for number in 0..<count {
            let key = "k\(number)"
            slotOf[key] = index.insert(Self.record(key, version: UInt64(number + 1)), recordBytes: 10, addOffset: number).slot
            if number % 7 == 0, let victim = slotOf.removeValue(forKey: "k\(number / 2)") { index.remove(victim) }
            if number == count / 2 { halfway = (index, slotOf) }
        }
        #expect(index.count == slotOf.count)
        #expect(slotOf.allSatisfy { key, slot in index.find(key) == slot && index[slot].live })
        let (copy, copiedSlots) = try #require(halfway)
        #expect(copy.count == copiedSlots.count)
        #expect(copiedSlots.allSatisfy { key, slot in copy.find(key) == slot && copy[slot].live })
        #expect(copy.find("k\(count - 1)") == nil, "a later insert reached the copy")
    }

    /// Two keys with one digest (made here by giving the second key's record the first key's
    /// identity; SHA-256 gives no such pair) are one position: the later replaces the earlier,
    /// as a second store of one key does. What the store makes of that (it compares the key in
    /// the record) is `FileCacheHostileKeyTests`' concern.
    @Test func aDigestSharedByTwoKeysHoldsOneEntryTheLaterOne() {
        var index = CacheIndex(bucketCount: 4, maximumAge: nil)
        let shared = FileID.makeNew(forKey: "first")
        let (slot, _) = index.insert(Self.record("first", version: 3, size: 10, id: shared), recordBytes: 10, addOffset: 100)
        let (other, replaced) = index.insert(Self.record("second", version: 5, size: 20, id: shared), recordBytes: 10, addOffset: 200)
        #expect(replaced?.version == 3 && replaced?.id.digestLow == shared.digestLow)
        #expect(index.count == 1 && index.totalBytes == 20)
        #expect(index.find("first") == other && index[other].version == 5 && index[other].addOffset == 200)
        #expect(index.find("second") == nil, "the second key's own digest has no entry")
        _ = slot
    }

    /// What a slot packs: every field round-trips through its narrower storage, and a slot takes
    /// 52 bytes (the memory an entry costs, with the table's 4 bytes a position).
    @Test func aSlotPacksItsFieldsIn52Bytes() {
        #expect(MemoryLayout<IndexSlot>.stride == 52)
        let id = FileID(digestHigh: 0x0123_4567_89AB_CDEF, digestLow: 0xFEDC_BA98_7654_3210, version: 0xDEAD_BEEF_0000_0001)
        var record = EntryRecord(
            key: "k", id: id, size: (1 << 39) + 12_345, checksum: .crc32(7), created: 1, session: 0x1234_5678,
            metadata: FileCacheMetadata(), pinned: true)
        var slot = IndexSlot(record: record, useSequence: 9, recordBytes: 70_000, addOffset: 1_000)
        #expect(slot.id == id && slot.size == (1 << 39) + 12_345 && slot.session == 0x1234_5678)
        #expect(slot.pinned && slot.live && !slot.touchPending && slot.checksumIsCRC32)
        #expect(slot.recordBytes == UInt16.max, "clamped: it only decides when to compact")
        slot.touchPending = true
        slot.pinned = false
        #expect(slot.touchPending && !slot.pinned && slot.live)
        record.size = 1 << 50
        #expect(IndexSlot(record: record, useSequence: 1, recordBytes: 1, addOffset: 0).size == IndexSlot.maximumSize)
    }

    /// A replay decodes `add` records for the index: no key and no metadata strings, the fields
    /// the index keeps intact, and the frame still checked whole (a payload cut short is damage).
    @Test func decodingForTheIndexKeepsWhatTheSlotNeedsAndChecksTheRest() {
        var metadata = FileCacheMetadata(
            expirationDate: Date(timeIntervalSinceReferenceDate: 99), etag: "\"e\"", lastModified: "yesterday",
            contentType: "image/png", freshUntil: Date(timeIntervalSinceReferenceDate: 50), userInfo: ["a": "b", "c": "d"])
        metadata.userInfo["e"] = "f"
        let id = FileID(digestHigh: 1, digestLow: 2, version: 3)
        let record = EntryRecord(
            key: "https://example.com/k", id: id, size: 1_234, checksum: .crc32(9), created: 7, session: 4, metadata: metadata,
            pinned: true)
        var encoder = JournalEncoder()
        encoder.append(.add(record))
        encoder.append(.remove(key: "https://example.com/k", version: 3))
        var decoded: [JournalRecord] = []
        let (consumed, damaged) = encoder.bytes.withUnsafeBytes { raw in
            JournalDecoder.decode(raw, forIndex: true) { record, _ in decoded.append(record) }
        }
        #expect(consumed == encoder.bytes.count && !damaged && decoded.count == 2)
        guard case .add(let light)? = decoded.first else {
            Issue.record("no add record")
            return
        }
        #expect(light.key.isEmpty && light.id == id && light.size == 1_234 && light.checksum == .crc32(9))
        #expect(light.created == 7 && light.session == 4 && light.pinned)
        #expect(light.metadata == FileCacheMetadata(expirationDate: Date(timeIntervalSinceReferenceDate: 99)))
        guard case .remove(let key, 3)? = decoded.last else {
            Issue.record("no remove record")
            return
        }
        #expect(key == "https://example.com/k", "other records keep their key")
        // The whole record, as a lookup reads it.
        let whole = encoder.bytes.withUnsafeBytes { JournalDecoder.frame(at: 0, in: $0) }
        guard case .add(let full)? = whole else {
            Issue.record("no whole add record")
            return
        }
        #expect(full.key == "https://example.com/k" && full.metadata == metadata)
    }

    /// An eviction reads back only the key of the entry's `add` record, of every `add` type, and
    /// only when the frame checks out and names the entry's identity.
    @Test(arguments: [false, true])
    func anEvictionReadsTheKeyOfItsOwnCheckedAddRecordOnly(pinned: Bool) {
        let id = FileID(digestHigh: 1, digestLow: 2, version: 3)
        let record = EntryRecord(
            key: "https://example.com/k", id: id, size: 12, checksum: .xxh64(9), created: 7, session: 4,
            metadata: FileCacheMetadata(etag: "\"e\"", userInfo: ["a": "b"]), pinned: pinned)
        var encoder = JournalEncoder()
        encoder.append(.add(record))
        var frame = encoder.bytes
        frame.withUnsafeBytes { raw in
            #expect(JournalDecoder.addedKey(inFrame: raw, of: id) == "https://example.com/k")
            #expect(JournalDecoder.addedKey(inFrame: raw, of: FileID(digestHigh: 1, digestLow: 2, version: 4)) == nil, "another version")
        }
        var removal = JournalEncoder()
        removal.append(.remove(key: "https://example.com/k", version: 3))
        removal.bytes.withUnsafeBytes { #expect(JournalDecoder.addedKey(inFrame: $0, of: id) == nil, "not an add record") }
        frame[frame.count - 1] ^= 1
        frame.withUnsafeBytes { #expect(JournalDecoder.addedKey(inFrame: $0, of: id) == nil, "a damaged frame") }
    }

    /// An index that can expire keeps the commit time beside the slot: metadata with an
    /// expiration date, and back to the maximum age once it has none.
    @Test func expiryFollowsTheMetadataAndTheMaximumAge() {
        var index = CacheIndex(bucketCount: 1, maximumAge: 100)
        let (slot, _) = index.insert(Self.record("k", version: 10), recordBytes: 10, addOffset: 10)
        #expect(index.expires(slot) == 110)
        var metadata = FileCacheMetadata()
        metadata.expirationDate = Date(timeIntervalSinceReferenceDate: 50)
        index.replaceMetadata(slot, with: metadata, recordBytes: 30, offset: 40)
        #expect(index.expires(slot) == 50 && index.offsets(slot).metadata == 40)
        #expect(index.popExpired(now: 60) == slot)
        index.replaceMetadata(slot, with: FileCacheMetadata(), recordBytes: 10, offset: 80)
        #expect(index.expires(slot) == 110)
        index.setPinned(slot, true)
        #expect(index.expires(slot) == .infinity)
        #expect(index.popExpired(now: 1_000) == nil, "pinned")
    }
}

import CrashPayload
import Foundation
import Testing

@testable import ManagedCache

/// The in-memory index of the file caches against a model keyed by bytes: random inserts,
/// replacements and removals over keys that share long prefixes, canonically equivalent
/// spellings (distinct entries: keys are compared as bytes) and the empty key.
@Suite struct CacheIndexTests {
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
                    #expect(index[slot].record.id.version == model[Array(key.utf8)])
                    index.remove(slot)
                    model[Array(key.utf8)] = nil
                } else {
                    #expect(model[Array(key.utf8)] == nil)
                }
            } else {
                let version = UInt64(step + 1)
                var id = FileID.makeNew(forKey: key)
                id.version = version
                let record = EntryRecord(
                    key: key, id: id, size: 1, checksum: .xxh64(0), created: Double(step), session: 1,
                    metadata: FileCacheMetadata())
                let replaced = index.insert(record, bucket: Int(generator.next() % 10), recordBytes: 10).replaced
                #expect(replaced?.record.id.version == model[Array(key.utf8)])
                model[Array(key.utf8)] = version
            }
            operations += 1
            if step % 1_000 == 0 {
                // Every key of the pool: found exactly when the model has it, with its version.
                for candidate in pool {
                    #expect(index.find(candidate).map { index[$0].record.id.version } == model[Array(candidate.utf8)])
                }
            }
        }
        #expect(index.count == model.count)
        for (bytes, version) in model {
            let key = String(decoding: bytes, as: UTF8.self)
            #expect(index.find(key).map { Array(index[$0].record.key.utf8) } == bytes)
            #expect(index.find(key).map { index[$0].record.id.version } == version)
        }
        #expect(operations == 30_000)
    }
}

import Foundation
import TestSupport
import Testing

@testable import ManagedCache

/// A damaged index journal reopens into a consistent cache: every entry it still describes reads
/// back, and every file it no longer describes is deleted.
@Suite(.offCooperativePool, .exclusiveOfChildProcesses) struct FileCacheIndexDamageTests {
    enum Damage: String, CaseIterable, Sendable {
        case garbageAppended, truncatedMidRecord, byteFlippedInTheMiddle, replacedByGarbage, deleted, emptied
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var kind: CacheKind
        var damage: Damage
        var testDescription: String { "\(kind.testDescription), \(damage)" }
    }

    static let cases = CacheKind.allCases.flatMap { kind in Damage.allCases.map { Case(kind: kind, damage: $0) } }

    @Test(arguments: cases)
    func aDamagedJournalReopensIntoAConsistentCache(_ testCase: Case) throws {
        try withTemporaryDirectory { root in
            var stored: [String: Data] = [:]
            do {
                let cache = try testCase.kind.open(root)
                for index in 0..<40 {
                    let bytes = testBytes(100 + index, seed: UInt64(index))
                    try cache.store(bytes, forKey: "k\(index)", metadata: FileCacheMetadata(etag: "\(index)"))
                    stored["k\(index)"] = bytes
                }
                for index in stride(from: 0, to: 40, by: 7) {
                    cache.removeEntry(forKey: "k\(index)")
                    stored["k\(index)"] = nil
                }
            }
            let journal = root.appendingPathComponent("journal")
            var contents = try Data(contentsOf: journal)
            switch testCase.damage {
            case .garbageAppended: contents.append(testBytes(333, seed: 99))
            case .truncatedMidRecord: contents.removeLast(7)
            case .byteFlippedInTheMiddle: contents[contents.count / 2] ^= 0x40
            case .replacedByGarbage: contents = testBytes(5000, seed: 98)
            case .deleted: contents = Data()
            case .emptied: contents = Data()
            }
            if testCase.damage == .deleted {
                try FileManager.default.removeItem(at: journal)
            } else {
                try contents.write(to: journal)
            }

            let reopened = try testCase.kind.open(root)
            let entries = try expectConsistent(reopened, root: root)
            for entry in entries {
                #expect(try reopened.readData(for: entry) == stored[entry.key])
                #expect(entry.metadata.etag == String(entry.key.dropFirst()))
            }
            switch testCase.damage {
            case .garbageAppended:
                #expect(entries.count == stored.count)
            case .truncatedMidRecord:
                #expect(entries.count >= stored.count - 1)
            case .byteFlippedInTheMiddle:
                #expect(entries.count < stored.count)
            case .replacedByGarbage, .deleted, .emptied:
                #expect(entries.isEmpty)
            }
            // The repaired cache works and stays repaired.
            try reopened.store(Data("new".utf8), forKey: "new", metadata: FileCacheMetadata())
            let count = reopened.statistics.count
            _ = consume reopened
            let again = try testCase.kind.open(root)
            #expect(try expectConsistent(again, root: root).count == count)
        }
    }

    @Test func aTornRecordWrittenByAnotherInstanceIsRepairedWhileRunning() throws {
        try withTemporaryDirectory { root in
            let cache = try FileCache(directory: root)
            try cache.store(Data("a".utf8), forKey: "a")
            // Another process was killed in the middle of an append.
            let handle = try FileHandle(forWritingTo: root.appendingPathComponent("journal"))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data([40, 0, 0, 0, 1, 2, 3, 4, 2, 9]))
            try handle.close()
            try cache.store(Data("b".utf8), forKey: "b")
            #expect(Set(try expectConsistent(cache, root: root).map(\.key)) == ["a", "b"])
            _ = consume cache
            let reopened = try FileCache(directory: root)
            #expect(Set(try expectConsistent(reopened, root: root).map(\.key)) == ["a", "b"])
        }
    }
}

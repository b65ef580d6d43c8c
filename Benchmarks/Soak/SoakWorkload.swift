import Foundation
import ManagedCache
import ManagedCacheLocking

/// What a soak object is: the bytes' length and FNV-1a hash, compared with the key's own.
struct SoakObject: Sendable, Hashable {
    var count: Int
    var hash: UInt64

    init(_ bytes: Data) {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        self.count = bytes.count
        self.hash = hash
    }
}

struct SoakDecoder: ObjectDecoding {
    var identifier: String { "soak" }
    func decode(_ data: LoadedData) throws -> SoakObject { SoakObject(try data.bytes()) }
}

/// A user of one key that remembers its final outcome and checks the object it got.
final class SoakUser: ManagedObjectUser {
    let objectRequest: ObjectRequest?
    let objectDecoder = SoakDecoder()
    let callbackDelivery: CallbackDelivery
    let key: Int
    private let expected: SoakObject?
    private let tally: SoakTally
    private let finals = Lock<Int>(0)
    private let failed = Lock<Bool>(false)
    private let history = Lock<[String]>([])

    init(key: Int, url: URL, expected: SoakObject?, onMainQueue: Bool, tally: SoakTally) {
        self.key = key
        self.objectRequest = ObjectRequest(url: url)
        self.expected = expected
        self.callbackDelivery = onMainQueue ? .mainQueue : .immediate
        self.tally = tally
    }

    /// Whether the request got its final callback.
    var isAnswered: Bool { finals.withLock { $0 } > 0 }

    func managedObjectReady(_ object: SoakObject, origin: DataOrigin, request: ObjectRequest) {
        // A ready user stays attached: a revalidation may bring the object again. After a
        // failure, nothing more may come.
        let history = history.withLock {
            $0.append("ready(\(origin))")
            return $0
        }
        if failed.withLock({ $0 }) { tally.count(.toldAfterFailure, detail: "key \(key): \(history)") }
        finals.withLock { $0 += 1 }
        if object == expected { tally.count(.ready) } else { tally.count(.wrongObject) }
    }

    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        let history = history.withLock {
            $0.append("failed(\(error))")
            return $0
        }
        if finals.withLock({
            $0 += 1
            return $0
        }) > 1 {
            tally.count(.toldAfterFailure, detail: "key \(key): \(history)")
        }
        failed.withLock { $0 = true }
        switch error {
        case .cancelled: tally.count(.cancelled)
        case .httpStatus, .recentlyFailed: tally.count(expected == nil ? .refused : .wrongFailure)
        case .decodingFailed: tally.count(.wrongObject)
        default: tally.count(.failed)
        }
    }
}

/// Outcome counters, shared by every thread.
final class SoakTally: Sendable {
    enum Outcome: Int, CaseIterable {
        case ready, cancelled, refused, failed, wrongObject, wrongFailure, toldAfterFailure
    }

    private let counts = Lock<[Int]>(Array(repeating: 0, count: Outcome.allCases.count))

    private let details = Lock<[String]>([])

    func count(_ outcome: Outcome) { counts.withLock { $0[outcome.rawValue] += 1 } }

    /// Counts an outcome that fails the soak and keeps what happened (the first ten).
    func count(_ outcome: Outcome, detail: String) {
        count(outcome)
        details.withLock { if $0.count < 10 { $0.append(detail) } }
    }

    /// What the failing outcomes were (the first ten).
    var failureDetails: [String] { details.withLock { $0 } }
    subscript(_ outcome: Outcome) -> Int { counts.withLock { $0[outcome.rawValue] } }
}

/// The app-like mix on one thread: rounds of a dozen users around a moving window of keys, a
/// third of them released at once, the rest kept for three rounds (so loads end, are pushed out
/// of the loading buffer or lose their users while the same keys come back), a quarter of them on
/// the main queue, and a prefetch per round.
struct SoakThread {
    let managers: [ObjectManager]
    let server: SoakServer
    let keyCount: Int
    let expected: [SoakObject?]
    let tally: SoakTally
    let seed: UInt64

    /// Runs until `stop` is set; returns the users still held and the `manage` calls made.
    func run(until stop: SoakFlag) -> (held: [SoakUser], operations: Int) {
        var random = SoakRandom(seed: seed)
        var rounds: [[SoakUser]] = []
        var operations = 0
        var window = Int(random.next() % UInt64(keyCount))
        while !stop.isSet {
            window = (window + Int(random.next() % 9) + keyCount - 4) % keyCount  // drifts back and forth
            let manager = managers[Int(random.next() % UInt64(managers.count))]
            var kept: [SoakUser] = []
            for _ in 0..<12 {
                let key = (window + Int(random.next() % 24)) % keyCount
                let user = SoakUser(
                    key: key, url: server.url("/k/\(key)"), expected: expected[key],
                    onMainQueue: random.next() % 4 == 0, tally: tally)
                manager.manage(user)
                operations += 1
                if random.next() % 3 != 0 { kept.append(user) }  // a third released before their load ends
            }
            let prefetched = (0..<3).map { _ in server.url("/k/\(Int(random.next() % UInt64(keyCount)))") }
            manager.prefetch(prefetched.map { ObjectRequest(url: $0) }, decoder: SoakDecoder())
            rounds.append(kept)
            if rounds.count > 3 { rounds.removeFirst() }
            usleep(UInt32(5_000 + random.next() % 15_000))
        }
        return (rounds.flatMap { $0 }, operations)
    }
}

/// SplitMix64, so a run can be replayed with `--seed`.
struct SoakRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

/// A flag and a counter threads and closures share.
final class SoakFlag: Sendable {
    private let value = Lock<Bool>(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}

final class SoakCounter: Sendable {
    private let value = Lock<Int>(0)
    var count: Int { value.withLock { $0 } }
    func increment() { value.withLock { $0 += 1 } }
    func raise(to candidate: Int) { value.withLock { $0 = max($0, candidate) } }
}

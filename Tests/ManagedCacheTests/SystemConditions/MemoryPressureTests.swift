import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// What each memory signal frees, how signals reach their subscribers, and what a manager does
/// with one. The tests post to centers of their own: a pressure posted to the process's center
/// would trim every manager of the test run.
@Suite struct MemoryPressureTests {
    @Test(arguments: [
        (MemoryPressure.warning, 0.5, MemoryTrim.FrameBufferTrim.keepNextFrame),
        (.critical, 0.0, .empty),
        (.background, 0.1, .empty),
    ])
    func eachPressureTrims(pressure: MemoryPressure, kept: Double, frames: MemoryTrim.FrameBufferTrim) {
        let trim = pressure.trim
        #expect(trim.memoryCacheCostFraction == kept)
        #expect(trim.dropsUndecodedData)
        #expect(trim.frameBuffers == frames)
    }

    @Test func theKeptCostIsTheFractionOfTheLimitRoundedDown() {
        #expect(MemoryPressure.warning.trim.memoryCacheCost(keptOf: 1001) == 500)
        #expect(MemoryPressure.background.trim.memoryCacheCost(keptOf: 64 << 20) == 6_710_886)
        #expect(MemoryPressure.critical.trim.memoryCacheCost(keptOf: 1 << 40) == 0)
        let none = MemoryTrim(memoryCacheCostFraction: 1, dropsUndecodedData: false, frameBuffers: .keepAll)
        #expect(none.memoryCacheCost(keptOf: Int.max) == Int.max)
    }

    @Test func aCenterDeliversToEverySubscriptionUntilItEnds() {
        let center = MemoryPressureCenter()
        let received = Lock<[MemoryPressure]>([])
        var first: MemoryPressureSubscription? = center.subscribe { pressure in received.withLock { $0.append(pressure) } }
        let second = center.subscribe { pressure in received.withLock { $0.append(pressure) } }
        #expect(center.subscriberCount == 2)
        center.post(.warning)
        #expect(received.withLock { $0 } == [.warning, .warning])
        first = nil
        #expect(first == nil && center.subscriberCount == 1)
        center.post(.background)
        #expect(received.withLock { $0 } == [.warning, .warning, .background])
        withExtendedLifetime(second) {}
    }

    @Test func aWarningTrimsTheMemoryCacheToHalfItsCostAndCriticalEmptiesIt() async {
        let loader = ScriptedDataLoader()
        for path in ["a", "b", "c", "d"] { loader.script(path, .body(Data(repeating: 1, count: 100))) }
        let manager = makeScriptedManager(loader: loader) { $0.memoryCacheCostLimit = 400 }
        var users: [RecordingUser<BlobDecoder>] = []
        for path in ["a", "b", "c", "d"] {
            let user = RecordingUser(request(path), decoder: BlobDecoder())
            users.append(user)
            manager.manage(user)
            #expect(await waitUntil { user.objects.count == 1 })
        }
        #expect(manager.memoryCache.totalCost == 400)
        manager.handleMemoryPressure(.warning)
        // The two most recently used stay: 200 bytes, half the limit.
        #expect(manager.memoryCache.totalCost == 200)
        #expect(manager.memoryCache.keysFromMostRecent.map(\.dataKey) == [request("d").dataKey, request("c").dataKey])
        manager.handleMemoryPressure(.background)
        #expect(manager.memoryCache.totalCost == 0, "a tenth of 400 holds no 100-byte object")
        // Users keep their objects whatever is trimmed.
        #expect(users.allSatisfy { $0.objects.count == 1 })
        manager.handleMemoryPressure(.critical)
        #expect(manager.memoryCache.count == 0)
    }

    @Test func theProcessSignalsHoldManagersWeakly() {
        // Every manager subscribes to the process's center; the subscription must not keep it alive.
        weak var gone: ObjectManager?
        do {
            let manager = ObjectManager()
            gone = manager
        }
        let isGone = gone == nil
        #expect(isGone)
    }
}

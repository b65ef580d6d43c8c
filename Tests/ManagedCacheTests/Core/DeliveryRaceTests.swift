import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@testable import ManagedCache

/// Holds the first delivery that passed its currency check open, on its thread, until the test
/// opens it or `bound` seconds pass: the window between "this callback is still current" and
/// the callback itself, widened so that a `manage` or `unmanage` lands inside it every time.
/// The bound only ends a window the code under test keeps closed (it waits for the callback);
/// the verdict never depends on it.
final class DeliveryWindow: Sendable {
    private struct State {
        var holding = false
        var started = false
        var used = false
        var opened = false
        var passed = false
    }

    private let state = Lock(State())
    let bound: Double

    init(bound: Double = 2) { self.bound = bound }

    /// The hook (`ObjectManager.Configuration.afterDeliveryCheck`): holds the first final callback
    /// (ready or failed); progress passes.
    func hold(_ event: UserEvent) {
        if case .progress = event { return }
        if case .preview = event { return }
        let first = state.withLock { state -> Bool in
            guard !state.used else { return false }
            state.used = true
            state.holding = true
            state.started = true
            return true
        }
        guard first else { return }
        let deadline = MonotonicInstant.now.adding(seconds: bound)
        while !state.withLock({ $0.opened }), MonotonicInstant.now < deadline { usleep(1_000) }
        state.withLock {
            $0.holding = false
            $0.passed = true
        }
    }

    var isHolding: Bool { state.withLock { $0.holding } }
    /// Whether a delivery was held, even if its window has ended since: what a test waits for, so
    /// that a poller scheduled late on a busy machine sees the hold it missed (the `manage` or
    /// `unmanage` then lands after the callback, and the verdict is still right).
    var hasHeld: Bool { state.withLock { $0.started } }
    /// Whether the held delivery went on to its user.
    var hasPassed: Bool { state.withLock { $0.passed } }
    func open() { state.withLock { $0.opened = true } }
}

extension RecordingUser {
    /// The final callbacks (ready or failed) from the `index`th event on.
    func finalEvents(from index: Int) -> [Event] {
        events.dropFirst(index).filter {
            if case .progress = $0 { return false }
            return true
        }
    }
}

/// Each delivery belongs to one attachment of one user (one `manage` call) and is dropped if that
/// attachment has ended when it runs. These tests put a `manage` or an `unmanage` between a
/// delivery's currency check and its callback; once either has returned, no callback decided for
/// the request it replaced may reach the user.
@Suite(.offCooperativePool) struct DeliveryRaceTests {
    @Test func aReadyForThePreviousRequestOfTheSameKeyNeverLandsAfterTheNextManageReturns() async {
        let loader = ScriptedDataLoader()
        loader.script("photo", .body(Data("photo".utf8)))
        let window = DeliveryWindow()
        let manager = makeScriptedManager(loader: loader) { $0.afterDeliveryCheck = { window.hold($0) } }
        let first = request("photo", oid: "photo")
        var second = first
        second.headers["Authorization"] = "token-2"
        let user = RecordingUser(first, decoder: BlobDecoder())

        manager.manage(user)
        #expect(await waitUntil { window.hasHeld })
        user.setRequest(second)
        manager.manage(user)  // a memory hit, answered with `second` before it returns
        let seenWhenManageReturned = user.events.count
        window.open()
        #expect(await waitUntil { window.hasPassed })

        let late = user.finalEvents(from: seenWhenManageReturned)
        #expect(late.isEmpty, "callbacks after the second manage returned: \(late)")
        #expect(user.readyRequests.last == second)
    }

    /// Cancelling an awaiting task while its object is being delivered: the runtime runs the
    /// task's cancellation handler holding the task's status lock, and the delivery resumes the
    /// task's continuation, which needs that lock. A handler that waited for the delivery (an
    /// `unmanage` inside it) deadlocked both threads, as a ThreadSanitizer run of the stress suite
    /// once did; the cancellation must return, and the task end, whatever the order.
    @Test(arguments: [false, true])
    func cancellingAnAwaitingCallerWhileItsObjectIsDeliveredNeverDeadlocks(streaming: Bool) async {
        let loader = ScriptedDataLoader()
        loader.script("awaited", .body(Data("awaited".utf8)))
        let window = DeliveryWindow(bound: 5)
        let manager = makeScriptedManager(loader: loader) { $0.afterDeliveryCheck = { window.hold($0) } }
        let ended = Lock(false)
        let stage = Lock("task not started")
        let task = Task {
            stage.withLock { $0 = "task started" }
            if streaming {
                for try await _ in manager.loadEvents(for: request("awaited"), decoder: BlobDecoder()) {}
            } else {
                _ = try await manager.object(for: request("awaited"), decoder: BlobDecoder())
            }
        }
        let held = await waitUntil { window.hasHeld }
        // What a failure says: how far the awaited task got, and what the manager and loader saw.
        let handlers = manager.state.withLock { state in state.handlers.values.map { "\($0.phase)" } }
        let progress = "\(stage.withLock { $0 }); loader requests \(loader.requestCount("awaited"))"
        #expect(held, "no delivery was held: \(progress); handlers \(handlers); statistics \(manager.statistics)")
        let cancelled = Lock(false)
        Thread {
            task.cancel()
            cancelled.withLock { $0 = true }
        }.start()
        #expect(await waitUntil { cancelled.withLock { $0 } }, "the cancellation returned while the delivery was held")
        window.open()
        Task {
            _ = await task.result
            ended.withLock { $0 = true }
        }
        #expect(await waitUntil { ended.withLock { $0 } }, "the task ended")
        #expect(await waitUntil { window.hasPassed })
    }

    @Test func aFailureNeverLandsAfterUnmanageReturns() async {
        let loader = ScriptedDataLoader()
        loader.script("broken", .failure(.httpStatus(code: 500)))
        let window = DeliveryWindow()
        let manager = makeScriptedManager(loader: loader) { $0.afterDeliveryCheck = { window.hold($0) } }
        let user = RecordingUser(request("broken"), decoder: BlobDecoder())

        manager.manage(user)
        #expect(await waitUntil { window.hasHeld })
        manager.unmanage(user)
        let seenWhenUnmanageReturned = user.events.count
        window.open()
        #expect(await waitUntil { window.hasPassed })

        let late = user.finalEvents(from: seenWhenUnmanageReturned)
        #expect(late.isEmpty, "callbacks after unmanage returned: \(late)")
    }

    @Test func aCancellationNeverLandsAfterTheNextManageReturns() async {
        // The load of `first` is pushed out of a one-slot buffer by another user's load, managed on
        // another thread, which delivers the cancellation; the user is managed again meanwhile.
        let loader = ScriptedDataLoader()
        for path in ["first", "other", "again"] { loader.script(path, .held(firstChunk: Data(path.utf8), rest: Data("!".utf8))) }
        let window = DeliveryWindow()
        let manager = makeScriptedManager(loader: loader, bufferSize: 1) { $0.afterDeliveryCheck = { window.hold($0) } }
        let user = RecordingUser(request("first"), decoder: BlobDecoder())
        let other = RecordingUser(request("other"), decoder: BlobDecoder())

        manager.manage(user)
        #expect(await waitUntil { loader.activeCount("first") == 1 })
        let pushing = Thread { manager.manage(other) }
        pushing.start()
        #expect(await waitUntil { window.hasHeld })
        user.setRequest(request("again"))
        manager.manage(user)
        let seenWhenManageReturned = user.events.count
        window.open()
        #expect(await waitUntil { window.hasPassed })
        for path in ["first", "other", "again"] { loader.release(path) }
        #expect(await waitUntil { user.objects.count == 1 })

        let late = user.finalEvents(from: seenWhenManageReturned).filter {
            if case .failed = $0 { return true }
            return false
        }
        #expect(late.isEmpty, "failures after the second manage returned: \(late)")
        withExtendedLifetime(other) {}
    }
}

/// The currency alone, without a manager: progress and previews stop once the attachment's final
/// callback is decided, and a callback in flight is awaited by the call that retires it.
@Suite(.offCooperativePool) struct AttachmentCurrencyTests {
    @Test func progressDecidedBeforeTheFinalCallbackIsDroppedOnceThatCallbackIsDecided() {
        let currency = AttachmentCurrency(1)
        var made: [String] = []
        currency.deliver(ifCurrent: 1, beforeFinal: true) { made.append("progress before") }
        currency.finalCallbackDecided(for: 2)  // another attachment's: changes nothing here
        currency.deliver(ifCurrent: 1, beforeFinal: true) { made.append("progress, other's final") }
        currency.finalCallbackDecided(for: 1)
        currency.deliver(ifCurrent: 1, beforeFinal: true) { made.append("progress after") }
        currency.deliver(ifCurrent: 1) { made.append("final") }
        // A new request of the same user starts without a final callback.
        currency.publish(3)
        currency.deliver(ifCurrent: 1) { made.append("old attachment") }
        currency.deliver(ifCurrent: 3, beforeFinal: true) { made.append("progress, new request") }
        #expect(made == ["progress before", "progress, other's final", "final", "progress, new request"])
    }

    @Test func aCallbackInFlightIsAwaitedByTheCallThatRetiresIt() async {
        let currency = AttachmentCurrency(1)
        let inCallback = Lock(false)
        let mayReturn = Lock(false)
        let returned = Lock(false)
        Thread.detachNewThread {
            currency.deliver(ifCurrent: 1) {
                inCallback.withLock { $0 = true }
                _ = waitUntilBlocking { mayReturn.withLock { $0 } }
                returned.withLock { $0 = true }
            }
        }
        #expect(await waitUntil { inCallback.withLock { $0 } })
        #expect(currency.publish(0) == true)
        let awaited = Lock(false)
        Thread.detachNewThread {
            currency.awaitDeliveryInFlight()
            awaited.withLock { $0 = true }
        }
        mayReturn.withLock { $0 = true }
        #expect(await waitUntil { awaited.withLock { $0 } })
        // The wait ended only after the callback had returned.
        #expect(returned.withLock { $0 })
    }

    @Test func theCallThatRetiresACallbackDoesNotWaitForALaterOneOfTheNewAttachment() async {
        let currency = AttachmentCurrency(1)
        let (firstIn, firstMayReturn) = (Lock(false), Lock(false))
        let (secondIn, secondMayReturn) = (Lock(false), Lock(false))
        Thread.detachNewThread {
            currency.deliver(ifCurrent: 1) {
                firstIn.withLock { $0 = true }
                _ = waitUntilBlocking { firstMayReturn.withLock { $0 } }
            }
        }
        #expect(await waitUntil { firstIn.withLock { $0 } })
        #expect(currency.publish(2) == true)
        firstMayReturn.withLock { $0 = true }
        // The new attachment's first callback begins once the old one has returned, and stays.
        Thread.detachNewThread {
            currency.deliver(ifCurrent: 2) {
                secondIn.withLock { $0 = true }
                _ = waitUntilBlocking { secondMayReturn.withLock { $0 } }
            }
        }
        #expect(await waitUntil { secondIn.withLock { $0 } })
        let awaited = Lock(false)
        Thread.detachNewThread {
            currency.awaitDeliveryInFlight()
            awaited.withLock { $0 = true }
        }
        // It returns while the later callback still runs: that one is not the one it replaced.
        #expect(await waitUntil { awaited.withLock { $0 } })
        #expect(secondMayReturn.withLock { $0 } == false)
        secondMayReturn.withLock { $0 = true }
    }

    @Test func callbacksToOneUserFromManyThreadsRunOneAtATimeAndAllArrive() async {
        let currency = AttachmentCurrency(1)
        let counts = Lock((inside: 0, most: 0, made: 0))
        let (threads, each) = (4, 250)
        let finished = Lock(0)
        for _ in 0..<threads {
            Thread.detachNewThread {
                for _ in 0..<each {
                    currency.deliver(ifCurrent: 1) {
                        counts.withLock { counts in
                            counts.inside += 1
                            counts.most = max(counts.most, counts.inside)
                        }
                        counts.withLock { counts in
                            counts.inside -= 1
                            counts.made += 1
                        }
                    }
                }
                finished.withLock { $0 += 1 }
            }
        }
        #expect(await waitUntil { finished.withLock { $0 } == threads })
        #expect(counts.withLock { $0.made } == threads * each)
        #expect(counts.withLock { $0.most } == 1)
    }

    @Test func aCallbackThatDeliversToItsOwnUserAgainIsNotHeldBehindItself() async {
        let currency = AttachmentCurrency(1)
        let made = Lock<[String]>([])
        Thread.detachNewThread {
            currency.deliver(ifCurrent: 1) {
                made.withLock { $0.append("outer") }
                currency.deliver(ifCurrent: 1) { made.withLock { $0.append("nested") } }
                // Retiring its own attachment from inside its callback does not wait for itself.
                let elsewhere = currency.publish(2)
                currency.awaitDeliveryInFlight()
                made.withLock { $0.append(elsewhere ? "reported as elsewhere" : "after") }
            }
        }
        #expect(await waitUntil { made.withLock { $0.count } == 3 })
        #expect(made.withLock { $0 } == ["outer", "nested", "after"])
    }
}

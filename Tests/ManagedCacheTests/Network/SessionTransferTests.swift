import Foundation
import ManagedCacheLocking
import TestSupport
import Testing

@_spi(Diagnostics) @testable import ManagedCache

/// `SessionTransfer`, the state one `URLSessionTask` shares between `URLSessionDataLoader` and its
/// session delegate: a cancelled transfer ends even when the session never reports its end, and
/// a transfer is ended once whichever of the session or the grace period comes first.
@Suite struct SessionTransferTests {
    /// Takes nothing: these tests are about how the transfer ends.
    struct IgnoringReceiver: DataLoadReceiver {
        func didReceive(response: DataLoadResponse) throws {}
        func didReceive(_ chunk: Data) throws {}
    }

    /// Waits for `transfer`'s end in a task of its own (the loader's wait).
    static func waiter(_ transfer: SessionTransfer) -> Task<Result<DataLoadResponse, any Error>, Never> {
        Task {
            do {
                return .success(try await withCheckedThrowingContinuation { transfer.wait($0) })
            } catch {
                return .failure(error)
            }
        }
    }

    @Test func aCancelledTransferTheSessionNeverReportsEndsByItselfAndIsForgotten() async {
        let transfer = SessionTransfer(receiver: IgnoringReceiver())
        let waiter = Self.waiter(transfer)
        let forgotten = Lock(0)
        let before = LoadAccounting.unreportedCancellations
        transfer.cancelled(grace: 0.05) { endedByGrace in if endedByGrace { forgotten.withLock { $0 += 1 } } }
        let result = await waiter.value
        guard case .failure(let error) = result else {
            Issue.record("the transfer ended with \(result)")
            return
        }
        #expect(error as? ManagedCacheError == .cancelled(.caller))
        #expect(await waitUntil { forgotten.withLock { $0 } == 1 })
        #expect(LoadAccounting.unreportedCancellations > before)
    }

    @Test func aCancellationReportedByTheSessionInTimeIsTheEndAndNothingIsForgotten() async {
        let transfer = SessionTransfer(receiver: IgnoringReceiver())
        let waiter = Self.waiter(transfer)
        let graceEnds = Lock<[Bool]>([])
        transfer.cancelled(grace: 0.05) { endedByGrace in graceEnds.withLock { $0.append(endedByGrace) } }
        transfer.complete(sessionError: URLError(.cancelled))
        let result = await waiter.value
        guard case .failure(let error) = result else {
            Issue.record("the transfer ended with \(result)")
            return
        }
        #expect(error as? ManagedCacheError == .cancelled(.caller))
        // At the end of the grace period (the transfer is still alive, held here) the timer finds
        // it ended: it neither resumes the waiter again (a second resume would trap) nor ends it.
        #expect(await waitUntil { !graceEnds.withLock { $0 }.isEmpty })
        withExtendedLifetime(transfer) {}
        #expect(graceEnds.withLock { $0 } == [false])
    }

    @Test func aTransferCancelledBeforeItsLoaderWaitsEndsAtTheWait() async {
        let transfer = SessionTransfer(receiver: IgnoringReceiver())
        let forgotten = Lock(0)
        transfer.cancelled(grace: 0.01) { endedByGrace in if endedByGrace { forgotten.withLock { $0 += 1 } } }
        #expect(await waitUntil { forgotten.withLock { $0 } == 1 })
        let result = await Self.waiter(transfer).value
        guard case .failure(let error) = result else {
            Issue.record("the transfer ended with \(result)")
            return
        }
        #expect(error as? ManagedCacheError == .cancelled(.caller))
    }
}

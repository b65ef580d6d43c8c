import Foundation

/// Where an `ObjectManager` decides what every event means for its handlers, fetches, loading
/// buffer and users. Each method here runs under the manager's lock (the leading `_`), changes
/// the state in place and returns the work to carry out after the lock (`PendingWork`: deliveries
/// to users, cancellations, purges, events, objects to release) and the fetches to start
/// (`ManagerState.fetchStarts`). None of them calls a user, a loader or the disk, or waits.
///
/// `ObjectManager`'s methods are the façade: each reads what it needs before the lock (a user's
/// properties, the memory cache, the file cache's index), calls one method below under the
/// lock, then performs the returned work (`ObjectManager.perform`).
///
/// The events and the method that decides each:
///
/// | Event | Decided by | File |
/// | --- | --- | --- |
/// | `manage`, an object in memory | `_attachForHit` | `LoadCore+Attaching` |
/// | `manage`, nothing in memory | `_attachAndDecide` | `LoadCore+Attaching` |
/// | `manage` of a request nothing can load | `_answerUnloadable` | `LoadCore+Attaching` |
/// | `unmanage`, or a user re-managed for another key | `_detach(userID:)` | `LoadCore+Attaching` |
/// | a file-cache miss (or an unusable entry) | `_fileLookupMissed` | `LoadCore+Loading` |
/// | a fetch reported progress | `_fetchProgressed` | `LoadCore+Loading` |
/// | the loading buffer resized | `_resizeLoadingBuffer` | `LoadCore+Loading` |
/// | a fetch finished or failed | `_fetchFinished` | `LoadCore+Finishing` |
/// | a decode finished or failed | `_completeDecode` | `LoadCore+Finishing` |
/// | the app stores an object | `_supersede`, then `_finishStoring` | `LoadCore+Storing` |
/// | a prefetch, and its cancellation | `_enqueuePrefetches`, `_cancelPrefetching` | `LoadCore+Prefetching` |
/// | `cancelAll` | `_cancelAll` | `LoadCore+Prefetching` |
/// | an object removed, the memory cache emptied, memory pressure | `_dropIdleHandler`, `_dropIdleHandlers` | `LoadCore+Removing` |
/// | the manager deallocated | `_shutDown` | `LoadCore+Removing` |
/// | the tables grew past their sweep threshold | `_scheduleSweepIfDue`, `_sweepIfBehind`, `_backgroundSweepStep` | `LoadCore+Sweeping` |
/// | a remembered failure expiring | `FailureMemory`, asked by the next `manage` or prefetch | `LoadCore+Attaching` |
///
/// The handler's phases, and the transitions these methods choose among, are on
/// `ObjectHandler`; a fetch's records are `FetchRecord`s. Only these methods call a handler's
/// transitions and change its users, request or policy. `LoadCoreTableTests` drive them with a
/// state and an event, without a manager.
///
/// A value of `let`s, copied into the manager once: its caches are references, so the core
/// changes the same memory cache the manager reads before its lock.
struct LoadCore: Sendable {
    /// The decoded objects, by key (`ObjectManager.memoryCache`).
    let memoryCache: MemoryCache<ObjectKey, CachedObject>
    /// Bytes nobody decoded yet and no file holds (`ObjectManager.undecodedData`).
    let undecodedData: MemoryCache<String, Data>
    /// The manager's configuration: policies, limits, the failure memory's clock.
    let configuration: ObjectManager.Configuration
    /// Whether the manager has a file cache to look in before loading.
    let hasFileCache: Bool
    /// Makes the tasks of the fetches the core starts.
    let fetchRunner: FetchRunner
}

import Foundation
import ManagedCache
import TestSupport

/// A manager over a scripted `test://` loader, with no retries (tests count requests exactly).
func makeScriptedManager(
    loader: ScriptedDataLoader, bufferSize: Int = 12, memoryCount: Int = 20,
    configure: (inout ObjectManager.Configuration) -> Void = { _ in }
) -> ObjectManager {
    var configuration = ObjectManager.Configuration()
    configuration.dataLoader = loader
    configuration.loadingBufferSize = bufferSize
    configuration.memoryCacheCountLimit = memoryCount
    configuration.policy.retry = .none
    // Held scripts keep loads open until the test releases them: no idle timer may end them
    // first on a starved machine (see makeNetworkManager).
    configuration.policy.timeout = 300
    // No backoff (see makeNetworkManager): the failure tests count requests.
    configuration.policy.failureMemoryFirstInterval = configuration.policy.failureMemoryInterval
    // No time budget on synchronous file-cache reads, and none on `manage`'s wait for a lock:
    // tests that expect a hit, a shared object or a remembered failure inside `manage` must get
    // it however busy the machine is; the budgets' own tests set them.
    configuration.synchronousFileReadTimeBudget = 3_600
    configuration.manageLockWaitBudget = 3_600
    configure(&configuration)
    return ObjectManager(configuration: configuration)
}

func request(_ path: String, oid: String? = nil) -> ObjectRequest {
    ObjectRequest(url: ScriptedDataLoader.url(path), oid: oid)
}

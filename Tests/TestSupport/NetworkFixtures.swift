import Foundation
import LoopbackServer
import ManagedCache

/// A manager that loads through real `URLSession` (the default loader), with no retries so tests
/// can count requests exactly, and the given tweaks.
public func makeNetworkManager(
    fileCache: (any FileCaching)? = nil, configure: (inout ObjectManager.Configuration) -> Void = { _ in }
) -> ObjectManager {
    var configuration = ObjectManager.Configuration()
    configuration.fileCache = fileCache
    configuration.policy.retry = .none
    // Far above the 30 s default: tests hold loads open with gates, and on a starved machine a
    // held load must not end by the idle timer (a timer never decides a verdict). Tests of the
    // timeout set their own.
    configuration.policy.timeout = 300
    // No backoff: a remembered failure stays refused for the whole interval, so a test that
    // counts requests after a failure does not see a retry because the machine was slow.
    configuration.policy.failureMemoryFirstInterval = configuration.policy.failureMemoryInterval
    // No time budget on synchronous file-cache reads, and none on `manage`'s wait for a lock:
    // tests that expect a hit, a shared object or a remembered failure inside `manage` must get
    // it however busy the machine is; the budgets' own tests set them.
    configuration.synchronousFileReadTimeBudget = 3_600
    configuration.manageLockWaitBudget = 3_600
    configure(&configuration)
    return ObjectManager(configuration: configuration)
}

/// Deterministic bytes for a path, so tests can check what arrived without storing it.
public func fixtureBody(_ seed: String, count: Int) -> Data {
    var generator = UInt64(truncatingIfNeeded: seed.hashValue) | 1
    var bytes = [UInt8](repeating: 0, count: count)
    for index in bytes.indices {
        generator = generator &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        bytes[index] = UInt8(truncatingIfNeeded: generator >> 33)
    }
    return Data(bytes)
}

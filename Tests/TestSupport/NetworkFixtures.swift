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
    configure(&configuration)
    return ObjectManager(configuration: configuration)
}

/// Deterministic bytes for a path, so tests can check what arrived without storing it.
public func fixtureBody(_ seed: String, count: Int) -> Data {
    var generator = UInt64(truncatingIfNeeded: seed.hashValue) | 1
    var bytes = [UInt8](repeating: 0, count: count)
    for index in bytes.indices {
        generator = generator &* 6364136223846793005 &+ 1442695040888963407
        bytes[index] = UInt8(truncatingIfNeeded: generator >> 33)
    }
    return Data(bytes)
}

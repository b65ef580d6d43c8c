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
    configure(&configuration)
    return ObjectManager(configuration: configuration)
}

func request(_ path: String, oid: String? = nil) -> ObjectRequest {
    ObjectRequest(url: ScriptedDataLoader.url(path), oid: oid)
}

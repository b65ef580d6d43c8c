import Foundation
import ImageFixtures
import ManagedCache
import ManagedCacheUIKit
import TestSupport

/// A manager over a scripted `test://` loader, with no retries and no failure memory (tests count
/// requests exactly and load failed URLs again).
func makeImageManager(
    loader: ScriptedDataLoader, bufferSize: Int = 12,
    configure: (inout ObjectManager.Configuration) -> Void = { _ in }
) -> ObjectManager {
    var configuration = ObjectManager.Configuration.images()
    configuration.dataLoader = loader
    configuration.loadingBufferSize = bufferSize
    configuration.policy.retry = .none
    configuration.policy.timeout = 300  // held scripts: see makeScriptedManager
    configuration.policy.failureMemoryInterval = 0
    configuration.synchronousFileReadTimeBudget = 3_600  // see makeScriptedManager
    configuration.manageLockWaitBudget = 3_600
    configure(&configuration)
    return ObjectManager(configuration: configuration)
}

/// A small valid PNG whose pixels depend on `seed`, so different seeds give different images.
func pngBytes(width: Int = 8, height: Int = 6, seed: Int = 1) -> Data {
    ImageFixtureEncoder.patternPNG(width: width, height: height, seed: seed)
}

/// The image the view decoder makes from `pngBytes(…)`, for comparing with what a view shows.
func decodedPNG(width: Int = 8, height: Int = 6, seed: Int = 1) throws -> DecodedImage {
    try ImageDecoder().decodeImage(pngBytes(width: width, height: height, seed: seed))
}

/// Scripts `path` to answer with a PNG made from `seed`, and returns the image a view will show.
@discardableResult
func scriptPNG(_ loader: ScriptedDataLoader, _ path: String, seed: Int, held: Bool = false) throws -> DecodedImage {
    let bytes = pngBytes(seed: seed)
    if held {
        // Half now, half on release: the load is visibly in progress until the test releases it.
        loader.script(path, .held(firstChunk: bytes.prefix(bytes.count / 2), rest: bytes.suffix(from: bytes.count / 2)))
    } else {
        loader.script(path, .body(bytes))
    }
    return try ImageDecoder().decodeImage(bytes)
}

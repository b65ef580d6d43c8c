// Deliberately no `import ManagedCache`: this file compiles only if `ManagedCacheUIKit`
// re-exports it.
import Foundation
import ManagedCacheUIKit
import Testing

@Suite struct ReExportTests {
    @Test func theEngineComesWithTheImageLibrary() {
        let request = ObjectRequest(url: URL(string: "https://example.com/a.png")!, priority: .high)
        let manager = ObjectManager(loadingBufferSize: 4, memoryCacheSize: 8)
        #expect(manager.cachedObject(for: request, decoder: ImageDecoder()) == nil)
        #expect(request.priority == .high)
    }
}

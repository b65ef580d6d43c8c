import Foundation
import LoopbackServer
import ManagedCache
import ManagedCacheUIKit
import TestSupport
import Testing

/// The platform-neutral model of the SwiftUI `ManagedImage`, against the loopback
/// server. Main-actor tests: the model is a `MainActorObjectUser`.
@MainActor @Suite struct ManagedImageModelTests {
    let server: LoopbackServer
    let manager: ObjectManager

    init() throws {
        server = try LoopbackServer()
        var configuration = ObjectManager.Configuration.images()
        configuration.policy.retry = .none
        configuration.policy.timeout = 300  // gates hold loads open: no idle timer may end them
        manager = ObjectManager(configuration: configuration)
    }

    /// Serves a `width` × `height` PNG at `path`.
    func servePNG(_ path: String, width: Int, height: Int, seed: Int = 1) {
        server.setRoute(path, .ok(pngBytes(width: width, height: height, seed: seed), contentType: "image/png"))
    }

    @Test func waitsForLayoutThenShowsTheImageAtTheLaidOutPixelSize() async {
        servePNG("/photo", width: 128, height: 128)
        let model = ManagedImageModel(manager: manager)
        model.load(url: server.url("/photo"))
        model.appear()
        // Not laid out: nothing is requested (a full-size decode would waste memory).
        #expect(model.phase == .empty)
        #expect(server.requestCount(for: "/photo") == 0)

        model.layoutChanged(width: 32, height: 32, scale: 2)
        #expect(await waitOnMainActor { model.phase.image != nil })
        // The variant asked for is the laid-out pixel size (Linux has no pixel backend to resize
        // with, so the size is checked on the request, not on the bitmap).
        #expect(model.objectDecoder.format?.size == PixelSize(width: 64, height: 64))
        #expect(model.objectDecoder.identifier == "image/view-64×64-aspectFill")
        #expect(server.requestCount(for: "/photo") == 1)
    }

    @Test func aMemoryHitIsShownBeforeAppearReturns() async {
        servePNG("/avatar", width: 40, height: 40)
        let first = ManagedImageModel(manager: manager)
        first.load(url: server.url("/avatar"))
        first.layoutChanged(width: 20, height: 20, scale: 2)
        first.appear()
        #expect(await waitOnMainActor { first.phase.image != nil })

        let second = ManagedImageModel(manager: manager)
        second.load(url: server.url("/avatar"))
        second.layoutChanged(width: 20, height: 20, scale: 2)
        second.appear()
        guard case .success(let image, let origin) = second.phase else {
            Issue.record("expected the image at once, got \(second.phase)")
            return
        }
        #expect(origin == .memory || origin == .sharedObject)
        // One decoded object, shared.
        #expect(image == first.phase.image)
        #expect(server.requestCount(for: "/avatar") == 1)
    }

    @Test func neverUpscalesBeyondTheSource() async throws {
        servePNG("/small", width: 16, height: 12)
        let model = ManagedImageModel(manager: manager)
        model.load(url: server.url("/small"))
        model.layoutChanged(width: 100, height: 100, scale: 3)
        model.appear()
        #expect(await waitOnMainActor { model.phase.image != nil })
        let format = try #require(model.objectDecoder.format)
        #expect(!format.allowsUpscaling)
        let plan = try #require(format.resizePlan(forSource: PixelSize(width: 16, height: 12)))
        #expect(plan.canvasSize.width <= 16 && plan.canvasSize.height <= 12)
    }

    @Test func smallLayoutChangesKeepTheVariantALargerLayoutLoadsANewOneWithoutBlanking() async {
        servePNG("/hero", width: 400, height: 400)
        let model = ManagedImageModel(manager: manager)
        var phases: [ManagedImagePhase] = []
        model.onChange = { phases.append(model.phase) }
        model.load(url: server.url("/hero"))
        model.layoutChanged(width: 50, height: 50, scale: 2)
        model.appear()
        #expect(await waitOnMainActor { model.phase.image != nil })
        #expect(model.objectDecoder.identifier == "image/view-100×100-aspectFill")

        // Jitter (a tenth smaller): the same variant, no new decode, nothing on screen changes.
        let before = phases.count
        model.layoutChanged(width: 45, height: 45, scale: 2)
        #expect(phases.count == before)
        #expect(model.objectDecoder.identifier == "image/view-100×100-aspectFill")

        // Larger: a new variant; the old image stays until the new one replaces it.
        model.layoutChanged(width: 100, height: 100, scale: 2)
        #expect(model.objectDecoder.identifier == "image/view-200×200-aspectFill")
        #expect(
            await waitOnMainActor {
                self.server.requestCount(for: "/hero") == 2 && self.manager.activeLoadCount == 0
            })
        #expect(model.phase.image != nil)
        #expect(phases.dropFirst(before).allSatisfy { $0.image != nil })
    }

    /// A model showing `path` in a 20 × 20 point view at scale 2, on screen.
    func showing(_ path: String, transition: ImageTransition = .fade) -> ManagedImageModel {
        let model = ManagedImageModel(manager: manager)
        model.transition = transition
        model.load(url: server.url(path))
        model.layoutChanged(width: 20, height: 20, scale: 2)
        model.appear()
        return model
    }

    @Test func aLoadedImageAsksForTheTransitionAMemoryHitAndOtherPhasesForNone() async {
        servePNG("/fade", width: 40, height: 40)
        let loaded = ManagedImageModel(manager: manager)
        #expect(loaded.transition == .fade, "the default is a short cross-fade")
        var changes: [(ManagedImagePhase, ImageTransition, Int)] = []
        loaded.onChange = { [unowned loaded] in changes.append((loaded.phase, loaded.phaseTransition, loaded.phaseChangeCount)) }
        loaded.load(url: server.url("/fade"))
        loaded.layoutChanged(width: 20, height: 20, scale: 2)
        loaded.appear()
        #expect(await waitOnMainActor { loaded.phase.image != nil })
        // `.loading` at once (then progress, on a busy machine), without animation; the
        // downloaded image with the fade.
        #expect(changes.first?.0 == .loading(nil) && changes.first?.1 == ImageTransition.none, "\(changes.map(\.0))")
        #expect(changes.last?.0.image != nil && changes.last?.1 == .fade, "\(changes.map(\.0))")
        #expect(changes.dropLast().allSatisfy { $0.1 == .none && $0.0.image == nil }, "\(changes.map(\.0))")
        #expect(changes.map(\.2) == Array(1...changes.count), "each change counted: the value a view animates on")

        // The same image in memory: delivered inside `appear()`, shown at once.
        let hit = showing("/fade")
        #expect(hit.phase.image != nil)
        #expect(hit.phaseTransition == .none)

        // A transition set to `.none` is never asked for.
        servePNG("/plain", width: 40, height: 40, seed: 2)
        let plain = showing("/plain", transition: .none)
        #expect(await waitOnMainActor { plain.phase.image != nil })
        #expect(plain.phaseTransition == .none)
    }

    @Test func aFailureShowsTheTypedError() async {
        server.setRoute("/missing", .status(404))
        let model = ManagedImageModel(manager: manager)
        model.load(url: server.url("/missing"))
        model.layoutChanged(width: 10, height: 10, scale: 1)
        model.appear()
        #expect(await waitOnMainActor { model.phase == .failure(.httpStatus(code: 404)) })
        #expect(model.phaseTransition == .none, "only a loaded image fades in")
    }

    @Test func disappearingDetachesAndAppearingAgainShowsTheFinishedLoad() async {
        let gate = GatedRoute(server, path: "/slow", response: .ok(pngBytes(width: 20, height: 20), contentType: "image/png"))
        defer { gate.open() }
        let model = ManagedImageModel(manager: manager)
        model.load(url: server.url("/slow"))
        model.layoutChanged(width: 10, height: 10, scale: 2)
        model.appear()
        #expect(model.phase == .loading(nil))
        #expect(await waitUntil { gate.arrivals == 1 })

        model.disappear()
        #expect(model.phase == .empty)
        #expect(model.objectRequest == nil)
        gate.open()
        // The load finishes into the cache (the manager's default policy) but the hidden model is
        // not called: it was detached.
        #expect(await waitUntil { self.manager.activeLoadCount == 0 })
        #expect(model.phase == .empty)
        model.appear()
        #expect(model.phase.image != nil)
        #expect(gate.arrivals == 1)
    }

    @Test func progressIsReportedWhileBytesArrive() async throws {
        // Half the bytes now, the rest when the test says: the load is visibly in progress
        // however busy the machine is (no timing decides what is seen).
        let loader = ScriptedDataLoader()
        try scriptPNG(loader, "big", seed: 9, held: true)
        let model = ManagedImageModel(manager: makeImageManager(loader: loader))
        model.load(url: ScriptedDataLoader.url("big"))
        model.layoutChanged(width: 30, height: 30, scale: 1)
        model.appear()
        #expect(
            await waitOnMainActor {
                if case .loading(let progress?) = model.phase { return progress.receivedBytes > 0 }
                return false
            },
            "phase \(model.phase); \(loader.requestCount("big")) requests, \(loader.activeCount("big")) active; \(model.manager.statistics)"
        )
        loader.release("big")
        #expect(await waitOnMainActor { model.phase.image != nil }, "phase \(model.phase)")
    }
}

import Foundation
import ManagedCache
import TestSupport
import Testing

// Stand-ins for UIKit's main-actor classes (UIKit is not on Linux): what matters is that they are
// `@MainActor` classes with mutable state, as `UIViewController`, `UITableViewCell` and an
// observable view model are. None needs `@unchecked Sendable`, `@preconcurrency` or `nonisolated`.

/// Stands in for `UIViewController` (a `@MainActor` class).
@MainActor class ViewControllerStandIn {
    var title: String?
}

/// Stands in for `UITableViewCell` (a `@MainActor` class, reused).
@MainActor class TableCellStandIn {
    var reuseCount = 0
}

/// A view controller that shows one article: the recipe of the README, with mutable state.
@MainActor final class ArticleViewController: ViewControllerStandIn, MainActorObjectUser {
    var objectRequest: ObjectRequest?
    let objectDecoder = BlobDecoder()
    var shown: [Blob] = []
    var requests: [ObjectRequest] = []
    var errors: [ManagedCacheError] = []
    var progress: [LoadProgress] = []
    /// Every callback checks it runs on the main queue.
    var offMainCallbacks = 0
    /// Told about callbacks from outside the main actor (tests wait on it from any thread).
    let tally: TallyUser.Tally

    init(_ request: ObjectRequest?, tally: TallyUser.Tally = TallyUser.Tally()) {
        objectRequest = request
        self.tally = tally
    }

    func managedObjectReady(_ object: Blob, origin: DataOrigin, request: ObjectRequest) {
        if !MainQueueMarker.isOnMainQueue { offMainCallbacks += 1 }
        shown.append(object)
        requests.append(request)
        title = object.text
        tally.ready.increment()
    }

    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) {
        if !MainQueueMarker.isOnMainQueue { offMainCallbacks += 1 }
        errors.append(error)
        tally.failed.increment()
    }

    func managedObjectProgress(_ progress: LoadProgress, request: ObjectRequest) {
        if !MainQueueMarker.isOnMainQueue { offMainCallbacks += 1 }
        self.progress.append(progress)
        tally.progress.increment()
    }
}

/// A reusable cell showing an avatar.
@MainActor final class AvatarCell: TableCellStandIn, MainActorObjectUser {
    var objectRequest: ObjectRequest?
    let objectDecoder = BlobDecoder()
    var avatar: Blob?
    var lastError: ManagedCacheError?

    func managedObjectReady(_ object: Blob, origin: DataOrigin, request: ObjectRequest) { avatar = object }
    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) { lastError = error }
}

/// A view model (an `ObservableObject` on Apple platforms) publishing a loading state.
@MainActor final class ProfileViewModel: MainActorObjectUser {
    enum LoadState {
        case idle, loading
        case loaded(String)
        case failed(ManagedCacheError)
    }
    private(set) var loadState = LoadState.idle
    var objectRequest: ObjectRequest?
    let objectDecoder = BlobDecoder()

    func load(_ request: ObjectRequest, with manager: ObjectManager) {
        objectRequest = request
        loadState = .loading
        manager.manage(self)
    }

    func managedObjectReady(_ object: Blob, origin: DataOrigin, request: ObjectRequest) { loadState = .loaded(object.text) }
    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) { loadState = .failed(error) }
}

/// Main-actor users get what every user gets, on the main actor.
@Suite struct MainActorUserTests {
    @MainActor @Test func aMemoryHitManagedOnTheMainActorIsShownBeforeManageReturns() async throws {
        let loader = ScriptedDataLoader()
        loader.script("article", .body(Data("article".utf8)))
        let manager = makeScriptedManager(loader: loader)
        _ = try await manager.object(for: request("article"), decoder: BlobDecoder())

        let controller = ArticleViewController(request("article"))
        manager.manage(controller)
        #expect(controller.shown.count == 1)
        #expect(controller.title == "article")
        #expect(controller.requests == [request("article")])
        #expect(controller.offMainCallbacks == 0)
    }

    @MainActor @Test func aLoadReportsProgressAndArrivesOnTheMainActor() async {
        let loader = ScriptedDataLoader()
        loader.script("slow", .held(firstChunk: Data("sl".utf8), rest: Data("ow".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let controller = ArticleViewController(request("slow"))
        manager.manage(controller)
        #expect(controller.shown.isEmpty)
        #expect(await waitOnMainActor { controller.progress.contains { $0.receivedBytes == 2 } })
        loader.release("slow")
        #expect(await waitOnMainActor { controller.title == "slow" })
        #expect(controller.shown.count == 1)
        #expect(controller.errors.isEmpty)
        #expect(controller.offMainCallbacks == 0)
    }

    @MainActor @Test func mainActorAndThreadSafeUsersShareOneObject() async {
        let loader = ScriptedDataLoader()
        loader.script("shared", .held(firstChunk: Data("sha".utf8), rest: Data("red".utf8)))
        let decoder = BlobDecoder()
        let manager = makeScriptedManager(loader: loader)
        let cells = [AvatarCell(), AvatarCell()]
        for cell in cells {
            cell.objectRequest = request("shared")
            manager.manage(cell)
        }
        let model = ProfileViewModel()
        model.load(request("shared"), with: manager)
        let threadSafe = RecordingUser(request("shared"), decoder: decoder)
        manager.manage(threadSafe)
        loader.release("shared")
        #expect(await waitOnMainActor { cells.allSatisfy { $0.avatar != nil } && threadSafe.objects.count == 1 })
        #expect(cells[0].avatar === cells[1].avatar)
        #expect(cells[0].avatar === threadSafe.objects.first)
        guard case .loaded("shared") = model.loadState else {
            Issue.record("the view model is \(model.loadState)")
            return
        }
        #expect(loader.requestCount("shared") == 1)
    }

    @MainActor @Test func aReleasedMainActorUserIsNeitherKeptAliveNorCalled() async {
        let loader = ScriptedDataLoader()
        loader.script("gone", .held(firstChunk: Data("go".utf8), rest: Data("ne".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let tally = TallyUser.Tally()
        var controller: ArticleViewController? = ArticleViewController(request("gone"), tally: tally)
        weak let released = controller
        manager.manage(controller!)
        #expect(await waitOnMainActor { loader.activeCount("gone") == 1 })
        let progressSoFar = tally.progress.count
        controller = nil
        // Gone at once, or a moment later: a worker that was asking whether it is alive held it
        // for that moment, and hands the last release to the main queue (EngineInternals,
        // "Where a UI user's last release happens"), which runs once this test yields.
        #expect(await waitOnMainActor { released == nil })
        let witness = RecordingUser(request("gone"), decoder: BlobDecoder(), delivery: .mainQueue)
        manager.manage(witness)
        loader.release("gone")
        #expect(await waitOnMainActor { witness.objects.count == 1 })
        #expect(tally.ready.count == 0 && tally.failed.count == 0 && tally.progress.count == progressSoFar)
    }

    @MainActor @Test func theLoadingBufferCancelsTheOldestMainActorUserFirst() async {
        let loader = ScriptedDataLoader()
        for path in ["first", "second"] { loader.script(path, .held(firstChunk: Data(path.utf8), rest: Data())) }
        let manager = makeScriptedManager(loader: loader, bufferSize: 1)
        let first = AvatarCell()
        let second = AvatarCell()
        first.objectRequest = request("first")
        second.objectRequest = request("second")
        manager.manage(first)
        manager.manage(second)
        #expect(await waitOnMainActor { first.lastError != nil })
        #expect(first.lastError == .cancelled(.loadingBufferOverflow))
        loader.release("second")
        #expect(await waitOnMainActor { second.avatar?.text == "second" })
        #expect(first.avatar == nil)
    }

    @MainActor @Test func aRememberedFailureIsAnsweredWithoutARequest() async {
        let loader = ScriptedDataLoader()
        loader.script("missing", .failure(.httpStatus(code: 404)))
        let manager = makeScriptedManager(loader: loader)
        let model = ProfileViewModel()
        model.load(request("missing"), with: manager)
        #expect(await waitOnMainActor { if case .failed = model.loadState { true } else { false } })
        let cell = AvatarCell()
        cell.objectRequest = request("missing")
        manager.manage(cell)
        #expect(await waitOnMainActor { cell.lastError != nil })
        guard case .recentlyFailed = cell.lastError else {
            Issue.record("expected .recentlyFailed, got \(String(describing: cell.lastError))")
            return
        }
        #expect(loader.requestCount("missing") == 1)
    }

    @MainActor @Test func aCellReusedForAnotherRequestNeverShowsTheOldObject() async {
        let loader = ScriptedDataLoader()
        loader.script("old", .held(firstChunk: Data("o".utf8), rest: Data("ld".utf8)))
        loader.script("new", .body(Data("new".utf8)))
        let manager = makeScriptedManager(loader: loader)
        let cell = AvatarCell()
        cell.objectRequest = request("old")
        manager.manage(cell)
        cell.objectRequest = request("new")
        manager.manage(cell)
        #expect(await waitOnMainActor { cell.avatar?.text == "new" })
        loader.release("old")
        #expect(await waitUntil { manager.activeLoadCount == 0 })
        await drainMainQueue()
        #expect(cell.avatar?.text == "new")
        // Unmanaged, it hears nothing more; `nil` detaches too.
        manager.unmanage(cell)
        cell.objectRequest = nil
        manager.manage(cell)
        #expect(cell.avatar?.text == "new")
    }
}

import Foundation
import ManagedCache
import TestSupport
import Testing

@testable import ManagedCacheUIKit

/// Later inputs of a SwiftUI `ManagedImage` take effect: which change means what
/// (`ManagedImageInputs.change(to:)`, a table).
@Suite struct ManagedImageInputChangeTests {
    static let managerA = makeImageManager(loader: ScriptedDataLoader())
    static let managerB = makeImageManager(loader: ScriptedDataLoader())
    static let square = ImageCacheFormat(name: "square", size: PixelSize(width: 64, height: 64))
    static let banner = ImageCacheFormat(name: "banner", size: PixelSize(width: 320, height: 80))

    static func inputs(
        url: URL? = ScriptedDataLoader.url("a"), oid: String? = nil, priority: LoadPriority = .normal,
        format: ImageCacheFormat? = nil, scaleMode: ImageScaleMode = .aspectFill, transition: ImageTransition = .fade,
        manager: ObjectManager = managerA
    ) -> ManagedImageInputs {
        ManagedImageInputs(
            url: url, oid: oid, priority: priority, format: format, scaleMode: scaleMode, transition: transition, manager: manager)
    }

    typealias Row = (String, ManagedImageInputs, ManagedImageInputs, ManagedImageInputs.Change)

    /// From the least work to the most; several changes at once ask for the most.
    static let table: [Row] = [
        ("nothing", inputs(), inputs(), .none),
        ("transition", inputs(), inputs(transition: .none), .transition),
        ("priority", inputs(), inputs(priority: .high), .request),
        ("another URL, same oid", inputs(oid: "42"), inputs(url: ScriptedDataLoader.url("b"), oid: "42"), .request),
        ("format", inputs(format: square), inputs(format: banner), .variant),
        ("a format set", inputs(), inputs(format: square), .variant),
        ("scale mode of the laid-out format", inputs(), inputs(scaleMode: .aspectFit), .variant),
        ("scale mode beside an app's format", inputs(format: square), inputs(format: square, scaleMode: .fill), .none),
        ("manager", inputs(), inputs(manager: managerB), .manager),
        ("URL", inputs(), inputs(url: ScriptedDataLoader.url("b")), .image),
        ("oid", inputs(oid: "1"), inputs(oid: "2"), .image),
        ("no URL", inputs(), inputs(url: nil), .image),
        ("URL and format", inputs(), inputs(url: ScriptedDataLoader.url("b"), format: square), .image),
        ("manager and format", inputs(), inputs(format: square, manager: managerB), .manager),
        ("format and transition", inputs(), inputs(format: square, transition: .none), .variant),
    ]

    @Test(arguments: table.indices)
    func whichChangeMeansWhat(row: Int) {
        let (name, old, new, expected) = Self.table[row]
        #expect(old.change(to: new) == expected, "\(name)")
        #expect((old == new) == (expected == .none), "\(name): equal inputs are the ones that change nothing")
    }

}

/// What the view's one model does with later inputs.
@MainActor @Suite struct ManagedImageInputsTests {
    let loader = ScriptedDataLoader()
    let manager: ObjectManager

    init() {
        manager = makeImageManager(loader: loader)
    }

    /// A model for `inputs`, laid out at 32 × 32 points, scale 2, on screen, as the view makes it.
    func model(_ inputs: ManagedImageInputs) -> ManagedImageModel {
        let model = ManagedImageModel(inputs: inputs)
        model.apply(inputs)
        model.layoutChanged(width: 32, height: 32, scale: 2)
        model.appear()
        return model
    }

    @Test func aRowReusedWithANewFormatShowsTheNewVariantKeepingTheImageMeanwhile() async throws {
        try scriptPNG(loader, "a", seed: 1)
        let first = ManagedImageInputChangeTests.inputs(format: ManagedImageInputChangeTests.square, manager: manager)
        let model = model(first)
        #expect(await waitOnMainActor { model.phase.image != nil })
        var phases: [ManagedImagePhase] = []
        model.onChange = { phases.append(model.phase) }

        let second = ManagedImageInputChangeTests.inputs(format: ManagedImageInputChangeTests.banner, manager: manager)
        model.apply(second)
        #expect(model.format?.name == "banner")
        #expect(model.objectDecoder.format?.name == "banner", "managed for the new format")
        #expect(model.replacesShownImage)
        #expect(await waitOnMainActor { !model.replacesShownImage }, "the new variant's answer came")
        #expect(model.phase.image != nil)
        #expect(phases.allSatisfy { $0.image != nil }, "the image never left the screen: \(phases)")
        #expect(model.phaseTransition == .none, "a new variant of the image on screen is set at once")

        model.apply(second)
        #expect(model.objectDecoder.format?.name == "banner", "the same inputs again change nothing")
    }

    @Test func aNewURLClearsAtOnceAndLoadsTheNewImage() async throws {
        let a = try scriptPNG(loader, "a", seed: 1)
        let b = try scriptPNG(loader, "b", seed: 2, held: true)
        let model = model(ManagedImageInputChangeTests.inputs(manager: manager))
        #expect(await waitOnMainActor { model.phase.image == a })

        model.apply(ManagedImageInputChangeTests.inputs(url: ScriptedDataLoader.url("b"), manager: manager))
        #expect(model.phase.image == nil, "a reused row never shows the previous row's picture")
        #expect(model.objectRequest?.url == ScriptedDataLoader.url("b"))
        loader.release("b")
        #expect(await waitOnMainActor { model.phase.image == b })
    }

    @Test func aNewManagerLoadsFromItAndLeavesTheOldOne() async throws {
        let image = try scriptPNG(loader, "a", seed: 1)
        let otherLoader = ScriptedDataLoader()
        try scriptPNG(otherLoader, "a", seed: 1)
        let other = makeImageManager(loader: otherLoader)
        let model = model(ManagedImageInputChangeTests.inputs(manager: manager))
        #expect(await waitOnMainActor { model.phase.image == image })

        model.apply(ManagedImageInputChangeTests.inputs(manager: other))
        #expect(model.manager === other)
        #expect(model.phase.image == image, "the same URL's image stays while the new manager loads it")
        #expect(await waitOnMainActor { !model.replacesShownImage })
        #expect(model.phase.image == image)
        #expect(otherLoader.requestCount("a") == 1)
        #expect(loader.requestCount("a") == 1, "the old manager loads nothing more")
    }

    @Test func aNewPriorityManagesAgainWithIt() async throws {
        try scriptPNG(loader, "a", seed: 1, held: true)
        let model = model(ManagedImageInputChangeTests.inputs(manager: manager))
        #expect(model.objectRequest?.priority == .normal)
        model.apply(ManagedImageInputChangeTests.inputs(priority: .high, manager: manager))
        #expect(model.objectRequest?.priority == .high)
        loader.release("a")
        #expect(await waitOnMainActor { model.phase.image != nil })
        #expect(loader.requestCount("a") == 1, "one load, raised")
    }

    @Test func aNewTransitionOnlyChangesTheTransition() async throws {
        try scriptPNG(loader, "a", seed: 1)
        let model = model(ManagedImageInputChangeTests.inputs(manager: manager))
        #expect(await waitOnMainActor { model.phase.image != nil && self.manager.activeLoadCount == 0 })
        let request = model.objectRequest
        let changes = model.phaseChangeCount
        model.apply(ManagedImageInputChangeTests.inputs(transition: .none, manager: manager))
        #expect(model.transition == .none)
        #expect(model.objectRequest == request)
        #expect(model.phaseChangeCount == changes)
        #expect(loader.requestCount("a") == 1)
    }
}

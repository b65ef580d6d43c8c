import Foundation
import LoopbackServer
import ManagedCache
import TestSupport
import Testing

@testable import ManagedCacheUIKit

/// The size a `ManagedImage` takes for a proposal and the variant it asks for once placed, as
/// tables; and the model loading that variant once, before and after the image is known.
@Suite struct ManagedImageSizingTests {
    typealias Size = ManagedImageSizing.Size
    typealias Proposal = ManagedImageSizing.Proposal

    struct SizeRow: Sendable, CustomStringConvertible {
        let proposal: Proposal
        let image: Size?
        let mode: ImageScaleMode
        let expected: Size
        var description: String { "\(proposal) image \(String(describing: image)) \(mode) -> \(expected)" }
    }

    /// A 300 × 200 pt image (3:2) and the placeholder (no image).
    static let landscape = Size(width: 300, height: 200)
    static let sizeRows: [SizeRow] = [
        // Nothing proposed (a ScrollView on both axes, `.fixedSize()`): the image's ideal size.
        SizeRow(proposal: Proposal(width: nil, height: nil), image: landscape, mode: .aspectFill, expected: landscape),
        // An infinite proposal asks for the largest size: an image's is its ideal one.
        SizeRow(proposal: Proposal(width: .infinity, height: .infinity), image: landscape, mode: .aspectFit, expected: landscape),
        // A row of a LazyVStack: the width, the height from the aspect ratio (no collapse).
        SizeRow(proposal: Proposal(width: 390, height: nil), image: landscape, mode: .aspectFill, expected: Size(width: 390, height: 260)),
        SizeRow(
            proposal: Proposal(width: 390, height: .infinity), image: landscape, mode: .aspectFit, expected: Size(width: 390, height: 260)),
        // A column of an LazyHStack: the height, the width from the aspect ratio.
        SizeRow(proposal: Proposal(width: nil, height: 100), image: landscape, mode: .aspectFill, expected: Size(width: 150, height: 100)),
        // `.frame(width: 44, height: 44)`: fill takes it all (the content is clipped)...
        SizeRow(proposal: Proposal(width: 44, height: 44), image: landscape, mode: .aspectFill, expected: Size(width: 44, height: 44)),
        SizeRow(proposal: Proposal(width: 44, height: 44), image: landscape, mode: .fill, expected: Size(width: 44, height: 44)),
        // ... fit takes the largest 3:2 size inside, whichever side binds.
        SizeRow(proposal: Proposal(width: 44, height: 44), image: landscape, mode: .aspectFit, expected: Size(width: 44, height: 44 / 1.5)),
        SizeRow(proposal: Proposal(width: 300, height: 100), image: landscape, mode: .aspectFit, expected: Size(width: 150, height: 100)),
        // The zero proposal (a stack measuring its minimum): nothing.
        SizeRow(proposal: Proposal(width: 0, height: nil), image: landscape, mode: .aspectFill, expected: Size(width: 0, height: 0)),
        // The placeholder: square on the open sides, never collapsed.
        SizeRow(proposal: Proposal(width: nil, height: nil), image: nil, mode: .aspectFill, expected: Size(width: 64, height: 64)),
        SizeRow(proposal: Proposal(width: 390, height: nil), image: nil, mode: .aspectFill, expected: Size(width: 390, height: 390)),
        SizeRow(proposal: Proposal(width: 390, height: 120), image: nil, mode: .aspectFill, expected: Size(width: 390, height: 120)),
        // An image whose size is unknown (zero) counts as the placeholder.
        SizeRow(
            proposal: Proposal(width: 100, height: nil), image: Size(width: 0, height: 10), mode: .aspectFit,
            expected: Size(width: 100, height: 100)),
    ]

    @Test(arguments: sizeRows) func sizeForAProposal(_ row: SizeRow) {
        let sizing = ManagedImageSizing(scaleMode: row.mode)
        #expect(sizing.size(for: row.proposal, imageSize: row.image) == row.expected)
    }

    struct VariantRow: Sendable, CustomStringConvertible {
        let proposal: Proposal
        let placed: Size
        let scale: Double
        let mode: ImageScaleMode
        let expected: ManagedImageSizing.Variant?
        var description: String { "\(proposal) placed \(placed) @\(scale) \(mode) -> \(String(describing: expected))" }
    }

    static let open = ManagedImageSizing.unboundedPixelSide
    static let variantRows: [VariantRow] = [
        // Both sides proposed: the placed size in pixels, with the view's scale mode.
        VariantRow(
            proposal: Proposal(width: 44, height: 44), placed: Size(width: 44, height: 44), scale: 3, mode: .aspectFill,
            expected: .init(pixelBox: PixelSize(width: 132, height: 132), scaleMode: .aspectFill)),
        VariantRow(
            proposal: Proposal(width: 44, height: 44), placed: Size(width: 44, height: 29.4), scale: 2, mode: .aspectFit,
            expected: .init(pixelBox: PixelSize(width: 88, height: 59), scaleMode: .aspectFit)),
        // A LazyVStack row: the width bounds the variant, the open height does not, whether the
        // view is placed at the placeholder's square or at the image's 3:2: one request.
        VariantRow(
            proposal: Proposal(width: 390, height: nil), placed: Size(width: 390, height: 390), scale: 3, mode: .aspectFill,
            expected: .init(pixelBox: PixelSize(width: 1170, height: open), scaleMode: .aspectFit)),
        VariantRow(
            proposal: Proposal(width: 390, height: nil), placed: Size(width: 390, height: 260), scale: 3, mode: .aspectFill,
            expected: .init(pixelBox: PixelSize(width: 1170, height: open), scaleMode: .aspectFit)),
        // An infinite side is open too.
        VariantRow(
            proposal: Proposal(width: .infinity, height: 100), placed: Size(width: 150, height: 100), scale: 2, mode: .fill,
            expected: .init(pixelBox: PixelSize(width: open, height: 200), scaleMode: .aspectFit)),
        // Nothing proposed: the image as it is (within the largest texture).
        VariantRow(
            proposal: Proposal(width: nil, height: nil), placed: Size(width: 64, height: 64), scale: 2, mode: .aspectFill,
            expected: .init(pixelBox: PixelSize(width: open, height: open), scaleMode: .aspectFit)),
        // No area, or no scale yet: wait.
        VariantRow(
            proposal: Proposal(width: 0, height: nil), placed: Size(width: 0, height: 0), scale: 2, mode: .aspectFill, expected: nil),
        VariantRow(
            proposal: Proposal(width: 44, height: 44), placed: Size(width: 44, height: 44), scale: 0, mode: .aspectFill, expected: nil),
    ]

    @Test(arguments: variantRows) func variantForAPlacement(_ row: VariantRow) {
        let sizing = ManagedImageSizing(scaleMode: row.mode)
        #expect(sizing.variant(for: row.proposal, placedSize: row.placed, scale: row.scale) == row.expected)
    }

    /// A row of a LazyVStack, end to end through the model: placed first as the placeholder's
    /// square, then at the image's aspect ratio once it is shown; the image is requested once, at
    /// the row's width, and not again when the view takes the image's height.
    @MainActor @Test func aStackRowLoadsOnceAtItsWidth() async throws {
        let server = try LoopbackServer()
        server.setRoute("/wide", .ok(pngBytes(width: 60, height: 40, seed: 3), contentType: "image/png"))
        let manager = ObjectManager(configuration: .images())
        let model = ManagedImageModel(manager: manager)
        let sizing = ManagedImageSizing(scaleMode: .aspectFill)
        let row = Proposal(width: 100, height: nil)
        model.load(url: server.url("/wide"))
        model.appear()
        let placeholder = sizing.size(for: row, imageSize: nil)
        model.placed(try #require(sizing.variant(for: row, placedSize: placeholder, scale: 2)))
        #expect(await waitOnMainActor { model.phase.image != nil })
        #expect(model.objectDecoder.identifier == "image/view-200×\(ManagedImageSizing.unboundedPixelSide)-aspectFit")

        let image = try #require(model.phase.image)
        let shown = sizing.size(for: row, imageSize: Size(width: Double(image.pixelWidth) / 2, height: Double(image.pixelHeight) / 2))
        #expect(shown == Size(width: 100, height: 100 / 1.5))
        model.placed(try #require(sizing.variant(for: row, placedSize: shown, scale: 2)))
        #expect(server.requestCount(for: "/wide") == 1)
        #expect(model.objectDecoder.identifier == "image/view-200×\(ManagedImageSizing.unboundedPixelSide)-aspectFit")
    }
}

/// A colourful pattern chosen by an integer seed: two colours blended along a diagonal
/// gradient, a radial glow, stripes or a checkerboard. Pure integer arithmetic, so it is cheap
/// enough to paint hundreds of large images.
struct FixturePattern: Sendable {
    private enum Style: CaseIterable {
        case diagonal, radial, stripes, checkerboard
    }

    private let style: Style
    private let from: (red: Int, green: Int, blue: Int)
    private let to: (red: Int, green: Int, blue: Int)
    /// How many stripes or checkerboard cells span the image.
    private let repetitions: Int

    /// Derives the colours and style from `seed`; equal seeds give equal patterns.
    init(seed: Int) {
        var state = UInt64(bitPattern: Int64(seed))
        let first = Self.mix(&state)
        let second = Self.mix(&state)
        from = (Int(first & 0xFF), Int((first >> 8) & 0xFF), Int((first >> 16) & 0xFF))
        // Push the second colour away from the first so every pattern has visible contrast.
        to = (Int((first & 0xFF) ^ 0x80), Int(((first >> 8) & 0xFF) ^ 0x80), Int((second >> 16) & 0xFF))
        style = Style.allCases[Int(second % UInt64(Style.allCases.count))]
        repetitions = 3 + Int((second >> 8) % 6)
    }

    /// The opaque colour of pixel (`x`, `y`) in a `width` by `height` image.
    func color(x: Int, y: Int, width: Int, height: Int) -> (UInt8, UInt8, UInt8, UInt8) {
        // Coordinates scaled to 0...255 whatever the image size.
        let u = x * 255 / max(1, width - 1)
        let v = y * 255 / max(1, height - 1)
        let amount: Int
        switch style {
        case .diagonal:
            amount = (u + v) / 2
        case .radial:
            let dx = u - 128
            let dy = v - 128
            amount = min(255, (dx * dx + dy * dy) / 64)
        case .stripes:
            amount = (u * repetitions / 128) % 2 == 0 ? v : 255 - v
        case .checkerboard:
            amount = (u * repetitions / 256 + v * repetitions / 256) % 2 == 0 ? u : 255 - u
        }
        return (
            Self.blend(from.red, to.red, amount),
            Self.blend(from.green, to.green, amount),
            Self.blend(from.blue, to.blue, amount),
            255
        )
    }

    private static func blend(_ start: Int, _ end: Int, _ amount: Int) -> UInt8 {
        UInt8(start + (end - start) * amount / 255)
    }

    /// SplitMix64: spreads consecutive seeds into unrelated-looking values.
    private static func mix(_ state: inout UInt64) -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

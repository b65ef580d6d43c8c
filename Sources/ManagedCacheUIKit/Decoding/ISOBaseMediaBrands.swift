/// Recognises AVIF and HEIC/HEIF bytes by their `ftyp` box, the first box of every ISO Base Media
/// file (ISO/IEC 14496-12): a 32-bit size, the type `ftyp`, a major brand, a minor version, then
/// compatible brands up to the box's end.
///
/// The brands say what the file is (ISO/IEC 23008-12 for HEIF, the AV1 Image File Format for
/// AVIF). The major brand decides when it names a format; otherwise the first compatible brand
/// that does:
///
/// | brands | format | sequence |
/// | --- | --- | --- |
/// | `avif` | AVIF | no |
/// | `avis` | AVIF | yes |
/// | `heic`, `heix`, `heim`, `heis` | HEIC | no |
/// | `hevc`, `hevx`, `hevm`, `hevs` | HEIC | yes |
/// | `mif1` (only generic HEIF brands) | HEIC | no |
/// | `msf1` (only generic HEIF brands) | HEIC | yes |
///
/// A file whose brands name none of these (an MP4 video, say) is not an image here.
enum ISOBaseMediaBrands {
    /// What the brands say: the format, and whether the file declares an image sequence.
    struct Recognised: Sendable, Equatable {
        var format: ImageFormat
        var isSequence: Bool
    }

    /// How many leading bytes recognition looks at: a `ftyp` box with up to 10 compatible brands.
    static let headLength = 56

    /// The format the `ftyp` box at the start of `head` announces, or `nil` when there is no such
    /// box or its brands name no image format.
    static func recognise(_ head: [UInt8]) -> Recognised? {
        guard head.count >= 16, Array(head[4..<8]) == Array("ftyp".utf8) else { return nil }
        let declared = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
        guard declared >= 16, declared % 4 == 0 else { return nil }
        let end = min(declared, head.count)
        var brands = [brand(in: head, at: 8)]
        var offset = 16
        while offset + 4 <= end {
            brands.append(brand(in: head, at: offset))
            offset += 4
        }
        for brand in brands {
            if let recognised = specific[brand] { return recognised }
        }
        for brand in brands {
            if let recognised = generic[brand] { return recognised }
        }
        return nil
    }

    private static func brand(in head: [UInt8], at offset: Int) -> String {
        String(decoding: head[offset..<offset + 4], as: UTF8.self)
    }

    /// Brands that name one codec.
    private static let specific: [String: Recognised] = [
        "avif": Recognised(format: .avif, isSequence: false),
        "avis": Recognised(format: .avif, isSequence: true),
        "heic": Recognised(format: .heic, isSequence: false),
        "heix": Recognised(format: .heic, isSequence: false),
        "heim": Recognised(format: .heic, isSequence: false),
        "heis": Recognised(format: .heic, isSequence: false),
        "hevc": Recognised(format: .heic, isSequence: true),
        "hevx": Recognised(format: .heic, isSequence: true),
        "hevm": Recognised(format: .heic, isSequence: true),
        "hevs": Recognised(format: .heic, isSequence: true),
    ]

    /// HEIF's structural brands, which name no codec: HEIF of some kind.
    private static let generic: [String: Recognised] = [
        "mif1": Recognised(format: .heic, isSequence: false),
        "msf1": Recognised(format: .heic, isSequence: true),
    ]
}

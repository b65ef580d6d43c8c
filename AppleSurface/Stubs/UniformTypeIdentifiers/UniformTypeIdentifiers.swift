// Stand-in for Apple's Uniform Type Identifiers (iOS 14+, macOS 11+).
// Sources (under https://developer.apple.com/documentation/uniformtypeidentifiers/):
//   uttype, uttype/init(_:), uttype/init(filenameextension:conformingto:), uttype/init(mimetype:conformingto:),
//   uttype/identifier, uttype/preferredfilenameextension, uttype/preferredmimetype,
//   uttype/conforms(to:), uttype/image, uttype/jpeg, uttype/png, uttype/gif, uttype/tiff, uttype/webp,
//   uttype/heic, uttype/heif, uttype/bmp, uttype/ico, uttype/rawimage, uttype/svg, uttype/data.
// Apple: `struct UTType : Hashable, Sendable, Codable, CustomStringConvertible`.
import Foundation

public struct UTType: Hashable, Sendable, CustomStringConvertible {
    /// Apple: `var identifier: String`.
    public let identifier: String

    private init(known identifier: String) { self.identifier = identifier }

    /// Apple: `init?(_ identifier: String)`.
    public init?(_ identifier: String) { self.identifier = identifier }
    /// Apple: `init?(filenameExtension: String, conformingTo supertype: UTType = .data)`.
    public init?(filenameExtension: String, conformingTo supertype: UTType = .data) { return nil }
    /// Apple: `init?(mimeType: String, conformingTo supertype: UTType = .data)`.
    public init?(mimeType: String, conformingTo supertype: UTType = .data) { return nil }

    /// Apple: `var preferredFilenameExtension: String?`.
    public var preferredFilenameExtension: String? { nil }
    /// Apple: `var preferredMIMEType: String?`.
    public var preferredMIMEType: String? { nil }
    /// Apple: `func conforms(to type: UTType) -> Bool`.
    public func conforms(to type: UTType) -> Bool { type == self }
    /// Apple: `var description: String`.
    public var description: String { identifier }

    public static let data = UTType(known: "public.data")
    public static let image = UTType(known: "public.image")
    public static let jpeg = UTType(known: "public.jpeg")
    public static let png = UTType(known: "public.png")
    public static let gif = UTType(known: "com.compuserve.gif")
    public static let tiff = UTType(known: "public.tiff")
    public static let webP = UTType(known: "org.webmproject.webp")
    public static let heic = UTType(known: "public.heic")
    public static let heif = UTType(known: "public.heif")
    public static let bmp = UTType(known: "com.microsoft.bmp")
    public static let ico = UTType(known: "com.microsoft.ico")
    public static let rawImage = UTType(known: "public.camera-raw-image")
    public static let svg = UTType(known: "public.svg-image")
}

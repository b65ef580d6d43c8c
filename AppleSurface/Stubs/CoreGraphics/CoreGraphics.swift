import Foundation

// Stand-in for Apple's Core Graphics (and the Core Foundation names it re-exports).
// Sources (one page per symbol, under https://developer.apple.com/documentation/coregraphics/):
//   cgimage, cgcolorspace, cgcolorspace/srgb, cgcolorspace/displayp3, cgcolorspace/init(name:),
//   cgcontext, cgcontext/init(data:width:height:bitspercomponent:bytesperrow:space:bitmapinfo:)-*,
//   cgcontext/makeimage(), cgcontext/draw(_:in:bytiling:), cgcontext/interpolationquality,
//   cgbitmapinfo, cgimagealphainfo, cgimagebyteorderinfo, cginterpolationquality, cgcolor,
//   cgpath, cgpath/init(roundedrect:cornerwidth:cornerheight:transform:), cgpathfillrule,
//   cgcontext/addpath(_:), cgcontext/clip(using:), cgcontext/addellipse(in:).
// Sendability as Apple annotates it: CGImage, CGColor and CGColorSpace are `@unchecked Sendable`
// (macOS 10.9, iOS 7); CGContext, a mutable drawing state, is not Sendable.
//
// CGFloat, CGPoint, CGSize and CGRect: on Linux swift-corelibs-foundation already declares them
// (Apple declares them here, in Core Graphics, and Foundation re-exports them). This module
// re-exports Foundation's declarations, so that `import CoreGraphics` alone names them and a
// file that imports both sees one type, never two.
@_exported import struct Foundation.CGFloat
@_exported import struct Foundation.CGPoint
@_exported import struct Foundation.CGRect
@_exported import struct Foundation.CGSize

// MARK: - Core Foundation (re-exported by Core Graphics on Apple platforms)

// Toll-free bridging: on Apple, `data as CFData`, `string as CFString`, `dictionary as
// CFDictionary` and `mutableData as CFMutableData` are legal coercions because each CF type is
// toll-free bridged to its NS class. Linux has no bridged CF types, so each CF name here is an
// alias of the NS class it bridges to: exactly those coercions type-check. (Not modelled: a CF
// value also answers the NS class's methods here; Apple's CF types do not. See README.md.)
public typealias CFData = NSData
public typealias CFMutableData = NSMutableData
public typealias CFString = NSString
public typealias CFDictionary = NSDictionary
public typealias CFArray = NSArray
public typealias CFNumber = NSNumber
public typealias CFURL = NSURL
/// Apple: `typealias CFTimeInterval = Double` (Core Foundation, `cftimeinterval`).
public typealias CFTimeInterval = Double
/// Apple: `typealias CFTypeRef = AnyObject`.
public typealias CFTypeRef = AnyObject

// MARK: - Geometry helpers Apple declares in Core Graphics

/// Apple: `struct CGAffineTransform` (Sendable, Equatable). Foundation on Linux has none.
public struct CGAffineTransform: Equatable, Sendable {
    public var a: CGFloat, b: CGFloat, c: CGFloat, d: CGFloat, tx: CGFloat, ty: CGFloat
    public init(a: CGFloat, b: CGFloat, c: CGFloat, d: CGFloat, tx: CGFloat, ty: CGFloat) {
        self.a = a
        self.b = b
        self.c = c
        self.d = d
        self.tx = tx
        self.ty = ty
    }
    /// Apple: `static var identity: CGAffineTransform`.
    public static var identity: CGAffineTransform { CGAffineTransform(a: 1, b: 0, c: 0, d: 1, tx: 0, ty: 0) }
    /// Apple: `init(translationX tx: CGFloat, y ty: CGFloat)`.
    public init(translationX tx: CGFloat, y ty: CGFloat) { self.init(a: 1, b: 0, c: 0, d: 1, tx: tx, ty: ty) }
    /// Apple: `init(scaleX sx: CGFloat, y sy: CGFloat)`.
    public init(scaleX sx: CGFloat, y sy: CGFloat) { self.init(a: sx, b: 0, c: 0, d: sy, tx: 0, ty: 0) }
    /// Apple: `init(rotationAngle angle: CGFloat)`.
    public init(rotationAngle angle: CGFloat) {
        self.init(a: cos(angle), b: sin(angle), c: -sin(angle), d: cos(angle), tx: 0, ty: 0)
    }
    /// Apple: `func concatenating(_ t2: CGAffineTransform) -> CGAffineTransform`.
    public func concatenating(_ t2: CGAffineTransform) -> CGAffineTransform {
        CGAffineTransform(
            a: a * t2.a + b * t2.c, b: a * t2.b + b * t2.d, c: c * t2.a + d * t2.c,
            d: c * t2.b + d * t2.d, tx: tx * t2.a + ty * t2.c + t2.tx, ty: tx * t2.b + ty * t2.d + t2.ty)
    }
}

// MARK: - Enumerations and option sets

/// Apple: `enum CGImageAlphaInfo : UInt32, @unchecked Sendable`.
public enum CGImageAlphaInfo: UInt32, Sendable {
    case none = 0
    case premultipliedLast = 1
    case premultipliedFirst = 2
    case last = 3
    case first = 4
    case noneSkipLast = 5
    case noneSkipFirst = 6
    case alphaOnly = 7
}

/// Apple: `enum CGImageByteOrderInfo : UInt32` (iOS 12+, macOS 10.14+ for the Swift enum).
public enum CGImageByteOrderInfo: UInt32, Sendable {
    case orderMask = 0x7000
    case orderDefault = 0
    case order16Little = 0x1000
    case order32Little = 0x2000
    case order16Big = 0x3000
    case order32Big = 0x4000
}

/// Apple: `struct CGBitmapInfo : OptionSet, @unchecked Sendable` (raw value `UInt32`).
public struct CGBitmapInfo: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let alphaInfoMask = CGBitmapInfo(rawValue: 0x1F)
    public static let floatInfoMask = CGBitmapInfo(rawValue: 0xF00)
    public static let floatComponents = CGBitmapInfo(rawValue: 1 << 8)
    public static let byteOrderMask = CGBitmapInfo(rawValue: 0x7000)
    public static let byteOrder16Little = CGBitmapInfo(rawValue: 1 << 12)
    public static let byteOrder32Little = CGBitmapInfo(rawValue: 2 << 12)
    public static let byteOrder16Big = CGBitmapInfo(rawValue: 3 << 12)
    public static let byteOrder32Big = CGBitmapInfo(rawValue: 4 << 12)
}

/// Apple: `enum CGInterpolationQuality : Int32, @unchecked Sendable`.
public enum CGInterpolationQuality: Int32, Sendable {
    case `default` = 0
    case none = 1
    case low = 2
    case high = 3
    case medium = 4
}

/// Apple: `enum CGColorRenderingIntent : Int32, @unchecked Sendable`.
public enum CGColorRenderingIntent: Int32, Sendable {
    case defaultIntent = 0
    case absoluteColorimetric, relativeColorimetric, perceptual, saturation
}

/// Apple: `enum CGColorSpaceModel : Int32`.
public enum CGColorSpaceModel: Int32, Sendable {
    case unknown = -1
    case monochrome = 0
    case rgb, cmyk, lab, deviceN, indexed, pattern, XYZ
}

// MARK: - CGColorSpace

/// Apple: `class CGColorSpace` — a CF type, `@unchecked Sendable` (immutable).
public final class CGColorSpace: @unchecked Sendable {
    // Safe: a stand-in never instantiated at run time; Apple's is immutable and Sendable.
    public let name: CFString?
    public let model: CGColorSpaceModel
    public let numberOfComponents: Int

    /// Apple: `init?(name: CFString)`.
    public init?(name: CFString) {
        self.name = name
        self.model = .rgb
        self.numberOfComponents = 3
    }

    /// Apple: `class let sRGB: CFString` (and the other names). The values are CF string
    /// constants, immutable, so they are readable from any isolation.
    nonisolated(unsafe) public static let sRGB: CFString = "kCGColorSpaceSRGB"
    nonisolated(unsafe) public static let displayP3: CFString = "kCGColorSpaceDisplayP3"
    nonisolated(unsafe) public static let extendedSRGB: CFString = "kCGColorSpaceExtendedSRGB"
    nonisolated(unsafe) public static let linearSRGB: CFString = "kCGColorSpaceLinearSRGB"
    nonisolated(unsafe) public static let genericGrayGamma2_2: CFString = "kCGColorSpaceGenericGrayGamma2_2"
    nonisolated(unsafe) public static let itur_2100_PQ: CFString = "kCGColorSpaceITUR_2100_PQ"

    /// Apple: `var supportsOutput: Bool` (iOS 10+, macOS 10.12+).
    public var supportsOutput: Bool { true }
    /// Apple: `var isWideGamutRGB: Bool` (iOS 12+, macOS 10.12+).
    public var isWideGamutRGB: Bool { false }
}

/// Apple: `func CGColorSpaceCreateDeviceRGB() -> CGColorSpace`.
public func CGColorSpaceCreateDeviceRGB() -> CGColorSpace { CGColorSpace(name: CGColorSpace.sRGB)! }
/// Apple: `func CGColorSpaceCreateDeviceGray() -> CGColorSpace`.
public func CGColorSpaceCreateDeviceGray() -> CGColorSpace { CGColorSpace(name: CGColorSpace.genericGrayGamma2_2)! }

// MARK: - CGColor

/// Apple: `class CGColor` — a CF type, `@unchecked Sendable` (immutable).
public final class CGColor: @unchecked Sendable {
    // Safe: immutable; Apple's is Sendable.
    public let colorSpace: CGColorSpace?
    public let alpha: CGFloat
    /// Apple: `init(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat)` (iOS 13+).
    public init(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat) {
        colorSpace = CGColorSpace(name: CGColorSpace.sRGB)
        self.alpha = alpha
    }
}

// MARK: - CGDataProvider

/// Apple: `class CGDataProvider` (coregraphics/cgdataprovider) — a CF type. Not declared Sendable
/// here: Apple's annotation could not be confirmed, so the stricter choice.
public final class CGDataProvider {
    /// Apple: `init?(data: CFData)`.
    public init?(data: CFData) {}
    /// Apple: `var data: CFData? { get }` — a copy of the provider's bytes (CGDataProviderCopyData).
    public var data: CFData? { nil }
}

// MARK: - CGImage

/// Apple: `class CGImage` — a CF type, immutable, `@unchecked Sendable`.
public final class CGImage: @unchecked Sendable {
    // Safe: every property is a `let`; Apple's CGImage is immutable and Sendable.
    public let width: Int
    public let height: Int
    public let bitsPerComponent: Int
    public let bitsPerPixel: Int
    public let bytesPerRow: Int
    public let colorSpace: CGColorSpace?
    public let alphaInfo: CGImageAlphaInfo
    public let bitmapInfo: CGBitmapInfo
    /// Apple: `var byteOrderInfo: CGImageByteOrderInfo` (iOS 12+, macOS 10.14+).
    public var byteOrderInfo: CGImageByteOrderInfo { .orderDefault }
    /// Apple: `var utType: CFString?` (iOS 9+).
    public var utType: CFString? { nil }
    /// Apple: `var isMask: Bool`.
    public var isMask: Bool { false }
    /// Apple: `var shouldInterpolate: Bool`.
    public var shouldInterpolate: Bool { true }
    /// Apple: `var dataProvider: CGDataProvider? { get }` (coregraphics/cgimage/dataprovider).
    public var dataProvider: CGDataProvider? { nil }

    init(width: Int, height: Int, colorSpace: CGColorSpace?, alphaInfo: CGImageAlphaInfo) {
        self.width = width
        self.height = height
        self.bitsPerComponent = 8
        self.bitsPerPixel = 32
        self.bytesPerRow = width * 4
        self.colorSpace = colorSpace
        self.alphaInfo = alphaInfo
        self.bitmapInfo = CGBitmapInfo(rawValue: alphaInfo.rawValue)
    }

    /// Apple: `func cropping(to rect: CGRect) -> CGImage?`.
    public func cropping(to rect: CGRect) -> CGImage? { nil }
    /// Apple: `func copy(colorSpace space: CGColorSpace) -> CGImage?`.
    public func copy(colorSpace space: CGColorSpace) -> CGImage? { nil }
    /// Apple: `func copy() -> CGImage?`.
    public func copy() -> CGImage? { self }
}

// MARK: - CGPath

/// Apple: `enum CGPathFillRule` (`.winding`, `.evenOdd`).
public enum CGPathFillRule: Int, Sendable {
    case winding = 0
    case evenOdd = 1
}

/// Apple: `class CGPath` — an immutable CF path. Not declared Sendable here: Apple's annotation
/// could not be confirmed, so the stricter choice.
public class CGPath {
    /// Apple: `init(roundedRect rect: CGRect, cornerWidth: CGFloat, cornerHeight: CGFloat,
    /// transform: UnsafePointer<CGAffineTransform>?)` (iOS 7+, macOS 10.9+). Each corner must fit:
    /// `cornerWidth * 2 <= rect.width`, `cornerHeight * 2 <= rect.height`.
    public init(roundedRect rect: CGRect, cornerWidth: CGFloat, cornerHeight: CGFloat, transform: UnsafePointer<CGAffineTransform>?) {}
}

// MARK: - CGContext

/// Apple: `class CGContext` — a CF type holding mutable drawing state; not Sendable.
public final class CGContext {
    /// Apple: `init?(data: UnsafeMutableRawPointer?, width: Int, height: Int, bitsPerComponent: Int,
    /// bytesPerRow: Int, space: CGColorSpace, bitmapInfo: UInt32)`.
    public init?(
        data: UnsafeMutableRawPointer?, width: Int, height: Int, bitsPerComponent: Int,
        bytesPerRow: Int, space: CGColorSpace, bitmapInfo: UInt32
    ) {
        self.width = width
        self.height = height
        self.colorSpace = space
        self.bitmapInfo = CGBitmapInfo(rawValue: bitmapInfo)
    }

    /// Apple: `var width: Int`, `var height: Int`, `var colorSpace: CGColorSpace?`, `var bitmapInfo: CGBitmapInfo`.
    public let width: Int
    public let height: Int
    public let colorSpace: CGColorSpace?
    public let bitmapInfo: CGBitmapInfo
    /// Apple: `var alphaInfo: CGImageAlphaInfo`.
    public var alphaInfo: CGImageAlphaInfo { CGImageAlphaInfo(rawValue: bitmapInfo.rawValue & 0x1F) ?? .none }

    /// Apple: `var interpolationQuality: CGInterpolationQuality { get set }`.
    public var interpolationQuality: CGInterpolationQuality = .default

    /// Apple: `func draw(_ image: CGImage, in rect: CGRect, byTiling: Bool = false)`.
    public func draw(_ image: CGImage, in rect: CGRect, byTiling: Bool = false) {}
    /// Apple: `func makeImage() -> CGImage?`.
    public func makeImage() -> CGImage? {
        CGImage(width: width, height: height, colorSpace: colorSpace, alphaInfo: alphaInfo)
    }
    /// Apple: `func translateBy(x: CGFloat, y: CGFloat)`.
    public func translateBy(x tx: CGFloat, y ty: CGFloat) {}
    /// Apple: `func scaleBy(x: CGFloat, y: CGFloat)`.
    public func scaleBy(x sx: CGFloat, y sy: CGFloat) {}
    /// Apple: `func rotate(by angle: CGFloat)`.
    public func rotate(by angle: CGFloat) {}
    /// Apple: `func concatenate(_ transform: CGAffineTransform)`.
    public func concatenate(_ transform: CGAffineTransform) {}
    /// Apple: `func setFillColor(_ color: CGColor)`.
    public func setFillColor(_ color: CGColor) {}
    /// Apple: `func fill(_ rect: CGRect)`.
    public func fill(_ rect: CGRect) {}
    /// Apple: `func clear(_ rect: CGRect)`.
    public func clear(_ rect: CGRect) {}
    /// Apple: `func addPath(_ path: CGPath)`.
    public func addPath(_ path: CGPath) {}
    /// Apple: `func addEllipse(in rect: CGRect)`.
    public func addEllipse(in rect: CGRect) {}
    /// Apple: `func clip(using rule: CGPathFillRule = .winding)` (iOS 7+, macOS 10.9+).
    public func clip(using rule: CGPathFillRule = .winding) {}
    /// Apple: `var data: UnsafeMutableRawPointer?`.
    public var data: UnsafeMutableRawPointer? { nil }
    /// Apple: `var bytesPerRow: Int`.
    public var bytesPerRow: Int { width * 4 }
}

// Stand-in for Apple's Image I/O.
// Sources (under https://developer.apple.com/documentation/imageio/):
//   cgimagesource, cgimagesourcecreatewithdata(_:_:), cgimagesourcecreatewithurl(_:_:),
//   cgimagesourcecreateincremental(_:), cgimagesourceupdatedata(_:_:_:), cgimagesourcegetstatus(_:),
//   cgimagesourcegetstatusatindex(_:_:), cgimagesourcegetcount(_:), cgimagesourcegettype(_:),
//   cgimagesourcecopyproperties(_:_:), cgimagesourcecopypropertiesatindex(_:_:_:),
//   cgimagesourcecreateimageatindex(_:_:_:), cgimagesourcecreatethumbnailatindex(_:_:_:),
//   cgimagesourcestatus, cgimagepropertyorientation, cgimagedestination,
//   cgimagedestinationcreatewithdata(_:_:_:_:), cgimagedestinationaddimage(_:_:_:),
//   cgimagedestinationfinalize(_:), image source option / property / destination keys.
// Image I/O re-exports Core Graphics (and so Core Foundation). CGImageSource and
// CGImageDestination are CF types with mutable state: not Sendable here (strict where unsure).
// The `kCGImage…` keys are immutable CF string constants that Apple imports as C globals,
// readable from any isolation: `nonisolated(unsafe)` states that here.
@_exported import CoreGraphics
import Foundation

/// Apple: `class CGImageSource` (a CF type). Not Sendable.
public final class CGImageSource {
    fileprivate init() {}
}

/// Apple: `class CGImageDestination` (a CF type). Not Sendable.
public final class CGImageDestination {
    fileprivate init() {}
}

/// Apple: `enum CGImageSourceStatus : Int32, @unchecked Sendable`.
public enum CGImageSourceStatus: Int32, Sendable {
    case statusUnexpectedEOF = -5
    case statusInvalidData = -4
    case statusUnknownType = -3
    case statusReadingHeader = -2
    case statusIncomplete = -1
    case statusComplete = 0
}

/// Apple: `enum CGImagePropertyOrientation : UInt32, @unchecked Sendable` (EXIF values 1–8).
public enum CGImagePropertyOrientation: UInt32, Sendable {
    case up = 1
    case upMirrored, down, downMirrored, leftMirrored, right, rightMirrored, left
}

// MARK: - CGImageSource functions

public func CGImageSourceCreateWithData(_ data: CFData, _ options: CFDictionary?) -> CGImageSource? { CGImageSource() }
public func CGImageSourceCreateWithURL(_ url: CFURL, _ options: CFDictionary?) -> CGImageSource? { CGImageSource() }
public func CGImageSourceCreateIncremental(_ options: CFDictionary?) -> CGImageSource { CGImageSource() }
public func CGImageSourceUpdateData(_ isrc: CGImageSource, _ data: CFData, _ final: Bool) {}
public func CGImageSourceGetStatus(_ isrc: CGImageSource) -> CGImageSourceStatus { .statusComplete }
public func CGImageSourceGetStatusAtIndex(_ isrc: CGImageSource, _ index: Int) -> CGImageSourceStatus { .statusComplete }
public func CGImageSourceGetCount(_ isrc: CGImageSource) -> Int { 0 }
public func CGImageSourceGetType(_ isrc: CGImageSource) -> CFString? { nil }
public func CGImageSourceGetPrimaryImageIndex(_ isrc: CGImageSource) -> Int { 0 }
public func CGImageSourceCopyProperties(_ isrc: CGImageSource, _ options: CFDictionary?) -> CFDictionary? { nil }
public func CGImageSourceCopyPropertiesAtIndex(_ isrc: CGImageSource, _ index: Int, _ options: CFDictionary?) -> CFDictionary? { nil }
public func CGImageSourceCreateImageAtIndex(_ isrc: CGImageSource, _ index: Int, _ options: CFDictionary?) -> CGImage? { nil }
public func CGImageSourceCreateThumbnailAtIndex(_ isrc: CGImageSource, _ index: Int, _ options: CFDictionary?) -> CGImage? { nil }
public func CGImageSourceCopyTypeIdentifiers() -> CFArray { NSArray() }

// MARK: - CGImageDestination functions

public func CGImageDestinationCreateWithData(_ data: CFMutableData, _ type: CFString, _ count: Int, _ options: CFDictionary?)
    -> CGImageDestination?
{ CGImageDestination() }
public func CGImageDestinationAddImage(_ idst: CGImageDestination, _ image: CGImage, _ properties: CFDictionary?) {}
public func CGImageDestinationSetProperties(_ idst: CGImageDestination, _ properties: CFDictionary?) {}
public func CGImageDestinationFinalize(_ idst: CGImageDestination) -> Bool { false }
public func CGImageDestinationCopyTypeIdentifiers() -> CFArray { NSArray() }

// MARK: - Image source options

nonisolated(unsafe) public let kCGImageSourceTypeIdentifierHint: CFString = "kCGImageSourceTypeIdentifierHint"
nonisolated(unsafe) public let kCGImageSourceShouldCache: CFString = "kCGImageSourceShouldCache"
nonisolated(unsafe) public let kCGImageSourceShouldCacheImmediately: CFString = "kCGImageSourceShouldCacheImmediately"
nonisolated(unsafe) public let kCGImageSourceShouldAllowFloat: CFString = "kCGImageSourceShouldAllowFloat"
nonisolated(unsafe) public let kCGImageSourceCreateThumbnailFromImageIfAbsent: CFString = "kCGImageSourceCreateThumbnailFromImageIfAbsent"
nonisolated(unsafe) public let kCGImageSourceCreateThumbnailFromImageAlways: CFString = "kCGImageSourceCreateThumbnailFromImageAlways"
nonisolated(unsafe) public let kCGImageSourceThumbnailMaxPixelSize: CFString = "kCGImageSourceThumbnailMaxPixelSize"
nonisolated(unsafe) public let kCGImageSourceCreateThumbnailWithTransform: CFString = "kCGImageSourceCreateThumbnailWithTransform"
nonisolated(unsafe) public let kCGImageSourceSubsampleFactor: CFString = "kCGImageSourceSubsampleFactor"
// imageio/kcgimagesourcedecoderequest, kcgimagesourcedecodetohdr, kcgimagesourcedecodetosdr:
// `let kCGImageSourceDecodeRequest: CFString` etc., iOS 17+, macOS 14+, tvOS 17+, watchOS 10+,
// visionOS 1+ (computed here: a stored global cannot carry `@available`).
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
public var kCGImageSourceDecodeRequest: CFString { "kCGImageSourceDecodeRequest" }
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
public var kCGImageSourceDecodeToHDR: CFString { "kCGImageSourceDecodeToHDR" }
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
public var kCGImageSourceDecodeToSDR: CFString { "kCGImageSourceDecodeToSDR" }

// MARK: - Image properties

nonisolated(unsafe) public let kCGImagePropertyPixelWidth: CFString = "PixelWidth"
nonisolated(unsafe) public let kCGImagePropertyPixelHeight: CFString = "PixelHeight"
nonisolated(unsafe) public let kCGImagePropertyDepth: CFString = "Depth"
nonisolated(unsafe) public let kCGImagePropertyOrientation: CFString = "Orientation"
nonisolated(unsafe) public let kCGImagePropertyHasAlpha: CFString = "HasAlpha"
nonisolated(unsafe) public let kCGImagePropertyIsFloat: CFString = "IsFloat"
nonisolated(unsafe) public let kCGImagePropertyColorModel: CFString = "ColorModel"
nonisolated(unsafe) public let kCGImagePropertyColorModelRGB: CFString = "RGB"
nonisolated(unsafe) public let kCGImagePropertyColorModelGray: CFString = "Gray"
nonisolated(unsafe) public let kCGImagePropertyProfileName: CFString = "ProfileName"
nonisolated(unsafe) public let kCGImagePropertyDPIWidth: CFString = "DPIWidth"
nonisolated(unsafe) public let kCGImagePropertyDPIHeight: CFString = "DPIHeight"
nonisolated(unsafe) public let kCGImagePropertyFileSize: CFString = "FileSize"
nonisolated(unsafe) public let kCGImagePropertyExifDictionary: CFString = "{Exif}"
nonisolated(unsafe) public let kCGImagePropertyTIFFDictionary: CFString = "{TIFF}"
nonisolated(unsafe) public let kCGImagePropertyTIFFOrientation: CFString = "Orientation"
nonisolated(unsafe) public let kCGImagePropertyJFIFDictionary: CFString = "{JFIF}"
nonisolated(unsafe) public let kCGImagePropertyGIFDictionary: CFString = "{GIF}"
nonisolated(unsafe) public let kCGImagePropertyGIFLoopCount: CFString = "LoopCount"
nonisolated(unsafe) public let kCGImagePropertyGIFDelayTime: CFString = "DelayTime"
nonisolated(unsafe) public let kCGImagePropertyGIFUnclampedDelayTime: CFString = "UnclampedDelayTime"
nonisolated(unsafe) public let kCGImagePropertyGIFHasGlobalColorMap: CFString = "HasGlobalColorMap"
nonisolated(unsafe) public let kCGImagePropertyPNGDictionary: CFString = "{PNG}"
nonisolated(unsafe) public let kCGImagePropertyPNGDelayTime: CFString = "DelayTime"
nonisolated(unsafe) public let kCGImagePropertyPNGUnclampedDelayTime: CFString = "UnclampedDelayTime"
nonisolated(unsafe) public let kCGImagePropertyPNGGamma: CFString = "Gamma"
nonisolated(unsafe) public let kCGImagePropertyAPNGLoopCount: CFString = "LoopCount"
nonisolated(unsafe) public let kCGImagePropertyHEICSDictionary: CFString = "{HEICS}"  // iOS 13+
// imageio/kcgimagepropertyheicsloopcount, …delaytime, …unclampeddelaytime: iOS 13+, macOS 10.15+,
// tvOS 13+, watchOS 6+, visionOS 1+ (below the deployment targets).
nonisolated(unsafe) public let kCGImagePropertyHEICSLoopCount: CFString = "LoopCount"
nonisolated(unsafe) public let kCGImagePropertyHEICSDelayTime: CFString = "DelayTime"
nonisolated(unsafe) public let kCGImagePropertyHEICSUnclampedDelayTime: CFString = "UnclampedDelayTime"
nonisolated(unsafe) public let kCGImagePropertyWebPDictionary: CFString = "{WebP}"  // iOS 14+

// MARK: - Destination options

nonisolated(unsafe) public let kCGImageDestinationLossyCompressionQuality: CFString = "kCGImageDestinationLossyCompressionQuality"
nonisolated(unsafe) public let kCGImageDestinationImageMaxPixelSize: CFString = "kCGImageDestinationImageMaxPixelSize"
nonisolated(unsafe) public let kCGImageDestinationEmbedThumbnail: CFString = "kCGImageDestinationEmbedThumbnail"
nonisolated(unsafe) public let kCGImageDestinationBackgroundColor: CFString = "kCGImageDestinationBackgroundColor"

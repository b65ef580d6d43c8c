import Foundation

// Stand-in for the vImage part of Apple's Accelerate framework: what the blur processor calls.
// Sources (https://developer.apple.com/documentation/accelerate/…):
//   vimage_buffer, vimage_buffer/init(data:height:width:rowbytes:), vimage_buffer/init(),
//   vimagetentconvolve_argb8888(_:_:_:_:_:_:_:_:_:) (vImageBoxConvolve_ARGB8888 has the same C
//   prototype: Convolution.h, "Accelerate Changes for Objective-C", iOS 9 API diffs),
//   kvimageedgeextend, 1578976-processing-flags (kvImageNoFlags), kvimagenoerror.
// vImage is a C API of plain values and functions: nothing here is isolated or shared.

/// Apple: `typealias vImagePixelCount = UInt`.
public typealias vImagePixelCount = UInt
/// Apple: `typealias vImage_Flags = UInt32`.
public typealias vImage_Flags = UInt32
/// Apple: `typealias vImage_Error = Int`.
public typealias vImage_Error = Int

/// Apple: `struct vImage_Buffer` — a pointer to pixels and their geometry.
public struct vImage_Buffer {
    /// Apple: `var data: UnsafeMutableRawPointer!`.
    public var data: UnsafeMutableRawPointer!
    /// Apple: `var height: vImagePixelCount`.
    public var height: vImagePixelCount
    /// Apple: `var width: vImagePixelCount`.
    public var width: vImagePixelCount
    /// Apple: `var rowBytes: Int`.
    public var rowBytes: Int

    /// Apple: `init()`.
    public init() {
        data = nil
        height = 0
        width = 0
        rowBytes = 0
    }

    /// Apple: `init(data: UnsafeMutableRawPointer!, height: vImagePixelCount, width: vImagePixelCount, rowBytes: Int)`.
    public init(data: UnsafeMutableRawPointer!, height: vImagePixelCount, width: vImagePixelCount, rowBytes: Int) {
        self.data = data
        self.height = height
        self.width = width
        self.rowBytes = rowBytes
    }
}

/// Apple: `var kvImageNoFlags: Int { get }`.
public var kvImageNoFlags: Int { 0 }
/// Apple: `var kvImageEdgeExtend: Int { get }`.
public var kvImageEdgeExtend: Int { 8 }
/// Apple: `var kvImageNoError: Int { get }`.
public var kvImageNoError: Int { 0 }

/// Apple: `func vImageBoxConvolve_ARGB8888(_ src: UnsafePointer<vImage_Buffer>, _ dest:
/// UnsafePointer<vImage_Buffer>, _ tempBuffer: UnsafeMutableRawPointer!, _ srcOffsetToROI_X:
/// vImagePixelCount, _ srcOffsetToROI_Y: vImagePixelCount, _ kernel_height: UInt32, _
/// kernel_width: UInt32, _ backgroundColor: UnsafePointer<UInt8>!, _ flags: vImage_Flags) -> vImage_Error`.
public func vImageBoxConvolve_ARGB8888(
    _ src: UnsafePointer<vImage_Buffer>, _ dest: UnsafePointer<vImage_Buffer>, _ tempBuffer: UnsafeMutableRawPointer!,
    _ srcOffsetToROI_X: vImagePixelCount, _ srcOffsetToROI_Y: vImagePixelCount, _ kernel_height: UInt32,
    _ kernel_width: UInt32, _ backgroundColor: UnsafePointer<UInt8>!, _ flags: vImage_Flags
) -> vImage_Error { 0 }

import Foundation

/// Finds the scans of a progressive JPEG in the first bytes of its download, as they arrive: the
/// platform-neutral rule behind progressive previews.
///
/// A progressive file has an SOF2 frame header (SOF10 with arithmetic coding) and several scans,
/// each an SOS segment followed by entropy-coded data; each scan refines the whole picture. A
/// scan is complete when the marker after its data arrives (a DHT before the next scan, the next
/// SOS, or EOI), since only then is it known that no more of its data follows. Stuffed bytes
/// (FF00), restart markers (RSTn) and fill bytes (FF) belong to the scan.
///
/// The detector remembers where it stopped, so feeding it a growing buffer costs each byte once.
/// A baseline or lossless JPEG, or anything else, ends the search (`isProgressive == false`).
struct ProgressiveScanDetector: Sendable {
    /// What the bytes turned out to be.
    enum Kind: Sendable, Equatable {
        /// Not known yet (no frame header so far).
        case unknown
        /// A progressive JPEG.
        case progressive
        /// Not a progressive JPEG (another format, a baseline JPEG, or malformed bytes): no previews.
        case other
    }

    /// What the bytes are, as far as they go.
    private(set) var kind = Kind.unknown
    /// Scans whose data is complete.
    private(set) var completedScans = 0
    /// Where the complete scans end: the offset of the marker after the last one (0 before the
    /// first is complete). The bytes before it are the headers and every complete scan.
    private(set) var completedScansEnd = 0
    /// Whether EOI arrived: the whole image is here.
    private(set) var reachedEnd = false
    /// The frame's size from SOF2, once read.
    private(set) var pixelSize: PixelSize?
    /// The EXIF orientation (APP1 before the frame header), `.up` without one.
    private(set) var orientation = ImageOrientation.up
    /// The next byte to examine.
    private var offset = 0
    /// Whether `offset` is inside a scan's entropy-coded data.
    private var inScan = false

    /// Whether more bytes can still complete a scan.
    var isSearching: Bool { kind != .other && !reachedEnd }

    /// Examines the bytes of `data` not examined before. `data` must be the download so far: the
    /// same bytes as the last call, and maybe more.
    mutating func advance(over data: Data) {
        guard isSearching else { return }
        data.withUnsafeBytes { advance(over: $0) }
    }

    private mutating func advance(over bytes: UnsafeRawBufferPointer) {
        if offset == 0 {
            guard bytes.count >= 2 else { return }
            guard bytes[0] == 0xFF, bytes[1] == 0xD8 else {
                stop()
                return
            }
            offset = 2
        }
        while isSearching {
            if inScan {
                let marker = JPEGEntropyCodedData.end(in: bytes, from: offset)
                offset = marker.offset
                guard marker.found else { return }
                completedScans += 1
                completedScansEnd = marker.offset
                inScan = false
                continue
            }
            guard readSegment(bytes) else { return }
        }
    }

    /// Reads the marker (and segment) at `offset`; returns `false` when more bytes are needed or the
    /// search ended.
    private mutating func readSegment(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard offset < bytes.count else { return false }
        guard bytes[offset] == 0xFF else {
            stop()
            return false
        }
        var codeIndex = offset
        while codeIndex < bytes.count, bytes[codeIndex] == 0xFF { codeIndex += 1 }
        guard codeIndex < bytes.count else { return false }
        let marker = bytes[codeIndex]
        switch marker {
        case 0xD9:
            reachedEnd = true
            return false
        case 0x01, 0xD0...0xD7:
            offset = codeIndex + 1
            return true
        case 0x00, 0xD8:
            stop()
            return false
        default:
            break
        }
        guard codeIndex + 2 < bytes.count else { return false }
        let length = Int(bytes[codeIndex + 1]) << 8 | Int(bytes[codeIndex + 2])
        let segmentEnd = codeIndex + 1 + length
        guard length >= 2 else {
            stop()
            return false
        }
        guard segmentEnd <= bytes.count else { return false }
        let payload = UnsafeRawBufferPointer(rebasing: bytes[(codeIndex + 3)..<segmentEnd])
        switch marker {
        case 0xC2, 0xCA:
            guard payload.count >= 5 else {
                stop()
                return false
            }
            let height = Int(payload[1]) << 8 | Int(payload[2])
            let width = Int(payload[3]) << 8 | Int(payload[4])
            guard width > 0, height > 0 else {
                stop()
                return false
            }
            pixelSize = PixelSize(width: width, height: height)
            kind = .progressive
        case 0xC0, 0xC1, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCB, 0xCD, 0xCE, 0xCF:
            stop()  // baseline, extended, lossless, hierarchical: one pass, no previews
            return false
        case 0xE1 where pixelSize == nil:
            if let exif = ImageOrientation.exif(payload) { orientation = exif }
        case 0xDA:
            guard kind == .progressive else {
                stop()
                return false
            }
            inScan = true
        default:
            break
        }
        offset = segmentEnd
        return true
    }

    /// The picture so far as a complete JPEG file: the bytes of `data` (the download the detector
    /// has advanced over) up to the end of the last complete scan, closed with EOI; `nil` before a
    /// scan is complete. Any JPEG decoder reads it as a whole file, as coarse as its scans: what a
    /// preview is decoded from, rather than an incomplete source (ImageIO documents no partial
    /// images of an incomplete progressive JPEG).
    func previewFile(of data: Data) -> Data? {
        guard completedScans > 0, completedScansEnd > 0, completedScansEnd <= data.count else { return nil }
        var file = Data(data.prefix(completedScansEnd))
        file.append(contentsOf: [0xFF, 0xD9])
        return file
    }

    /// Not a progressive JPEG after all: no more searching.
    private mutating func stop() {
        kind = .other
    }
}

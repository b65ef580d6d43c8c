/// The entropy-coded data of a JPEG scan, which the structure check and the progressive-scan
/// detector both skip to find the marker after it.
enum JPEGEntropyCodedData {
    /// Where the entropy-coded data beginning at `start` ends. FF00 (a stuffed data byte), FFD0
    /// to FFD7 (restart markers) and repeated FF (fill) belong to the data.
    ///
    /// - Parameters:
    ///   - bytes: The file's bytes so far.
    ///   - start: The offset of the data's first byte.
    /// - Returns: `found` with the offset of the 0xFF that starts the next real marker; or not
    ///   found with the offset to resume from once more bytes arrive (a trailing FF waits for the
    ///   byte after it).
    static func end(in bytes: UnsafeRawBufferPointer, from start: Int) -> (found: Bool, offset: Int) {
        var index = start
        let count = bytes.count
        while index < count {
            guard bytes[index] == 0xFF else {
                index += 1
                continue
            }
            guard index + 1 < count else { return (false, index) }
            let next = bytes[index + 1]
            if next == 0x00 || (0xD0...0xD7).contains(next) {
                index += 2
            } else if next == 0xFF {
                index += 1
            } else {
                return (true, index)
            }
        }
        return (false, index)
    }
}

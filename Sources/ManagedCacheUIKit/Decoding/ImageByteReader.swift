/// Bounds-checked reads over the bytes being validated.
///
/// Every read that would go past the end throws `ImageValidationError.truncated`, because
/// running out of bytes inside a structure means the same thing in every format. The reader
/// borrows the buffer of a `withUnsafeBytes` call and must not outlive it.
struct ImageByteReader {
    /// The bytes under validation.
    let bytes: UnsafeRawBufferPointer
    /// The format the bytes are being validated as, named in the errors thrown.
    let format: ImageFormat

    /// How many bytes there are.
    var count: Int { bytes.count }

    /// Whether `length` bytes starting at `offset` are all present. Never overflows.
    func contains(_ length: Int, at offset: Int) -> Bool {
        offset >= 0 && length >= 0 && offset <= count - length
    }

    /// Throws `truncated` unless `length` bytes starting at `offset` are all present.
    func require(_ length: Int, at offset: Int) throws(ImageValidationError) {
        guard contains(length, at: offset) else { throw .truncated(format) }
    }

    /// The byte at `offset`.
    func byte(at offset: Int) throws(ImageValidationError) -> UInt8 {
        try require(1, at: offset)
        return bytes[offset]
    }

    /// The big-endian 16-bit value at `offset`.
    func uint16BigEndian(at offset: Int) throws(ImageValidationError) -> UInt16 {
        try require(2, at: offset)
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    /// The big-endian 32-bit value at `offset`.
    func uint32BigEndian(at offset: Int) throws(ImageValidationError) -> UInt32 {
        try require(4, at: offset)
        return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16
            | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    /// The little-endian 16-bit value at `offset`.
    func uint16LittleEndian(at offset: Int) throws(ImageValidationError) -> UInt16 {
        try require(2, at: offset)
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    /// The little-endian 24-bit value at `offset`.
    func uint24LittleEndian(at offset: Int) throws(ImageValidationError) -> UInt32 {
        try require(3, at: offset)
        return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
    }

    /// The little-endian 32-bit value at `offset`.
    func uint32LittleEndian(at offset: Int) throws(ImageValidationError) -> UInt32 {
        try require(4, at: offset)
        return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8
            | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }

    /// The four bytes at `offset` read as a chunk name (PNG chunk type, RIFF FourCC).
    /// Bytes outside printable ASCII show as "?" so the name is safe to log.
    func fourCharacterCode(at offset: Int) throws(ImageValidationError) -> String {
        try require(4, at: offset)
        var name = ""
        for index in offset..<(offset + 4) {
            let value = bytes[index]
            name.append((0x20...0x7E).contains(value) ? Character(Unicode.Scalar(value)) : "?")
        }
        return name
    }

    /// The `length` bytes starting at `offset`, for checksumming.
    func region(at offset: Int, length: Int) throws(ImageValidationError) -> UnsafeRawBufferPointer {
        try require(length, at: offset)
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)])
    }
}

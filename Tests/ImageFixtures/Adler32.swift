/// The Adler-32 checksum (RFC 1950) that ends every zlib stream.
struct Adler32 {
    /// The largest prime below 2^16.
    private static let modulus: UInt32 = 65_521
    /// The most bytes that can be summed before the running sums could overflow 32 bits.
    private static let bytesBetweenReductions = 5_552

    private var low: UInt32 = 1
    private var high: UInt32 = 0

    /// The checksum of everything passed to `update` so far.
    var value: UInt32 { high << 16 | low }

    /// Feeds more bytes into the checksum.
    mutating func update(_ buffer: UnsafeRawBufferPointer) {
        var index = 0
        while index < buffer.count {
            let end = min(buffer.count, index + Self.bytesBetweenReductions)
            while index < end {
                low &+= UInt32(buffer[index])
                high &+= low
                index += 1
            }
            low %= Self.modulus
            high %= Self.modulus
        }
    }
}

import Foundation

/// The body of the streaming-memory test, shared by the test that serves it
/// and the child process that downloads and checks it: `blockCount` blocks of 1 MiB, each a fixed
/// pseudo-random block whose first eight bytes are the block's number.
public enum StreamingPayload {
    /// The size of one block.
    public static let blockSize = 1 << 20

    /// The fixed pseudo-random block (xorshift64*, seed 0x5EED).
    public static let baseBlock: Data = {
        var state: UInt64 = 0x5EED
        var bytes = [UInt8](repeating: 0, count: blockSize)
        var index = 0
        while index < blockSize {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            let word = state &* 0x2545_F491_4F6C_DD1D
            withUnsafeBytes(of: word.littleEndian) { raw in
                for offset in 0..<8 { bytes[index + offset] = raw[offset] }
            }
            index += 8
        }
        return Data(bytes)
    }()

    /// Block `number`.
    public static func block(_ number: Int) -> Data {
        var block = baseBlock
        withUnsafeBytes(of: UInt64(number).littleEndian) { block.replaceSubrange(0..<8, with: $0) }
        return block
    }

    /// The whole body of `blockCount` blocks.
    public static func body(blockCount: Int) -> Data {
        var body = Data(capacity: blockCount * blockSize)
        for number in 0..<blockCount { body.append(block(number)) }
        return body
    }

    /// Whether the file at `url` holds exactly `body(blockCount:)`, read 1 MiB at a time.
    public static func fileMatches(_ url: URL, blockCount: Int) -> Bool {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return false }
        defer { try? handle.close() }
        for number in 0..<blockCount {
            guard let chunk = try? handle.read(upToCount: blockSize), chunk == block(number) else { return false }
        }
        return (try? handle.read(upToCount: 1))?.isEmpty ?? true
    }
}

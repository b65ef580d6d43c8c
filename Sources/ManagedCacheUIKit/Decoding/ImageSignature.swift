/// The leading "magic" bytes that identify a format, with wildcards where the format puts
/// variable data (the RIFF size in WebP).
struct ImageSignature: Sendable {
    /// The format these bytes announce.
    let format: ImageFormat
    /// The expected bytes; `nil` matches any byte.
    let pattern: [UInt8?]

    /// Every signature the validators know. The formats differ in their first byte, so even a
    /// one-byte prefix points at a single format.
    static let all: [ImageSignature] = [
        ImageSignature(format: .png, pattern: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
        // SOI followed by the 0xFF that starts the next marker.
        ImageSignature(format: .jpeg, pattern: [0xFF, 0xD8, 0xFF]),
        ImageSignature(format: .gif, pattern: Array("GIF87a".utf8)),
        ImageSignature(format: .gif, pattern: Array("GIF89a".utf8)),
        ImageSignature(format: .webp, pattern: Array("RIFF".utf8) + [nil, nil, nil, nil] + Array("WEBP".utf8)),
    ]

    /// The longest signature, which is how many leading bytes detection needs to look at.
    static let longestLength = all.map(\.pattern.count).max() ?? 0

    /// Whether `head` starts with this whole signature.
    func isMatched(by head: [UInt8]) -> Bool {
        head.count >= pattern.count && matchesPrefix(of: head, length: pattern.count)
    }

    /// Whether `head` is shorter than this signature and agrees with it as far as it goes.
    func isStarted(by head: [UInt8]) -> Bool {
        !head.isEmpty && head.count < pattern.count && matchesPrefix(of: head, length: head.count)
    }

    private func matchesPrefix(of head: [UInt8], length: Int) -> Bool {
        for index in 0..<length {
            if let expected = pattern[index], head[index] != expected { return false }
        }
        return true
    }
}

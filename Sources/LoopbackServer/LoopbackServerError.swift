#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a ``LoopbackServer`` could not start, or why ``LoopbackServer/measureCeiling(requests:concurrency:bodySize:)``
/// failed.
public enum LoopbackServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A system call failed; `errno` is the code it left.
    case system(call: String, errno: Int32)
    /// The ceiling measurement received a response it did not expect.
    case unexpectedResponse(String)

    /// A readable explanation, with the system's message for `errno`.
    public var description: String {
        switch self {
        case .system(let call, let code):
            return "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
        case .unexpectedResponse(let detail):
            return "unexpected response: \(detail)"
        }
    }
}

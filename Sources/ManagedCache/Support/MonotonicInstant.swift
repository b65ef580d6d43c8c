import Dispatch

/// A point on the system's monotonic clock (uptime), for timeouts and expiry.
///
/// Why not `ContinuousClock`: it needs iOS 16 / macOS 13, and the package supports iOS 15 /
/// macOS 12. `DispatchTime` exists everywhere; like `SuspendingClock` on Apple platforms it does
/// not advance while the device sleeps, which suits idle timeouts and failure memory alike.
struct MonotonicInstant: Comparable, Sendable {
    /// Nanoseconds since an arbitrary fixed point (boot).
    let nanoseconds: UInt64

    /// Now.
    static var now: MonotonicInstant { MonotonicInstant(nanoseconds: DispatchTime.now().uptimeNanoseconds) }

    /// This instant `seconds` later (negative and non-finite amounts count as 0).
    func adding(seconds: Double) -> MonotonicInstant {
        let amount = seconds.isFinite && seconds > 0 ? min(seconds * 1e9, Double(UInt64.max / 2)) : 0
        return MonotonicInstant(nanoseconds: nanoseconds &+ UInt64(amount))
    }

    /// Seconds from `earlier` to this instant (0 when `earlier` is later).
    func seconds(since earlier: MonotonicInstant) -> Double {
        nanoseconds > earlier.nanoseconds ? Double(nanoseconds - earlier.nanoseconds) / 1e9 : 0
    }

    static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
}

import Foundation

/// Polls `condition` every few milliseconds until it holds or `timeout` seconds pass; returns
/// whether it held. Tests wait on conditions like this instead of sleeping a fixed time, so a
/// slow machine only makes them slower, never wrong. The bound (60 s) only limits a hang: on a
/// loaded 2-core machine the awaited work can take many seconds to be scheduled.
func waitUntil(timeout: Double = 60, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else { return condition() }
        try? await Task.sleep(nanoseconds: 5_000_000)
    }
    return true
}

/// Deterministic test bytes: `count` bytes of a pattern that differs at every offset mod 251.
func testBytes(_ count: Int, seed: Int = 0) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: ($0 &+ seed) % 251) })
}

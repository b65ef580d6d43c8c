/// The screen refresh rate an animated image needs: the UIKit view asks its display link for this
/// rate (`CADisplayLink.preferredFrameRateRange`) instead of running at the display's full rate
/// (up to 120 Hz on ProMotion displays) for a GIF that changes frame ten times a second.
///
/// The rates are the divisors of 120 (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 24, 30, 40, 60, 120):
/// the rates a 60 Hz or 120 Hz display can hold evenly, and a set in which the rate shared by
/// several animations (their least common multiple, `sharedRate(_:)`) is again one of them.
///
/// An animation's rate is the lowest one at which every frame duration lasts a whole number of
/// refreshes (at least one), give or take `tolerance` and at most `driftTolerance` of the
/// duration, so that each frame changes on a refresh, close to when it is due, and frames are
/// almost never skipped or doubled: 10 Hz for frames of 100 ms, 20 Hz for frames of 50 and 100
/// ms, 30 Hz for 1/30 s (and for WebP's 33 ms). A duration no rate fits (40 ms frames: 25 fps)
/// gets the highest rate, which comes closest.
///
/// Platform-neutral and tested on Linux; the UIKit view applies it.
enum AnimationFrameRate {
    /// The rates asked for, lowest first: the divisors of 120.
    static let rates = [1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 24, 30, 40, 60, 120]
    /// The highest rate asked for.
    static let maximumRate = 120
    /// How far (in seconds) a frame change may fall from a refresh and still count as on it:
    /// 2 ms, a quarter of a 120 Hz refresh.
    static let tolerance = 0.002
    /// How far, as a fraction of its duration, a frame may be from a whole number of refreshes:
    /// 2%, so the error adds up to a skipped or doubled refresh once in 50 frames at most (25 fps
    /// on 24 Hz, 4%, would skip a frame every second).
    static let driftTolerance = 0.02

    /// The lowest rate at which every frame of `animation` changes on a refresh.
    ///
    /// - Parameter animation: The animation's frame durations.
    /// - Returns: One of `rates`.
    static func rate(for animation: AnimationInfo) -> Int {
        rate(forFrameDurations: animation.frameDurations)
    }

    /// The lowest rate at which every one of `durations` (seconds) lasts a whole number of
    /// refreshes (at least one), within `tolerance` and `driftTolerance`.
    ///
    /// - Parameter durations: Frame durations in seconds.
    /// - Returns: One of `rates`; `maximumRate` when none fits or there is no positive duration.
    static func rate(forFrameDurations durations: [Double]) -> Int {
        let distinct = Set(durations.filter { $0 > 0 && $0.isFinite })
        guard !distinct.isEmpty else { return maximumRate }
        for rate in rates {
            let period = 1 / Double(rate)
            let fits = distinct.allSatisfy { duration in
                let refreshes = (duration / period).rounded()
                let error = abs(duration - refreshes * period)
                return refreshes >= 1 && error <= min(tolerance, duration * driftTolerance)
            }
            if fits { return rate }
        }
        return maximumRate
    }

    /// The rate one display link shared by several animations runs at: the least common multiple
    /// of their rates, so every one of them changes frames on a refresh.
    ///
    /// - Parameter rates: The rates of the animations playing (each one of `rates`).
    /// - Returns: Their least common multiple, at most `maximumRate`; `nil` when none plays.
    static func sharedRate(_ rates: some Sequence<Int>) -> Int? {
        var shared: Int?
        for rate in rates where rate > 0 {
            let current = shared ?? rate
            shared = min(maximumRate, current / greatestCommonDivisor(current, rate) * rate)
        }
        return shared
    }

    /// The range handed to the display link for `rate`: exactly that rate (minimum, maximum and
    /// preferred alike). A lower rate would show frames late; a higher one spends power for
    /// nothing. The system may still choose another rate (Low Power Mode, thermal state).
    ///
    /// - Parameter rate: The rate wanted, in Hz.
    /// - Returns: The minimum, maximum and preferred rates, in Hz.
    static func range(for rate: Int) -> (minimum: Float, maximum: Float, preferred: Float) {
        let hertz = Float(max(1, min(maximumRate, rate)))
        return (hertz, hertz, hertz)
    }

    private static func greatestCommonDivisor(_ a: Int, _ b: Int) -> Int {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }
}

import Testing

@testable import ManagedCacheUIKit

/// Whether an image view plays an animated image, from the app's switch, the system's Reduce
/// Motion and the system's Animated Images setting: any one of them off shows the first frame.
@Suite struct AnimationSettingsTests {
    @Test(arguments: [false, true], [false, true])
    func playsOnlyWithEverySwitchOn(reduceMotion: Bool, systemPlaysAnimatedImages: Bool) {
        for appAllows in [false, true] {
            let settings = AnimationSettings(
                appAllowsAnimation: appAllows, reduceMotion: reduceMotion, systemPlaysAnimatedImages: systemPlaysAnimatedImages)
            let expected = appAllows && !reduceMotion && systemPlaysAnimatedImages
            #expect(settings.allowsPlaying == expected)
            let inWindow = settings.conditions(isInWindow: true)
            #expect(inWindow.allowsPlaying == expected)
            #expect(inWindow.showsFirstFrameOnly == !expected, "any switch off: the first frame, as under Reduce Motion")
            #expect(!settings.conditions(isInWindow: false).allowsPlaying, "out of a window nothing plays")
        }
    }

    @Test func turningAnimatedImagesOffGoesBackToTheFirstFrameAndOnPlaysAgain() {
        let animation = AnimationInfo(frameDurations: [0.1, 0.1, 0.1], loopCount: .forever)
        let on = AnimationSettings(appAllowsAnimation: true, reduceMotion: false, systemPlaysAnimatedImages: true)
        var off = on
        off.systemPlaysAnimatedImages = false
        var playhead = AnimationPlayhead(animation: animation, conditions: on.conditions(isInWindow: true), time: 0)
        let playing = playhead.tick(at: 0.15)
        #expect(playing.frameIndex == 1)
        let changed = playhead.update(off.conditions(isInWindow: true), at: 0.16)
        #expect(changed, "back to the first frame")
        #expect(playhead.frameIndex == 0)
        #expect(!playhead.wantsRefreshes, "no display link while the setting is off")
        playhead.update(on.conditions(isInWindow: true), at: 1)
        #expect(playhead.wantsRefreshes)
        let again = playhead.tick(at: 1.15)
        #expect(again.frameIndex == 1, "plays from the first frame again")
    }
}

/// The refresh rate an animated image asks its display link for, from its frame durations.
@Suite struct AnimationFrameRateTests {
    static let durationRates: [([Double], Int)] = [
        ([0.1], 10),  // a 10 fps GIF
        ([0.1, 0.1, 0.1], 10),
        ([0.05, 0.1], 20),  // every frame change falls on a 20 Hz refresh
        ([0.2, 0.5], 10),
        ([1.0], 1),
        ([0.5, 1.0], 2),
        ([1.0 / 30], 30),  // APNG at 1/30 s
        ([0.033], 30),  // WebP in milliseconds: 0.3 ms (1%) from a 30 Hz refresh
        ([1.0 / 24], 24),
        ([0.02], 120),  // 50 fps fits no rate: the highest
        ([0.04], 120),  // 25 fps: 24 Hz is 1.7 ms off, but 4% a frame would skip one every second
        ([0.07, 0.13], 120),  // fits no rate: the highest
        ([], 120),
    ]

    @Test(arguments: durationRates)
    func rateForFrameDurations(durations: [Double], expected: Int) {
        #expect(AnimationFrameRate.rate(forFrameDurations: durations) == expected)
    }

    @Test func theRateOfAnAnimationUsesItsPlayedDurations() {
        // Declared 0 s frames play at 100 ms, as browsers do: 10 Hz, not the full rate.
        #expect(AnimationFrameRate.rate(for: AnimationInfo(frameDurations: [0, 0], loopCount: .forever)) == 10)
        #expect(AnimationFrameRate.rate(for: AnimationInfo(frameDurations: [0.05, 0.15], loopCount: .times(2))) == 20)
    }

    @Test func everyRateIsADivisorOf120() {
        #expect(AnimationFrameRate.rates.allSatisfy { 120 % $0 == 0 })
        #expect(AnimationFrameRate.rates == AnimationFrameRate.rates.sorted())
    }

    static let sharedRates: [([Int], Int)] = [
        ([10], 10),
        ([10, 10], 10),
        ([10, 15], 30),  // both change frames on a 30 Hz refresh
        ([10, 24], 120),
        ([20, 30, 12], 60),
        ([1, 2, 3], 6),
        ([120, 10], 120),
    ]

    @Test(arguments: sharedRates)
    func oneSharedLinkRunsAtTheLeastCommonMultiple(rates: [Int], expected: Int) {
        #expect(AnimationFrameRate.sharedRate(rates) == expected)
        #expect(rates.allSatisfy { expected % $0 == 0 }, "every animation's frames fall on the shared link's refreshes")
    }

    @Test func noAnimationNoLink() {
        #expect(AnimationFrameRate.sharedRate([Int]()) == nil)
    }

    @Test func theRangeAsksForExactlyTheRate() {
        let range = AnimationFrameRate.range(for: 10)
        #expect(range.minimum == 10 && range.maximum == 10 && range.preferred == 10)
        #expect(AnimationFrameRate.range(for: 500).maximum == 120)
    }
}

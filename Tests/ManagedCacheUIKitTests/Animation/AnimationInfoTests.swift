import Foundation
import ManagedCacheUIKit
import Testing

/// Frame durations and loop counts read from real files made by Pillow (Fixtures/make_fixtures.py).
@Suite struct AnimationInfoTests {
    private func fixture(_ name: String) throws -> Data {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"))
        return try Data(contentsOf: url)
    }

    @Test func gifDelaysAreReadAndTinyOnesPlayAt100Milliseconds() throws {
        // Declared: no graphic control extension (0), 1, 2 and 11 hundredths of a second.
        let animation = try #require(AnimationInfo(parsing: fixture("timed.gif")))
        #expect(animation.frameDurations == [0.1, 0.1, 0.02, 0.11])
        #expect(animation.frameCount == 4)
        #expect(abs(animation.loopDuration - 0.33) < 1e-9)
    }

    @Test func gifNetscapeLoopCountRepeatsAfterTheFirstPlay() throws {
        // NETSCAPE2.0 loop count 2: played once, then repeated twice.
        #expect(try AnimationInfo(parsing: fixture("timed.gif"))?.loopCount == .times(3))
        #expect(try AnimationInfo(parsing: fixture("animated.gif"))?.loopCount == .forever)
    }

    @Test func gifWithoutLoopBlockPlaysOnce() throws {
        let animation = try #require(AnimationInfo(parsing: fixture("once.gif")))
        #expect(animation.loopCount == .times(1))
        #expect(animation.frameDurations == [0.05, 0.05])
        #expect(animation.totalDuration == 0.1)
    }

    @Test func apngDelaysAreFractionsAndNumPlaysIsThePlayCount() throws {
        // fcTL delays 1/100, 1/25 and 1/4 s; acTL num_plays 3.
        let animation = try #require(AnimationInfo(parsing: fixture("timed.png")))
        #expect(animation.frameDurations == [0.1, 0.04, 0.25])
        #expect(animation.loopCount == .times(3))
        #expect(try AnimationInfo(parsing: fixture("animated.png"))?.loopCount == .forever)
    }

    @Test func apngDefaultImageIsNotAFrame() throws {
        let data = try fixture("default-image.png")
        let animation = try #require(AnimationInfo(parsing: data))
        #expect(animation.frameDurations == [0.03, 0.07])
        #expect(animation.loopCount == .forever)
        #expect(try ImageValidator.validate(data).frameCount == animation.frameCount)
    }

    @Test func webpDurationsAreMillisecondsAndLoopCountIsThePlayCount() throws {
        let animation = try #require(AnimationInfo(parsing: fixture("timed.webp")))
        #expect(animation.frameDurations == [0.1, 0.06, 0.2])
        #expect(animation.loopCount == .times(2))
        #expect(try AnimationInfo(parsing: fixture("animated.webp"))?.frameDurations == [0.1, 0.1, 0.1])
    }

    @Test(arguments: ["rgba.png", "baseline.jpg", "progressive.jpg", "still.gif", "lossy.webp", "lossless.webp"])
    func stillImagesHaveNoAnimation(_ name: String) throws {
        #expect(try AnimationInfo(parsing: fixture(name)) == nil)
    }

    @Test func decodedImagesCarryTheAnimationOnEveryPlatform() throws {
        for name in ["timed.gif", "timed.png", "timed.webp"] {
            let data = try fixture(name)
            let image = try ImageDecoder().decodeImage(data)
            #expect(image.animation == AnimationInfo(parsing: data), "\(name)")
            #expect(image.animation?.frameCount == image.frameCount, "\(name)")
        }
        #expect(try ImageDecoder().decodeImage(fixture("still.gif")).animation == nil)
    }

    @Test func clampingRuleMatchesBrowsers() {
        #expect(AnimationInfo.playedDuration(ofDeclared: 0) == 0.1)
        #expect(AnimationInfo.playedDuration(ofDeclared: 0.01) == 0.1)
        #expect(AnimationInfo.playedDuration(ofDeclared: 1.0 / 100) == 0.1)
        #expect(AnimationInfo.playedDuration(ofDeclared: 0.011) == 0.011)
        #expect(AnimationInfo.playedDuration(ofDeclared: -1) == 0.1)
        #expect(AnimationInfo(frameDurations: [], loopCount: .times(0)) == AnimationInfo(frameDurations: [0.1], loopCount: .times(1)))
    }

    @Test func truncatedAnimationsAreNotGuessed() throws {
        let data = try fixture("timed.gif")
        #expect(AnimationInfo(parsing: data.prefix(data.count / 2)) == nil)
    }
}

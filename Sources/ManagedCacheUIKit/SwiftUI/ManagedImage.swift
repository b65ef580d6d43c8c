#if canImport(SwiftUI) && canImport(ImageIO)
import Combine
import CoreGraphics
import Foundation
import ManagedCache
import SwiftUI

/// A SwiftUI view that loads, shares and shows an image: `ManagedImageView` for SwiftUI, on
/// iOS, iPadOS, Mac Catalyst, macOS, tvOS, visionOS and watchOS.
///
/// ```swift
/// import ManagedCacheUIKit
/// import SwiftUI
///
/// struct AvatarView: View {
///     let avatarURL: URL
///
///     var body: some View {
///         ManagedImage(url: avatarURL) { phase in
///             if let image = phase.image?.uiImage() {
///                 Image(uiImage: image).resizable()
///             } else {
///                 Color.secondary
///             }
///         }
///         .frame(width: 44, height: 44)
///     }
/// }
/// ```
///
/// It sizes like `AsyncImage` showing a resizable image: without a frame it takes the image's
/// size (its pixels at the display scale); in a `ScrollView` or a `LazyVStack` row it takes the
/// width it is offered and the height of the image's aspect ratio; inside `.frame(…)` or
/// `.aspectRatio(…)` it takes what they give (`.aspectFit` keeps the image's aspect ratio inside
/// it). Before the image is known it is square on the sides left open. It loads the variant of
/// the size it is placed at (the width of a row, unbounded in height, so one image is loaded
/// once), never upscaled (a decision tested on Linux). On iOS 15, macOS 12, tvOS 15
/// and watchOS 8, which have no custom layouts, it approximates this with the image's aspect
/// ratio and ideal size and loads the variant of the size it gets.
///
/// It loads once it is on screen and placed, shares the one decoded image with every other view
/// and user of the key, shows a memory hit without a placeholder frame, keeps the old variant
/// while a new size loads, fades in an image that had to be loaded (never a memory hit; not under
/// Reduce Motion), and detaches when it leaves the screen. All of that is ``ManagedImageModel``'s
/// (tested on Linux); this view only reports its placement and appearance and draws the phase,
/// animating the change the model asks for.
///
/// Animated GIF, APNG and WebP images play: `content` is given the frame due in place of the
/// image (a ``ManagedImagePhase/success(_:_:)`` of that frame), refreshed at the rate the
/// animation needs, from the image's frame buffer shared with every other view showing it (each
/// view with its own playhead). They play while the view is on screen, `animatesImages` and
/// ``ImageAnimation/isEnabled`` are on, Reduce Motion is off and the system's Animated Images
/// setting (`accessibilityPlayAnimatedImages`, iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1)
/// is on; otherwise the first frame shows.
///
/// Every input takes effect when the parent passes a new one, also in a row that SwiftUI reuses:
/// another `url` or `oid` clears the old image and loads the new one; another `format`,
/// `scaleMode`, `priority` or `manager` keeps the image on screen until the new answer replaces
/// it; another `transition` applies to the next image. The model is made once per view identity,
/// never again on the parent's later renders.
public struct ManagedImage<Content: View>: View {
    private let inputs: ManagedImageInputs
    private let label: Text?
    private let animatesImages: Bool
    private let content: (ManagedImagePhase) -> Content
    @StateObject private var observed: ObservedModel
    @Environment(\.displayScale) private var displayScale
    @Environment(\.accessibilityReduceMotion) private var reducesMotion

    /// Shows the image of `url` through `content`, which draws each phase.
    ///
    /// - Parameters:
    ///   - url: The image's URL; `nil` shows `.empty`.
    ///   - oid: The key that identifies the image instead of the URL (default `nil`).
    ///   - priority: The load's priority (default `.normal`).
    ///   - format: A fixed format instead of the placed size (default `nil`).
    ///   - scaleMode: How the image fills the view (default `.aspectFill`): the view's size for a
    ///     proposal of both sides, and the variant's.
    ///   - transition: How an image that had to be loaded appears (default `.fade`, a 0.25 s
    ///     cross-fade; `.none` shows it at once). A memory hit always appears at once.
    ///   - accessibilityLabel: What the picture shows, for VoiceOver (default `nil`: the view
    ///     is not labelled). With a label the view is one accessibility element with the image trait.
    ///   - animatesImages: Whether animated images play (default `true`; the system's settings
    ///     can still stop them).
    ///   - manager: The manager (default `ObjectManager.defaultImageManager`).
    ///   - content: Draws a ``ManagedImagePhase``; the change from one phase to the next is
    ///     animated as the model says (views inserted or removed by `content` fade).
    public init(
        url: URL?, oid: String? = nil, priority: LoadPriority = .normal, format: ImageCacheFormat? = nil,
        scaleMode: ImageScaleMode = .aspectFill, transition: ImageTransition = .fade, accessibilityLabel: Text? = nil,
        animatesImages: Bool = true, manager: ObjectManager = .defaultImageManager,
        @ViewBuilder content: @escaping (ManagedImagePhase) -> Content
    ) {
        let inputs = ManagedImageInputs(
            url: url, oid: oid, priority: priority, format: format, scaleMode: scaleMode, transition: transition, manager: manager)
        self.inputs = inputs
        self.label = accessibilityLabel
        self.animatesImages = animatesImages
        self.content = content
        // An autoclosure: SwiftUI evaluates it once per view identity, not on every parent render.
        _observed = StateObject(wrappedValue: ObservedModel(ManagedImageModel(inputs: inputs)))
    }

    /// Reads the system's Animated Images setting where SwiftUI has it, and lays out the phase.
    public var body: some View {
        if #available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *) {
            AnimatedImagesSettingReader { playsAnimatedImages in sized(playsAnimatedImages: playsAnimatedImages) }
        } else {
            sized(playsAnimatedImages: true)
        }
    }

    /// The phase in the layout container that sizes it and reports its placement (iOS 16, macOS
    /// 13, tvOS 16, watchOS 9, visionOS 1), or in the older systems' approximation.
    @ViewBuilder private func sized(playsAnimatedImages: Bool) -> some View {
        let sizing = ManagedImageSizing(scaleMode: inputs.scaleMode)
        #if os(visionOS)
        ManagedImageLayout(sizing: sizing, imageSize: imageSize, scale: Double(displayScale), model: observed.model) {
            drawn(playsAnimatedImages: playsAnimatedImages)
        }
        #else
        if #available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, *) {
            ManagedImageLayout(sizing: sizing, imageSize: imageSize, scale: Double(displayScale), model: observed.model) {
                drawn(playsAnimatedImages: playsAnimatedImages)
            }
        } else {
            let ideal = sizing.size(for: ManagedImageSizing.Proposal(width: nil, height: nil), imageSize: imageSize)
            drawn(playsAnimatedImages: playsAnimatedImages)
                .frame(idealWidth: CGFloat(ideal.width), idealHeight: CGFloat(ideal.height))
                .aspectRatio(CGFloat(ideal.width / ideal.height), contentMode: inputs.scaleMode == .aspectFit ? .fit : .fill)
                .background(alignment: .center) {
                    GeometryReader { proxy in
                        Color.clear
                            .onAppear { placed(proxy.size, sizing: sizing) }
                            .onChangeOfValue(proxy.size) { placed($0, sizing: sizing) }
                    }
                }
        }
        #endif
    }

    /// The phase (an animation's current frame in place of its image), animated on a change,
    /// labelled, and the appearance and inputs reported to the model.
    @ViewBuilder private func drawn(playsAnimatedImages: Bool) -> some View {
        let conditions = AnimationSettings(
            appAllowsAnimation: animatesImages && ImageAnimation.isEnabled, reduceMotion: reducesMotion,
            systemPlaysAnimatedImages: playsAnimatedImages
        ).conditions(isInWindow: observed.isVisible)
        let animation = observed.animation(for: observed.model.phase, conditions: conditions, time: Date())
        Group {
            if let animation {
                TimelineView(.animation(minimumInterval: 1 / Double(animation.refreshRate), paused: !animation.wantsRefreshes)) {
                    context in
                    content(observed.animatedPhase(at: context.date))
                }
            } else {
                content(observed.model.phase)
            }
        }
        .animation(phaseAnimation, value: observed.model.phaseChangeCount)
        .modifier(ImageAccessibility(label: label))
        .onAppear {
            observed.model.apply(inputs)
            observed.isVisible = true
            observed.model.appear()
        }
        .onDisappear {
            observed.isVisible = false
            observed.model.disappear()
        }
        .onChangeOfValue(inputs) { observed.model.apply($0) }
    }

    /// The image's ideal size in points, or `nil` before it is known.
    private var imageSize: ManagedImageSizing.Size? {
        guard let image = observed.model.phase.image else { return nil }
        let scale = max(1, Double(displayScale))
        return ManagedImageSizing.Size(width: Double(image.pixelWidth) / scale, height: Double(image.pixelHeight) / scale)
    }

    /// The model's transition for the last phase change as an animation: `nil` (none) for
    /// `.none` and under Reduce Motion.
    private var phaseAnimation: Animation? {
        let transition = observed.model.phaseTransition.respectingReducedMotion(reducesMotion)
        guard transition.duration > 0 else { return nil }
        return .easeInOut(duration: transition.duration)
    }

    /// The older systems' placement: the size it got, both sides given.
    private func placed(_ size: CGSize, sizing: ManagedImageSizing) {
        let proposal = ManagedImageSizing.Proposal(width: Double(size.width), height: Double(size.height))
        let placedSize = ManagedImageSizing.Size(width: Double(size.width), height: Double(size.height))
        guard let variant = sizing.variant(for: proposal, placedSize: placedSize, scale: Double(displayScale)) else { return }
        observed.model.placed(variant)
    }
}

extension ManagedImage where Content == ManagedImageDefaultContent {
    /// Shows the image of `url` filling the view (`.aspectFill`), a neutral background while it
    /// loads, with a progress indicator, and after a failure.
    ///
    /// - Parameters:
    ///   - url: The image's URL.
    ///   - oid: The key that identifies the image instead of the URL (default `nil`).
    ///   - transition: How an image that had to be loaded appears (default `.fade`).
    ///   - accessibilityLabel: What the picture shows, for VoiceOver (default `nil`: the image
    ///     is decorative, VoiceOver passes over it).
    ///   - manager: The manager (default `ObjectManager.defaultImageManager`).
    public init(
        url: URL?, oid: String? = nil, transition: ImageTransition = .fade, accessibilityLabel: Text? = nil,
        manager: ObjectManager = .defaultImageManager
    ) {
        self.init(url: url, oid: oid, transition: transition, accessibilityLabel: accessibilityLabel, manager: manager) { phase in
            ManagedImageDefaultContent(phase: phase, label: accessibilityLabel)
        }
    }
}

/// What `ManagedImage(url:)` draws for each phase.
public struct ManagedImageDefaultContent: View {
    /// The phase to draw.
    public let phase: ManagedImagePhase
    /// What the picture shows, for VoiceOver; `nil` draws a decorative image.
    public let label: Text?
    @Environment(\.displayScale) private var displayScale

    /// Draws `phase`.
    ///
    /// - Parameters:
    ///   - phase: The phase to draw.
    ///   - label: What the picture shows, for VoiceOver (default `nil`: a decorative image).
    public init(phase: ManagedImagePhase, label: Text? = nil) {
        self.phase = phase
        self.label = label
    }

    /// The image filling the view, or a neutral background, with a progress indicator while loading.
    public var body: some View {
        ZStack {
            if let image = phase.image, let cgImage = image.cgImage {
                labelled(cgImage, orientation: Image.Orientation(image.orientation))
                    .resizable().aspectRatio(contentMode: .fill).clipped()
            } else {
                Color.secondary
            }
            if case .loading(let progress) = phase {
                ProgressView(value: progress?.fractionCompleted)
            }
        }
    }

    private func labelled(_ cgImage: CGImage, orientation: Image.Orientation) -> Image {
        let scale = max(1, displayScale)
        guard let label else { return Image(decorative: cgImage, scale: scale, orientation: orientation) }
        return Image(cgImage, scale: scale, orientation: orientation, label: label)
    }
}

extension Image.Orientation {
    /// The SwiftUI orientation of an EXIF orientation, so a camera photo displays upright.
    init(_ orientation: ImageOrientation) {
        switch orientation {
        case .up: self = .up
        case .upMirrored: self = .upMirrored
        case .down: self = .down
        case .downMirrored: self = .downMirrored
        case .leftMirrored: self = .leftMirrored
        case .right: self = .right
        case .rightMirrored: self = .rightMirrored
        case .left: self = .left
        }
    }
}

/// A label makes the view one accessibility element with the image trait; without one, the
/// content speaks for itself.
private struct ImageAccessibility: ViewModifier {
    let label: Text?

    func body(content: Content) -> some View {
        if let label {
            content.accessibilityElement(children: .ignore).accessibilityLabel(label).accessibilityAddTraits(.isImage)
        } else {
            content
        }
    }
}

/// Reads `accessibilityPlayAnimatedImages` (iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1),
/// which an older system's `ManagedImage` cannot name in a property of its own.
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
private struct AnimatedImagesSettingReader<Content: View>: View {
    @Environment(\.accessibilityPlayAnimatedImages) private var playsAnimatedImages
    let content: (Bool) -> Content

    var body: some View { content(playsAnimatedImages) }
}

extension View {
    /// `onChange(of:)` with the new value, in the form each system has without a deprecation:
    /// the two-value action from iOS 17, macOS 14, tvOS 17, watchOS 10 and on visionOS, the
    /// one-value form before.
    @ViewBuilder func onChangeOfValue<V: Equatable>(_ value: V, perform action: @escaping (V) -> Void) -> some View {
        #if os(visionOS)
        onChange(of: value) { _, newValue in action(newValue) }
        #else
        if #available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *) {
            onChange(of: value) { _, newValue in action(newValue) }
        } else {
            onChange(of: value, perform: action)
        }
        #endif
    }
}

/// Makes the platform-neutral model observable by SwiftUI (each phase change is announced), and
/// keeps the view's playback of an animated image.
@MainActor
final class ObservedModel: ObservableObject {
    let model: ManagedImageModel
    /// The view is on screen (between `onAppear` and `onDisappear`); a change renders the view
    /// again, so that an animation starts or stops.
    var isVisible = false {
        didSet { if isVisible != oldValue { objectWillChange.send() } }
    }
    /// The playback of the animated image shown, if any.
    private var playback: AnimationPlayback<CGImage>?
    /// The image it plays.
    private var playing: DecodedImage?
    private var origin = DataOrigin.memory

    init(_ model: ManagedImageModel) {
        self.model = model
        model.onChange = { [weak self] in self?.objectWillChange.send() }
    }

    /// The playback of `phase`'s image when it is animated (started from its first frame when it
    /// is new), under `conditions` now; `nil` for a still image or no image.
    func animation(for phase: ManagedImagePhase, conditions: AnimationPlayhead.Conditions, time: Date) -> AnimationPlayback<CGImage>? {
        guard case .success(let image, let origin) = phase, let info = image.animation, let frames = image.animatedFrames,
            let first = image.cgImage
        else {
            playback = nil
            playing = nil
            return nil
        }
        self.origin = origin
        let now = time.timeIntervalSinceReferenceDate
        if var current = playback, current.buffer === frames.buffer {
            _ = current.update(conditions, at: now)
            playback = current
        } else {
            playback = AnimationPlayback(animation: info, buffer: frames.buffer, firstFrame: first, conditions: conditions, time: now)
            playing = image
        }
        return playback
    }

    /// The phase to draw at a refresh of the timeline: the frame due, as the image.
    func animatedPhase(at date: Date) -> ManagedImagePhase {
        guard var current = playback, let playing else { return model.phase }
        let frame = current.refresh(at: date.timeIntervalSinceReferenceDate)
        playback = current
        guard current.displayedIndex != 0 else { return .success(playing, origin) }
        // Frames are decoded upright (ImageIO applies the orientation), so they carry none.
        return .success(DecodedImage(cgImage: frame), origin)
    }
}

/// The layout container of a ``ManagedImage``: sizes it as ``ManagedImageSizing`` says for the
/// parent's proposal, proposes that size to the content, and reports the variant for the size and
/// proposal it is placed with to the model (after the layout pass, and only when it changes).
@available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *)
private struct ManagedImageLayout: Layout {
    let sizing: ManagedImageSizing
    let imageSize: ManagedImageSizing.Size?
    let scale: Double
    let model: ManagedImageModel

    /// The variant last reported, so that a layout pass that changes nothing reports nothing.
    struct Cache {
        var reported: ManagedImageSizing.Variant?
    }

    func makeCache(subviews: Subviews) -> Cache { Cache() }

    func sizeThatFits(proposal: ProposedViewSize, subviews: Subviews, cache: inout Cache) -> CGSize {
        let size = sizing.size(for: Self.proposal(proposal), imageSize: imageSize)
        return CGSize(width: size.width, height: size.height)
    }

    func placeSubviews(in bounds: CGRect, proposal: ProposedViewSize, subviews: Subviews, cache: inout Cache) {
        for subview in subviews {
            subview.place(at: CGPoint(x: bounds.midX, y: bounds.midY), anchor: .center, proposal: ProposedViewSize(bounds.size))
        }
        let placed = ManagedImageSizing.Size(width: Double(bounds.width), height: Double(bounds.height))
        guard let variant = sizing.variant(for: Self.proposal(proposal), placedSize: placed, scale: scale),
            variant != cache.reported
        else { return }
        cache.reported = variant
        // Loading may change the phase, which must not happen inside the layout pass.
        Task { @MainActor [model] in model.placed(variant) }
    }

    private static func proposal(_ proposal: ProposedViewSize) -> ManagedImageSizing.Proposal {
        ManagedImageSizing.Proposal(width: proposal.width.map(Double.init), height: proposal.height.map(Double.init))
    }
}
#endif

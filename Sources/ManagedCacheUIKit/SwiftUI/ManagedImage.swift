#if canImport(SwiftUI) && canImport(UIKit)
import Combine
import ManagedCache
import SwiftUI
import UIKit

/// A SwiftUI view that loads, shares and shows an image: `ManagedImageView` for SwiftUI.
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
/// It loads once it is on screen and laid out, at its laid-out pixel size (unless you give a
/// `format`), shares the one decoded image with every other view and user of the key, shows a
/// memory hit without a placeholder frame, keeps the old variant while a new size loads, fades in
/// an image that had to be loaded (never a memory hit; not under Reduce Motion), and detaches when
/// it leaves the screen. All of that is ``ManagedImageModel``'s (tested on Linux); this view only
/// reports its size and appearance and draws the phase, animating the change the model asks for.
///
/// Every input takes effect when the parent passes a new one, also in a row that SwiftUI reuses:
/// another `url` or `oid` clears the old image and loads the new one; another `format`,
/// `scaleMode`, `priority` or `manager` keeps the image on screen until the new answer replaces
/// it; another `transition` applies to the next image. The model is made once per view identity,
/// never again on the parent's later renders.
public struct ManagedImage<Content: View>: View {
    private let inputs: ManagedImageInputs
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
    ///   - format: A fixed format instead of the laid-out size (default `nil`).
    ///   - scaleMode: How the image fills the view, for the laid-out format (default `.aspectFill`).
    ///   - transition: How an image that had to be loaded appears (default `.fade`, a 0.25 s
    ///     cross-fade; `.none` shows it at once). A memory hit always appears at once.
    ///   - manager: The manager (default `ObjectManager.defaultImageManager`).
    ///   - content: Draws a ``ManagedImagePhase``; the change from one phase to the next is
    ///     animated as the model says (views inserted or removed by `content` fade).
    public init(
        url: URL?, oid: String? = nil, priority: LoadPriority = .normal, format: ImageCacheFormat? = nil,
        scaleMode: ImageScaleMode = .aspectFill, transition: ImageTransition = .fade,
        manager: ObjectManager = .defaultImageManager, @ViewBuilder content: @escaping (ManagedImagePhase) -> Content
    ) {
        let inputs = ManagedImageInputs(
            url: url, oid: oid, priority: priority, format: format, scaleMode: scaleMode, transition: transition, manager: manager)
        self.inputs = inputs
        self.content = content
        // An autoclosure: SwiftUI evaluates it once per view identity, not on every parent render.
        _observed = StateObject(wrappedValue: ObservedModel(ManagedImageModel(inputs: inputs)))
    }

    /// Reads the laid-out size, reports it and the appearance to the model, and draws the phase.
    public var body: some View {
        GeometryReader { proxy in
            content(observed.model.phase)
                .animation(phaseAnimation, value: observed.model.phaseChangeCount)
                .frame(width: proxy.size.width, height: proxy.size.height)
                .onAppear {
                    observed.model.apply(inputs)
                    report(proxy.size)
                    observed.model.appear()
                }
                .onDisappear { observed.model.disappear() }
                .onChange(of: proxy.size) { size in report(size) }
                .onChange(of: inputs) { inputs in observed.model.apply(inputs) }
        }
    }

    /// The model's transition for the last phase change as an animation: `nil` (none) for
    /// `.none` and under Reduce Motion.
    private var phaseAnimation: Animation? {
        let transition = observed.model.phaseTransition.respectingReducedMotion(reducesMotion)
        guard transition.duration > 0 else { return nil }
        return .easeInOut(duration: transition.duration)
    }

    private func report(_ size: CGSize) {
        observed.model.layoutChanged(width: Double(size.width), height: Double(size.height), scale: Double(displayScale))
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
    ///   - manager: The manager (default `ObjectManager.defaultImageManager`).
    public init(
        url: URL?, oid: String? = nil, transition: ImageTransition = .fade, manager: ObjectManager = .defaultImageManager
    ) {
        self.init(url: url, oid: oid, transition: transition, manager: manager) { phase in
            ManagedImageDefaultContent(phase: phase)
        }
    }
}

/// What `ManagedImage(url:)` draws for each phase.
public struct ManagedImageDefaultContent: View {
    /// The phase to draw.
    public let phase: ManagedImagePhase

    /// The image filling the view, or a neutral background, with a progress indicator while loading.
    public var body: some View {
        ZStack {
            if let image = phase.image?.uiImage() {
                Image(uiImage: image).resizable().aspectRatio(contentMode: .fill).clipped()
            } else {
                Color.secondary
            }
            if case .loading(let progress) = phase {
                ProgressView(value: progress?.fractionCompleted)
            }
        }
    }
}

/// Makes the platform-neutral model observable by SwiftUI: each phase change is announced.
@MainActor
final class ObservedModel: ObservableObject {
    let model: ManagedImageModel

    init(_ model: ManagedImageModel) {
        self.model = model
        model.onChange = { [weak self] in self?.objectWillChange.send() }
    }
}
#endif

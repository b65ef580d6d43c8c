import Foundation
import ManagedCache

/// Everything a ``ManagedImage`` is given by its parent, as a value the SwiftUI view compares
/// between renders (`onChange(of:)`) and hands to its ``ManagedImageModel`` when it changes. The
/// view's model is made once per view identity; what a change of these inputs means for it
/// (load another image, another variant of the same one, or nothing but a new transition) is
/// ``change(to:)``'s decision, platform-neutral and tested on Linux.
struct ManagedImageInputs: Equatable, Sendable {
    /// What a change of inputs asks the model to do, from the least to the most work. When
    /// several inputs change at once, the most work wins.
    enum Change: Int, Comparable, Sendable, CaseIterable {
        /// Nothing changed.
        case none
        /// Only the transition: it applies to the next image that arrives; nothing reloads.
        case transition
        /// The same image with another priority (or another URL with the same `oid`): the model
        /// is managed again with the new request, and keeps the image on screen.
        case request
        /// Another variant of the same image (`format` or `scaleMode`): the image on screen stays
        /// until the new variant replaces it, at once.
        case variant
        /// Another manager: the model leaves the old one and is managed by the new one; the image
        /// on screen (the same URL's) stays until the new manager delivers it.
        case manager
        /// Another image (`url` or `oid`, so another data key): the old image goes at once
        /// (a reused row must never show the previous row's picture) and the new one loads.
        case image

        static func < (lhs: Change, rhs: Change) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    var url: URL?
    var oid: String?
    var priority: LoadPriority
    var format: ImageCacheFormat?
    var scaleMode: ImageScaleMode
    var transition: ImageTransition
    var manager: ObjectManager

    /// The request the inputs describe; `nil` without a URL.
    var request: ObjectRequest? { url.map { ObjectRequest(url: $0, oid: oid, priority: priority) } }

    /// What the model must do when its inputs change from these to `new`.
    ///
    /// - Parameter new: The inputs of the latest render.
    /// - Returns: The most work any changed input asks for.
    func change(to new: ManagedImageInputs) -> Change {
        if request?.dataKey != new.request?.dataKey { return .image }
        if manager !== new.manager { return .manager }
        // The scale mode shapes only the format made from the layout, not a format of the app's.
        let scaleModeMatters = format == nil || new.format == nil
        if format?.variantIdentifier != new.format?.variantIdentifier || (scaleModeMatters && scaleMode != new.scaleMode) {
            return .variant
        }
        if request != new.request { return .request }
        if transition != new.transition { return .transition }
        return .none
    }

    static func == (lhs: ManagedImageInputs, rhs: ManagedImageInputs) -> Bool {
        lhs.change(to: rhs) == .none
    }
}

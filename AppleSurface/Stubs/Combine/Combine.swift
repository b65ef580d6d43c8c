// Stand-in for the part of Apple's Combine that SwiftUI's `ObservableObject` needs.
// Sources: https://developer.apple.com/documentation/combine/observableobject,
//          https://developer.apple.com/documentation/combine/observableobjectpublisher.
// Apple: `protocol ObservableObject : AnyObject` with `associatedtype ObjectWillChangePublisher :
// Publisher = ObservableObjectPublisher` and `var objectWillChange: ObjectWillChangePublisher`;
// `final class ObservableObjectPublisher` with `func send()`. Not declared Sendable here (Apple's
// annotation could not be confirmed: the stricter choice). Bodies are placeholders.

/// Apple: `final class ObservableObjectPublisher` — publishes before an object changes.
public final class ObservableObjectPublisher {
    /// Apple: `init()`.
    public init() {}
    /// Apple: `func send()` — tells subscribers the object is about to change.
    public func send() {}
}

/// Apple: `protocol ObservableObject : AnyObject`.
public protocol ObservableObject: AnyObject {
    /// Apple: `associatedtype ObjectWillChangePublisher : Publisher = ObservableObjectPublisher`.
    associatedtype ObjectWillChangePublisher = ObservableObjectPublisher
    /// Apple: `var objectWillChange: Self.ObjectWillChangePublisher { get }`.
    var objectWillChange: ObjectWillChangePublisher { get }
}

extension ObservableObject where ObjectWillChangePublisher == ObservableObjectPublisher {
    /// Apple: the default, synthesized publisher.
    public var objectWillChange: ObservableObjectPublisher { ObservableObjectPublisher() }
}

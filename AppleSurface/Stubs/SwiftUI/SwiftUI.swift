// Stand-in for the part of Apple's SwiftUI that ManagedCacheUIKit's SwiftUI view and the sample
// app use. Every declaration quotes Apple's (developer.apple.com/documentation/swiftui/<symbol>).
//
// Isolation: `View` is `@MainActor @preconcurrency` as declared since the iOS 18 SDK (Xcode 16);
// before it, only `body` was `@MainActor`. The stricter, current declaration is modelled, so
// everything conforming to `View` is main-actor isolated. `StateObject` is `@MainActor
// @preconcurrency` likewise. Bodies are placeholders (`self`, or `fatalError`): nothing here runs.
@_exported import Combine
import UIKit

/// Apple: `@MainActor @preconcurrency protocol View` (swiftui/view).
@MainActor @preconcurrency
public protocol View {
    /// Apple: `associatedtype Body : View`.
    associatedtype Body: View
    /// Apple: `@ViewBuilder @MainActor @preconcurrency var body: Self.Body { get }`.
    @ViewBuilder var body: Body { get }
}

/// Apple: `extension Never : View`.
extension Never: View {
    public typealias Body = Never
    public var body: Never { fatalError("stand-in") }
}

/// Apple: `@resultBuilder struct ViewBuilder` (swiftui/viewbuilder).
@resultBuilder
public struct ViewBuilder {
    /// Apple: `static func buildBlock() -> EmptyView`.
    public static func buildBlock() -> EmptyView { fatalError("stand-in") }
    /// Apple: `static func buildBlock<Content>(_ content: Content) -> Content where Content : View`.
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
    /// Apple: `static func buildBlock<each Content>(_ content: repeat each Content) -> TupleView<(repeat each Content)> where repeat each Content : View`.
    public static func buildBlock<each Content: View>(_ content: repeat each Content) -> TupleView<(repeat each Content)> {
        fatalError("stand-in")
    }
    /// Apple: `static func buildIf<Content>(_ content: Content?) -> Content? where Content : View`.
    public static func buildIf<Content: View>(_ content: Content?) -> Content? { content }
    /// Apple: `static func buildEither<TrueContent, FalseContent>(first: TrueContent) -> _ConditionalContent<TrueContent, FalseContent>`.
    public static func buildEither<TrueContent: View, FalseContent: View>(first: TrueContent)
        -> _ConditionalContent<TrueContent, FalseContent>
    { fatalError("stand-in") }
    /// Apple: `static func buildEither<TrueContent, FalseContent>(second: FalseContent) -> _ConditionalContent<TrueContent, FalseContent>`.
    public static func buildEither<TrueContent: View, FalseContent: View>(second: FalseContent)
        -> _ConditionalContent<TrueContent, FalseContent>
    { fatalError("stand-in") }
}

/// Apple: `struct EmptyView : View`.
public struct EmptyView: View {
    public init() {}
    public var body: Never { fatalError("stand-in") }
}

/// Apple: `struct TupleView<T> : View`.
public struct TupleView<T>: View {
    public var body: Never { fatalError("stand-in") }
}

/// Apple: `struct _ConditionalContent<TrueContent, FalseContent> : View where TrueContent : View, FalseContent : View`.
public struct _ConditionalContent<TrueContent: View, FalseContent: View>: View {
    public var body: Never { fatalError("stand-in") }
}

/// Apple: `extension Optional : View where Wrapped : View`.
extension Optional: View where Wrapped: View {
    public var body: Never { fatalError("stand-in") }
}

/// Apple: `enum ContentMode` (`fit`, `fill`).
public enum ContentMode: Hashable, CaseIterable, Sendable {
    case fit, fill
}

/// Apple: `struct Alignment : Equatable` with `static let center`.
public struct Alignment: Equatable, Sendable {
    /// Apple: `static let center: Alignment`.
    public static let center = Alignment()
}

/// Apple: `struct Image : Equatable, Sendable` and `View` (swiftui/image).
public struct Image: View, Equatable, Sendable {
    /// Apple: `init(uiImage: UIImage)` (iOS 13+).
    public init(uiImage: UIImage) {}
    /// Apple: `init(systemName: String)`.
    public init(systemName: String) {}
    /// Apple: `func resizable(capInsets: EdgeInsets = EdgeInsets(), resizingMode: Image.ResizingMode = .stretch) -> Image` (simplified: no arguments).
    public func resizable() -> Image { self }
    public var body: Never { fatalError("stand-in") }
}

/// Apple: `struct Color : Hashable, CustomStringConvertible, Sendable` and `View`.
public struct Color: View, Hashable, Sendable {
    /// Apple: `static let clear: Color`.
    public static let clear = Color()
    /// Apple: `static let secondary: Color`.
    public static let secondary = Color()
    public var body: Never { fatalError("stand-in") }
}

/// Apple: `struct ProgressView<Label, CurrentValueLabel> : View where Label : View, CurrentValueLabel : View` (iOS 14+).
public struct ProgressView<Label: View, CurrentValueLabel: View>: View {
    public var body: Never { fatalError("stand-in") }
}

extension ProgressView where Label == EmptyView, CurrentValueLabel == EmptyView {
    /// Apple: `init()` — an indeterminate progress view.
    public init() {}
    /// Apple: `init<V>(value: V?, total: V = 1.0) where V : BinaryFloatingPoint`.
    public init<V: BinaryFloatingPoint>(value: V?, total: V = 1.0) {}
}

/// Apple: `@frozen struct ZStack<Content> : View where Content : View`.
public struct ZStack<Content: View>: View {
    /// Apple: `init(alignment: Alignment = .center, @ViewBuilder content: () -> Content)`.
    public init(alignment: Alignment = .center, @ViewBuilder content: () -> Content) {}
    public var body: Never { fatalError("stand-in") }
}

/// Apple: `struct GeometryProxy` (swiftui/geometryproxy): `var size: CGSize { get }`.
public struct GeometryProxy {
    /// Apple: `var size: CGSize { get }`.
    public var size: CGSize { .zero }
}

/// Apple: `@frozen struct GeometryReader<Content> : View where Content : View`.
public struct GeometryReader<Content: View>: View {
    /// Apple: `init(@ViewBuilder content: @escaping (GeometryProxy) -> Content)`.
    public init(@ViewBuilder content: @escaping (GeometryProxy) -> Content) {}
    public var body: Never { fatalError("stand-in") }
}

/// Apple: `protocol DynamicProperty`.
public protocol DynamicProperty {}

/// Apple: `@MainActor @preconcurrency @frozen @propertyWrapper struct StateObject<ObjectType> : DynamicProperty where ObjectType : ObservableObject` (iOS 14+).
@MainActor @preconcurrency @propertyWrapper
public struct StateObject<ObjectType: ObservableObject>: DynamicProperty {
    private let thunk: () -> ObjectType
    /// Apple: `init(wrappedValue thunk: @autoclosure @escaping () -> ObjectType)`.
    public init(wrappedValue thunk: @autoclosure @escaping () -> ObjectType) { self.thunk = thunk }
    /// Apple: `@MainActor var wrappedValue: ObjectType { get }`.
    public var wrappedValue: ObjectType { thunk() }
}

/// Apple: `struct EnvironmentValues` (swiftui/environmentvalues).
public struct EnvironmentValues {
    /// Apple: `var displayScale: CGFloat { get set }`.
    public var displayScale: CGFloat = 1
    /// Apple: `var accessibilityReduceMotion: Bool { get }` (iOS 13+).
    public var accessibilityReduceMotion: Bool { false }
}

/// Apple: `@frozen struct Animation` (swiftui/animation).
public struct Animation: Equatable, Sendable {
    /// Apple: `static func easeInOut(duration: TimeInterval) -> Animation`.
    public static func easeInOut(duration: TimeInterval) -> Animation { Animation() }
}

/// Apple: `@frozen @propertyWrapper struct Environment<Value> : DynamicProperty`.
@propertyWrapper
public struct Environment<Value>: DynamicProperty {
    /// Apple: `init(_ keyPath: KeyPath<EnvironmentValues, Value>)`.
    public init(_ keyPath: KeyPath<EnvironmentValues, Value>) {}
    /// Apple: `var wrappedValue: Value { get }`.
    public var wrappedValue: Value { fatalError("stand-in") }
}

extension View {
    /// Apple: `nonisolated func animation<V>(_ animation: Animation?, value: V) -> some View where V : Equatable` (iOS 15+).
    nonisolated public func animation<V: Equatable>(_ animation: Animation?, value: V) -> some View { self }
    /// Apple: `func frame(width: CGFloat? = nil, height: CGFloat? = nil, alignment: Alignment = .center) -> some View`.
    public func frame(width: CGFloat? = nil, height: CGFloat? = nil, alignment: Alignment = .center) -> some View { self }
    /// Apple: `func onAppear(perform action: (() -> Void)? = nil) -> some View`.
    public func onAppear(perform action: (() -> Void)? = nil) -> some View { self }
    /// Apple: `func onDisappear(perform action: (() -> Void)? = nil) -> some View`.
    public func onDisappear(perform action: (() -> Void)? = nil) -> some View { self }
    /// Apple: `func onChange<V>(of value: V, perform action: @escaping (_ newValue: V) -> Void) -> some View where V : Equatable` (iOS 14–16; deprecated in 17, still available).
    public func onChange<V: Equatable>(of value: V, perform action: @escaping (_ newValue: V) -> Void) -> some View { self }
    /// Apple: `func aspectRatio(_ aspectRatio: CGFloat? = nil, contentMode: ContentMode) -> some View`.
    public func aspectRatio(_ aspectRatio: CGFloat? = nil, contentMode: ContentMode) -> some View { self }
    /// Apple: `func clipped(antialiased: Bool = false) -> some View`.
    public func clipped(antialiased: Bool = false) -> some View { self }
}

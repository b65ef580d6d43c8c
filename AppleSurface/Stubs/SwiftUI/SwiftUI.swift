// Stand-in for the part of Apple's SwiftUI that ManagedCacheUIKit's SwiftUI view and the sample
// app use. Every declaration quotes Apple's (developer.apple.com/documentation/swiftui/<symbol>).
//
// Isolation: `View` is `@MainActor @preconcurrency` as declared since the iOS 18 SDK (Xcode 16);
// before it, only `body` was `@MainActor`. The stricter, current declaration is modelled, so
// everything conforming to `View` is main-actor isolated. `StateObject` is `@MainActor
// @preconcurrency` likewise. Bodies are placeholders (`self`, or `fatalError`): nothing here runs.
//
// Platforms: one stand-in for all of them. `Image(uiImage:)` exists where UIKit does,
// `Image(nsImage:)` where AppKit does (macOS; not on Mac Catalyst); the rest is on every platform
// the package declares, with the first version Apple documents (checked against the declared
// minimums by the code that uses it, under `#available`).
@_exported import Combine
import CoreGraphics
import Foundation

#if canImport(UIKit)
import UIKit
#endif
#if canImport(AppKit) && !targetEnvironment(macCatalyst)
import AppKit
#endif

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
    /// Apple: `static func buildLimitedAvailability<Content>(_ content: Content) -> AnyView where Content : View`
    /// (what an `if #available` branch builds).
    public static func buildLimitedAvailability<Content: View>(_ content: Content) -> AnyView { fatalError("stand-in") }
}

/// Apple: `@frozen struct AnyView : View` (swiftui/anyview).
public struct AnyView: View {
    /// Apple: `init<V>(_ view: V) where V : View`.
    public init<V: View>(_ view: V) {}
    public var body: Never { fatalError("stand-in") }
}

/// Apple: `@frozen struct Group<Content>`, a `View` when `Content : View` (swiftui/group).
public struct Group<Content: View>: View {
    /// Apple: `init(@ViewBuilder content: () -> Content)`.
    public init(@ViewBuilder content: () -> Content) {}
    public var body: Never { fatalError("stand-in") }
}

/// Apple: `@frozen struct Text : Equatable, Sendable` and `View` (swiftui/text).
public struct Text: View, Equatable, Sendable {
    /// Apple: `init<S>(_ content: S) where S : StringProtocol`.
    public init<S: StringProtocol>(_ content: S) {}
    /// Apple: `init(verbatim content: String)`.
    public init(verbatim content: String) {}
    public var body: Never { fatalError("stand-in") }
}

/// Apple: `@MainActor @preconcurrency protocol ViewModifier` (swiftui/viewmodifier).
@MainActor @preconcurrency
public protocol ViewModifier {
    /// Apple: `associatedtype Body : View`.
    associatedtype Body: View
    /// Apple: `typealias Content = _ViewModifier_Content<Self>`.
    typealias Content = _ViewModifier_Content<Self>
    /// Apple: `@ViewBuilder @MainActor @preconcurrency func body(content: Self.Content) -> Self.Body`.
    @ViewBuilder func body(content: Content) -> Body
}

/// Apple: `struct _ViewModifier_Content<Modifier> : View where Modifier : ViewModifier`.
public struct _ViewModifier_Content<Modifier: ViewModifier>: View {
    public var body: Never { fatalError("stand-in") }
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
    /// Apple: `enum Orientation : UInt8, CaseIterable, Hashable` (swiftui/image/orientation).
    public enum Orientation: UInt8, CaseIterable, Hashable, Sendable {
        case up, upMirrored, down, downMirrored, left, leftMirrored, right, rightMirrored
    }
    #if canImport(UIKit)
    /// Apple: `init(uiImage: UIImage)` (iOS 13+).
    public init(uiImage: UIImage) {}
    #endif
    #if canImport(AppKit) && !targetEnvironment(macCatalyst)
    /// Apple: `init(nsImage: NSImage)` (macOS 10.15+).
    public init(nsImage: NSImage) {}
    #endif
    /// Apple: `init(_ cgImage: CGImage, scale: CGFloat, orientation: Image.Orientation = .up, label: Text)`
    /// (iOS 13, macOS 10.15, tvOS 13, watchOS 6, visionOS 1) — "SwiftUI uses the label for accessibility".
    public init(_ cgImage: CGImage, scale: CGFloat, orientation: Image.Orientation = .up, label: Text) {}
    /// Apple: `init(decorative cgImage: CGImage, scale: CGFloat, orientation: Image.Orientation = .up)`
    /// — "SwiftUI ignores this image for accessibility purposes".
    public init(decorative cgImage: CGImage, scale: CGFloat, orientation: Image.Orientation = .up) {}
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

/// Apple: `struct Axis.Set : OptionSet` (within `enum Axis`).
public enum Axis: Hashable, Sendable {
    case horizontal, vertical
    /// Apple: `@frozen struct Set : OptionSet`.
    public struct Set: OptionSet, Sendable {
        public let rawValue: Int8
        public init(rawValue: Int8) { self.rawValue = rawValue }
        /// Apple: `static let horizontal: Axis.Set`.
        public static let horizontal = Set(rawValue: 1)
        /// Apple: `static let vertical: Axis.Set`.
        public static let vertical = Set(rawValue: 2)
    }
}

/// Apple: `struct ScrollView<Content> : View where Content : View`.
public struct ScrollView<Content: View>: View {
    /// Apple: `init(_ axes: Axis.Set = .vertical, showsIndicators: Bool = true, @ViewBuilder content: () -> Content)`.
    public init(_ axes: Axis.Set = .vertical, showsIndicators: Bool = true, @ViewBuilder content: () -> Content) {}
    public var body: Never { fatalError("stand-in") }
}

/// Apple: `struct HorizontalAlignment : Equatable` with `static let center`.
public struct HorizontalAlignment: Equatable, Sendable {
    /// Apple: `static let center: HorizontalAlignment`.
    public static let center = HorizontalAlignment()
}

/// Apple: `struct LazyVStack<Content> : View where Content : View` (iOS 14, macOS 11, tvOS 14, watchOS 7).
public struct LazyVStack<Content: View>: View {
    /// Apple: `init(alignment: HorizontalAlignment = .center, spacing: CGFloat? = nil, pinnedViews: PinnedScrollableViews = .init(), @ViewBuilder content: () -> Content)` (without `pinnedViews`).
    public init(alignment: HorizontalAlignment = .center, spacing: CGFloat? = nil, @ViewBuilder content: () -> Content) {}
    public var body: Never { fatalError("stand-in") }
}

/// Apple: `struct ForEach<Data, ID, Content> where Data : RandomAccessCollection, ID : Hashable`,
/// a `View` when `Content : View`.
public struct ForEach<Data: RandomAccessCollection, ID: Hashable, Content: View>: View {
    /// Apple: `init(_ data: Data, id: KeyPath<Data.Element, ID>, @ViewBuilder content: @escaping (Data.Element) -> Content)`.
    public init(_ data: Data, id: KeyPath<Data.Element, ID>, @ViewBuilder content: @escaping (Data.Element) -> Content) {}
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

/// Apple: `struct UnitPoint : Hashable` (swiftui/unitpoint).
public struct UnitPoint: Hashable, Sendable {
    /// Apple: `init(x: CGFloat, y: CGFloat)`.
    public init(x: CGFloat, y: CGFloat) {}
    /// Apple: `static let center: UnitPoint`.
    public static let center = UnitPoint(x: 0.5, y: 0.5)
    /// Apple: `static let topLeading: UnitPoint`.
    public static let topLeading = UnitPoint(x: 0, y: 0)
}

// MARK: - Layout (iOS 16, macOS 13, tvOS 16, watchOS 9, visionOS 1)

/// Apple: `protocol VectorArithmetic : AdditiveArithmetic` (swiftui/vectorarithmetic).
public protocol VectorArithmetic: AdditiveArithmetic {
    /// Apple: `mutating func scale(by rhs: Double)`.
    mutating func scale(by rhs: Double)
    /// Apple: `var magnitudeSquared: Double { get }`.
    var magnitudeSquared: Double { get }
}

/// Apple: `@frozen struct EmptyAnimatableData : VectorArithmetic`.
public struct EmptyAnimatableData: VectorArithmetic, Sendable {
    public init() {}
    public static var zero: EmptyAnimatableData { EmptyAnimatableData() }
    public static func + (lhs: EmptyAnimatableData, rhs: EmptyAnimatableData) -> EmptyAnimatableData { lhs }
    public static func - (lhs: EmptyAnimatableData, rhs: EmptyAnimatableData) -> EmptyAnimatableData { lhs }
    public mutating func scale(by rhs: Double) {}
    public var magnitudeSquared: Double { 0 }
}

/// Apple: `protocol Animatable` (swiftui/animatable): `associatedtype AnimatableData :
/// VectorArithmetic` and `var animatableData: Self.AnimatableData { get set }`, with a default
/// of `EmptyAnimatableData`.
public protocol Animatable {
    associatedtype AnimatableData: VectorArithmetic
    var animatableData: AnimatableData { get set }
}

extension Animatable where AnimatableData == EmptyAnimatableData {
    /// Apple: the default, no animatable data.
    public var animatableData: EmptyAnimatableData {
        get { EmptyAnimatableData() }
        set {}
    }
}

/// Apple: `@frozen struct ProposedViewSize : Equatable` (iOS 16+): `nil` is an unspecified side.
public struct ProposedViewSize: Equatable, Sendable {
    /// Apple: `var width: CGFloat?`.
    public var width: CGFloat?
    /// Apple: `var height: CGFloat?`.
    public var height: CGFloat?
    /// Apple: `init(width: CGFloat?, height: CGFloat?)`.
    public init(width: CGFloat?, height: CGFloat?) {
        self.width = width
        self.height = height
    }
    /// Apple: `init(_ size: CGSize)`.
    public init(_ size: CGSize) { self.init(width: size.width, height: size.height) }
    /// Apple: `static let unspecified: ProposedViewSize`.
    public static let unspecified = ProposedViewSize(width: nil, height: nil)
    /// Apple: `func replacingUnspecifiedDimensions(by size: CGSize = CGSize(width: 10, height: 10)) -> CGSize`.
    public func replacingUnspecifiedDimensions(by size: CGSize = CGSize(width: 10, height: 10)) -> CGSize {
        CGSize(width: width ?? size.width, height: height ?? size.height)
    }
}

/// Apple: `struct LayoutSubview : Equatable` (iOS 16+). Not declared Sendable by Apple.
public struct LayoutSubview: Equatable {
    /// Apple: `func sizeThatFits(_ proposal: ProposedViewSize) -> CGSize`.
    public func sizeThatFits(_ proposal: ProposedViewSize) -> CGSize { .zero }
    /// Apple: `func place(at position: CGPoint, anchor: UnitPoint = .topLeading, proposal: ProposedViewSize)`.
    public func place(at position: CGPoint, anchor: UnitPoint = .topLeading, proposal: ProposedViewSize) {}
}

/// Apple: `struct LayoutSubviews : Equatable, RandomAccessCollection, Sendable` (iOS 16+).
public struct LayoutSubviews: Equatable, RandomAccessCollection, Sendable {
    public typealias Element = LayoutSubview
    public typealias Index = Int
    public var startIndex: Int { 0 }
    public var endIndex: Int { 0 }
    public subscript(index: Int) -> LayoutSubview { fatalError("stand-in") }
}

/// Apple: `@preconcurrency protocol Layout : Sendable, Animatable` (iOS 16, macOS 13, tvOS 16,
/// watchOS 9, visionOS 1). Not main-actor isolated: its methods are nonisolated requirements.
@preconcurrency
public protocol Layout: Animatable, Sendable {
    /// Apple: `associatedtype Cache = Void`.
    associatedtype Cache = Void
    /// Apple: `typealias Subviews = LayoutSubviews`.
    typealias Subviews = LayoutSubviews
    /// Apple: `func makeCache(subviews: Self.Subviews) -> Self.Cache`.
    func makeCache(subviews: Subviews) -> Cache
    /// Apple: `func sizeThatFits(proposal: ProposedViewSize, subviews: Self.Subviews, cache: inout Self.Cache) -> CGSize`.
    func sizeThatFits(proposal: ProposedViewSize, subviews: Subviews, cache: inout Cache) -> CGSize
    /// Apple: `func placeSubviews(in bounds: CGRect, proposal: ProposedViewSize, subviews: Self.Subviews, cache: inout Self.Cache)`.
    func placeSubviews(in bounds: CGRect, proposal: ProposedViewSize, subviews: Subviews, cache: inout Cache)
}

extension Layout where Cache == () {
    /// Apple: the default cache, none.
    public func makeCache(subviews: Subviews) -> Cache { () }
}

extension Layout {
    /// Apple: `@MainActor @preconcurrency func callAsFunction<V>(@ViewBuilder _ content: () -> V) -> some View where V : View`.
    @MainActor @preconcurrency
    public func callAsFunction<V: View>(@ViewBuilder _ content: () -> V) -> some View { EmptyView() }
}

// MARK: - TimelineView (iOS 15, macOS 12, tvOS 15, watchOS 8, visionOS 1)

/// Apple: `protocol TimelineSchedule` (swiftui/timelineschedule).
public protocol TimelineSchedule {}

/// Apple: `struct AnimationTimelineSchedule : TimelineSchedule, Sendable`.
public struct AnimationTimelineSchedule: TimelineSchedule, Sendable {
    /// Apple: `init(minimumInterval: Double? = nil, paused: Bool = false)`.
    public init(minimumInterval: Double? = nil, paused: Bool = false) {}
}

extension TimelineSchedule where Self == AnimationTimelineSchedule {
    /// Apple: `static func animation(minimumInterval: Double? = nil, paused: Bool = false) -> AnimationTimelineSchedule`.
    public static func animation(minimumInterval: Double? = nil, paused: Bool = false) -> AnimationTimelineSchedule {
        AnimationTimelineSchedule(minimumInterval: minimumInterval, paused: paused)
    }
}

/// Apple: `struct EveryMinuteTimelineSchedule : TimelineSchedule, Sendable`.
public struct EveryMinuteTimelineSchedule: TimelineSchedule, Sendable {
    public init() {}
}

/// Apple: `typealias TimelineViewDefaultContext = TimelineView<EveryMinuteTimelineSchedule, Never>.Context`
/// — one context type for every timeline view, so that the content's type can be inferred.
public typealias TimelineViewDefaultContext = TimelineView<EveryMinuteTimelineSchedule, Never>.Context

/// Apple: `struct TimelineView<Schedule, Content> where Schedule : TimelineSchedule`, a `View`
/// when `Content : View` (swiftui/timelineview).
public struct TimelineView<Schedule: TimelineSchedule, Content: View>: View {
    /// Apple: `struct Context` — `let date: Date`, the date of the update.
    public struct Context {
        /// Apple: `let date: Date`.
        public let date: Date
    }
    /// Apple: `nonisolated init(_ schedule: Schedule, @ViewBuilder content: @escaping (TimelineViewDefaultContext) -> Content)`.
    nonisolated public init(_ schedule: Schedule, @ViewBuilder content: @escaping (TimelineViewDefaultContext) -> Content) {}
    public var body: Never { fatalError("stand-in") }
}

// MARK: - Accessibility

/// Apple: `struct AccessibilityChildBehavior : Hashable` (swiftui/accessibilitychildbehavior).
public struct AccessibilityChildBehavior: Hashable, Sendable {
    /// Apple: `static let ignore: AccessibilityChildBehavior`.
    public static let ignore = AccessibilityChildBehavior()
    /// Apple: `static let combine: AccessibilityChildBehavior`.
    public static let combine = AccessibilityChildBehavior()
}

/// Apple: `struct AccessibilityTraits : SetAlgebra, Sendable` (swiftui/accessibilitytraits).
public struct AccessibilityTraits: Hashable, Sendable {
    /// Apple: `static let isImage: AccessibilityTraits`.
    public static let isImage = AccessibilityTraits()
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
    /// Apple: `var accessibilityPlayAnimatedImages: Bool { get }` (iOS 17, macOS 14, tvOS 17,
    /// watchOS 10, visionOS 1) — "when this value is false, any presented image that contains
    /// animation should not play automatically".
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    public var accessibilityPlayAnimatedImages: Bool { true }
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
    /// Apple: `func onChange<V>(of value: V, perform action: @escaping (_ newValue: V) -> Void) -> some View where V : Equatable`
    /// (iOS 14, macOS 11, tvOS 14, watchOS 7, visionOS 1; deprecated in iOS 17, macOS 14, tvOS 17,
    /// watchOS 10 and visionOS 1.0: "Use `onChange` with a two or zero parameter action closure
    /// instead"). The check makes it deprecated on visionOS, whose deployment target is the
    /// version that deprecates it.
    @available(iOS, introduced: 14.0, deprecated: 17.0, message: "Use `onChange` with a two or zero parameter action closure instead.")
    @available(macOS, introduced: 11.0, deprecated: 14.0, message: "Use `onChange` with a two or zero parameter action closure instead.")
    @available(tvOS, introduced: 14.0, deprecated: 17.0, message: "Use `onChange` with a two or zero parameter action closure instead.")
    @available(watchOS, introduced: 7.0, deprecated: 10.0, message: "Use `onChange` with a two or zero parameter action closure instead.")
    @available(visionOS, introduced: 1.0, deprecated: 1.0, message: "Use `onChange` with a two or zero parameter action closure instead.")
    public func onChange<V: Equatable>(of value: V, perform action: @escaping (_ newValue: V) -> Void) -> some View { self }
    /// Apple: `nonisolated func onChange<V>(of value: V, initial: Bool = false, _ action: @escaping (_ oldValue: V, _ newValue: V) -> Void) -> some View where V : Equatable`
    /// (iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1).
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    public func onChange<V: Equatable>(of value: V, initial: Bool = false, _ action: @escaping (_ oldValue: V, _ newValue: V) -> Void)
        -> some View
    { self }
    /// Apple: `func frame(minWidth: CGFloat? = nil, idealWidth: CGFloat? = nil, maxWidth: CGFloat? = nil, minHeight: CGFloat? = nil, idealHeight: CGFloat? = nil, maxHeight: CGFloat? = nil, alignment: Alignment = .center) -> some View`.
    public func frame(
        minWidth: CGFloat? = nil, idealWidth: CGFloat? = nil, maxWidth: CGFloat? = nil, minHeight: CGFloat? = nil,
        idealHeight: CGFloat? = nil, maxHeight: CGFloat? = nil, alignment: Alignment = .center
    ) -> some View { self }
    /// Apple: `func background<V>(alignment: Alignment = .center, @ViewBuilder content: () -> V) -> some View where V : View` (iOS 15+).
    public func background<V: View>(alignment: Alignment = .center, @ViewBuilder content: () -> V) -> some View { self }
    /// Apple: `func modifier<T>(_ modifier: T) -> ModifiedContent<Self, T>` (simplified to `some View`).
    public func modifier<T: ViewModifier>(_ modifier: T) -> some View { self }
    /// Apple: `func accessibilityElement(children: AccessibilityChildBehavior = .ignore) -> some View`.
    public func accessibilityElement(children: AccessibilityChildBehavior = .ignore) -> some View { self }
    /// Apple: `func accessibilityLabel(_ label: Text) -> ModifiedContent<Self, AccessibilityAttachmentModifier>` (simplified to `some View`).
    public func accessibilityLabel(_ label: Text) -> some View { self }
    /// Apple: `func accessibilityAddTraits(_ traits: AccessibilityTraits) -> ModifiedContent<Self, AccessibilityAttachmentModifier>` (simplified).
    public func accessibilityAddTraits(_ traits: AccessibilityTraits) -> some View { self }
    /// Apple: `func aspectRatio(_ aspectRatio: CGFloat? = nil, contentMode: ContentMode) -> some View`.
    public func aspectRatio(_ aspectRatio: CGFloat? = nil, contentMode: ContentMode) -> some View { self }
    /// Apple: `func clipped(antialiased: Bool = false) -> some View`.
    public func clipped(antialiased: Bool = false) -> some View { self }
}

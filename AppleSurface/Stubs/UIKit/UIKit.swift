@_exported import CoreGraphics
// Stand-in for Apple's UIKit: the part the package, the sample app and near-future work use.
// Sources: https://developer.apple.com/documentation/uikit/<symbol> for every declaration below
// (uiresponder, uiview, uiimageview, uiactivityindicatorview, uilabel, uiscrollview, uitableview,
// uitableviewcell, uicollectionview, uicollectionviewcell, uiviewcontroller, uiwindow, uiscreen,
// uigesturerecognizer, uitapgesturerecognizer, uitouch, uiapplication, uiimage, uicolor,
// uitraitcollection, uitraitenvironment, uiaccessibility, uiaccessibilitytraits, uiedgeinsets,
// uiview/animate(withduration:delay:options:animations:completion:),
// uiview/transition(with:duration:options:animations:completion:),
// uiapplication/didreceivememorywarningnotification, uiaccessibility/isreducemotionenabled,
// uiview/layer).
//
// Isolation as Apple declares it: `UIResponder` and every subclass (views, cells, view
// controllers, `UIApplication`), `UIGestureRecognizer`, `UITouch`, `UIScreen`, the
// data-source/delegate protocols and `UITraitEnvironment` are `@MainActor`. Apple's notification
// names are `nonisolated`. `UIImage` is `@unchecked Sendable` (Apple documents it as immutable
// and thread-safe); `UIColor` and `UITraitCollection` are not declared Sendable here (strict
// where unsure). UIKit re-exports Foundation and Core Graphics.
@_exported import Foundation
@_exported import QuartzCore
import ObjectiveC

// MARK: - Geometry and small values

/// Apple: `struct UIEdgeInsets : Hashable, Sendable`.
public struct UIEdgeInsets: Hashable, Sendable {
    public var top: CGFloat, left: CGFloat, bottom: CGFloat, right: CGFloat
    public init(top: CGFloat, left: CGFloat, bottom: CGFloat, right: CGFloat) {
        self.top = top
        self.left = left
        self.bottom = bottom
        self.right = right
    }
    public static let zero = UIEdgeInsets(top: 0, left: 0, bottom: 0, right: 0)
}

/// UIKit's additions to `IndexPath` (Apple declares them in UIKit, not Foundation).
extension IndexPath {
    /// Apple: `init(row: Int, section: Int)`.
    public init(row: Int, section: Int) { self.init(indexes: [section, row]) }
    /// Apple: `init(item: Int, section: Int)`.
    public init(item: Int, section: Int) { self.init(indexes: [section, item]) }
    /// Apple: `var section: Int`, `var row: Int`, `var item: Int`.
    public var section: Int { self[0] }
    public var row: Int { self[1] }
    public var item: Int { self[1] }
}

// MARK: - UIImage

/// Apple: `class UIImage : NSObject`, `@unchecked Sendable` (immutable, thread-safe).
open class UIImage: NSObject, @unchecked Sendable {
    // Safe: every stored property is a `let`, as Apple's UIImage is immutable.
    /// Apple: `enum UIImage.Orientation : Int, @unchecked Sendable`.
    public enum Orientation: Int, Sendable {
        case up = 0
        case down, left, right, upMirrored, downMirrored, leftMirrored, rightMirrored
    }

    public let cgImage: CGImage?
    public let scale: CGFloat
    public let imageOrientation: UIImage.Orientation

    /// Apple: `var size: CGSize` (in points, orientation applied).
    public var size: CGSize {
        guard let cgImage else { return .zero }
        return CGSize(width: CGFloat(cgImage.width) / scale, height: CGFloat(cgImage.height) / scale)
    }

    /// Apple: `init(cgImage: CGImage)`.
    public init(cgImage: CGImage) {
        self.cgImage = cgImage
        scale = 1
        imageOrientation = .up
        super.init()
    }
    /// Apple: `init(cgImage: CGImage, scale: CGFloat, orientation: UIImage.Orientation)`.
    public init(cgImage: CGImage, scale: CGFloat, orientation: UIImage.Orientation) {
        self.cgImage = cgImage
        self.scale = scale
        imageOrientation = orientation
        super.init()
    }
    /// Apple: `init?(named name: String)`.
    public init?(named name: String) { return nil }
    /// Apple: `init?(named: String, in: Bundle?, compatibleWith: UITraitCollection?)`.
    public init?(named name: String, in bundle: Bundle?, compatibleWith traitCollection: UITraitCollection?) { return nil }
    /// Apple: `init?(systemName name: String)` (iOS 13+).
    public init?(systemName name: String) { return nil }
    /// Apple: `init?(data: Data)`.
    public init?(data: Data) { return nil }
    /// Apple: `init?(data: Data, scale: CGFloat)`.
    public init?(data: Data, scale: CGFloat) { return nil }

    /// Apple: `func pngData() -> Data?`, `func jpegData(compressionQuality: CGFloat) -> Data?`.
    public func pngData() -> Data? { nil }
    public func jpegData(compressionQuality: CGFloat) -> Data? { nil }
    /// Apple: `func preparingForDisplay() -> UIImage?` (iOS 15+).
    public func preparingForDisplay() -> UIImage? { self }
    /// Apple: `func preparingThumbnail(of size: CGSize) -> UIImage?` (iOS 15+).
    public func preparingThumbnail(of size: CGSize) -> UIImage? { self }
}

// MARK: - UIColor

/// Apple: `class UIColor : NSObject`. Not declared Sendable here.
open class UIColor: NSObject {
    /// Apple: `init(white: CGFloat, alpha: CGFloat)`.
    public init(white: CGFloat, alpha: CGFloat) { super.init() }
    /// Apple: `init(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat)`.
    public init(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat) { super.init() }
    /// Apple: `var cgColor: CGColor`.
    public var cgColor: CGColor { CGColor(red: 0, green: 0, blue: 0, alpha: 1) }
    /// Apple: `class var clear: UIColor` and the other named colours.
    open class var clear: UIColor { UIColor(white: 0, alpha: 0) }
    open class var black: UIColor { UIColor(white: 0, alpha: 1) }
    open class var white: UIColor { UIColor(white: 1, alpha: 1) }
    open class var gray: UIColor { UIColor(white: 0.5, alpha: 1) }
    open class var systemBackground: UIColor { UIColor(white: 1, alpha: 1) }
    open class var secondarySystemBackground: UIColor { UIColor(white: 0.95, alpha: 1) }
    open class var secondarySystemFill: UIColor { UIColor(white: 0.9, alpha: 1) }
    open class var label: UIColor { UIColor(white: 0, alpha: 1) }
    open class var secondaryLabel: UIColor { UIColor(white: 0.4, alpha: 1) }
    open class var systemGray5: UIColor { UIColor(white: 0.9, alpha: 1) }
}

// MARK: - Traits

/// Apple: `class UITraitCollection : NSObject` (immutable). Not declared Sendable here.
open class UITraitCollection: NSObject {
    /// Apple: `var displayScale: CGFloat` (0 when unspecified).
    public let displayScale: CGFloat
    /// Apple: `init(displayScale scale: CGFloat)`.
    public init(displayScale scale: CGFloat) {
        displayScale = scale
        super.init()
    }
    public override init() {
        displayScale = 0
        super.init()
    }
    /// Apple: `class var current: UITraitCollection` (iOS 13+).
    @MainActor open class var current: UITraitCollection { UITraitCollection() }
}

/// Apple: `@MainActor protocol UITraitEnvironment : NSObjectProtocol`.
@MainActor
public protocol UITraitEnvironment: AnyObject {
    var traitCollection: UITraitCollection { get }
    /// Deprecated in iOS 17 (use trait change registration); still called on iOS 15/16.
    func traitCollectionDidChange(_ previousTraitCollection: UITraitCollection?)
}

// MARK: - Accessibility

/// Apple: `struct UIAccessibilityTraits : OptionSet, Sendable`.
public struct UIAccessibilityTraits: OptionSet, Hashable, Sendable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public static let none = UIAccessibilityTraits([])
    public static let button = UIAccessibilityTraits(rawValue: 1 << 0)
    public static let link = UIAccessibilityTraits(rawValue: 1 << 1)
    public static let image = UIAccessibilityTraits(rawValue: 1 << 2)
    public static let selected = UIAccessibilityTraits(rawValue: 1 << 3)
    public static let playsSound = UIAccessibilityTraits(rawValue: 1 << 4)
    public static let keyboardKey = UIAccessibilityTraits(rawValue: 1 << 5)
    public static let staticText = UIAccessibilityTraits(rawValue: 1 << 6)
    public static let summaryElement = UIAccessibilityTraits(rawValue: 1 << 7)
    public static let notEnabled = UIAccessibilityTraits(rawValue: 1 << 8)
    public static let updatesFrequently = UIAccessibilityTraits(rawValue: 1 << 9)
    public static let searchField = UIAccessibilityTraits(rawValue: 1 << 10)
    public static let startsMediaSession = UIAccessibilityTraits(rawValue: 1 << 11)
    public static let adjustable = UIAccessibilityTraits(rawValue: 1 << 12)
    public static let allowsDirectInteraction = UIAccessibilityTraits(rawValue: 1 << 13)
    public static let causesPageTurn = UIAccessibilityTraits(rawValue: 1 << 14)
    public static let header = UIAccessibilityTraits(rawValue: 1 << 16)
}

/// Apple: `enum UIAccessibility` (a namespace of functions and notifications).
public enum UIAccessibility {
    /// Apple: `@MainActor static var isReduceMotionEnabled: Bool { get }`.
    @MainActor public static var isReduceMotionEnabled: Bool { false }
    /// Apple: `@MainActor static var isVoiceOverRunning: Bool { get }`.
    @MainActor public static var isVoiceOverRunning: Bool { false }

    /// Apple: `struct UIAccessibility.Notification : Hashable, Sendable`.
    public struct Notification: Hashable, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let screenChanged = Notification(rawValue: 1000)
        public static let layoutChanged = Notification(rawValue: 1001)
        public static let announcement = Notification(rawValue: 1008)
    }
    /// Apple: `@MainActor static func post(notification: UIAccessibility.Notification, argument: Any?)`.
    @MainActor public static func post(notification: UIAccessibility.Notification, argument: Any?) {}

    /// Apple: `nonisolated static let reduceMotionStatusDidChangeNotification: NSNotification.Name`.
    public static let reduceMotionStatusDidChangeNotification =
        NSNotification.Name("UIAccessibilityReduceMotionStatusDidChangeNotification")
    /// Apple: `nonisolated static let voiceOverStatusDidChangeNotification: NSNotification.Name`.
    public static let voiceOverStatusDidChangeNotification =
        NSNotification.Name("UIAccessibilityVoiceOverStatusDidChangeNotification")
}

// MARK: - UIResponder

/// Apple: `@MainActor class UIResponder : NSObject`.
@MainActor
open class UIResponder: NSObject {
    public override init() { super.init() }
    /// Apple: `var next: UIResponder? { get }`.
    open var next: UIResponder? { nil }
    open var canBecomeFirstResponder: Bool { false }
    open var isFirstResponder: Bool { false }
    @discardableResult open func becomeFirstResponder() -> Bool { false }
    @discardableResult open func resignFirstResponder() -> Bool { true }
}

// MARK: - UIView

/// Apple: `@MainActor class UIView : UIResponder`.
@MainActor
open class UIView: UIResponder, UITraitEnvironment {
    /// Apple: `enum UIView.ContentMode : Int, @unchecked Sendable`.
    public enum ContentMode: Int, Sendable {
        case scaleToFill = 0
        case scaleAspectFit, scaleAspectFill, redraw, center, top, bottom, left, right,
            topLeft, topRight, bottomLeft, bottomRight
    }

    /// Apple: `struct UIView.AutoresizingMask : OptionSet, Sendable`.
    public struct AutoresizingMask: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let flexibleLeftMargin = AutoresizingMask(rawValue: 1 << 0)
        public static let flexibleWidth = AutoresizingMask(rawValue: 1 << 1)
        public static let flexibleRightMargin = AutoresizingMask(rawValue: 1 << 2)
        public static let flexibleTopMargin = AutoresizingMask(rawValue: 1 << 3)
        public static let flexibleHeight = AutoresizingMask(rawValue: 1 << 4)
        public static let flexibleBottomMargin = AutoresizingMask(rawValue: 1 << 5)
    }

    /// Apple: `struct UIView.AnimationOptions : OptionSet, Sendable`.
    public struct AnimationOptions: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let allowUserInteraction = AnimationOptions(rawValue: 1 << 1)
        public static let beginFromCurrentState = AnimationOptions(rawValue: 1 << 2)
        public static let allowAnimatedContent = AnimationOptions(rawValue: 1 << 7)
        public static let curveEaseInOut = AnimationOptions([])
        public static let curveEaseIn = AnimationOptions(rawValue: 1 << 16)
        public static let curveEaseOut = AnimationOptions(rawValue: 2 << 16)
        public static let curveLinear = AnimationOptions(rawValue: 3 << 16)
        public static let transitionFlipFromLeft = AnimationOptions(rawValue: 1 << 20)
        public static let transitionCrossDissolve = AnimationOptions(rawValue: 5 << 20)
    }

    private var storedFrame: CGRect

    /// Apple: `init(frame: CGRect)` (designated).
    public init(frame: CGRect) {
        storedFrame = frame
        super.init()
    }
    /// Apple: `init?(coder: NSCoder)` (required).
    public required init?(coder: NSCoder) {
        storedFrame = .zero
        super.init()
    }
    /// `UIView()`: Objective-C's inherited `init`, which calls `init(frame: .zero)`.
    public override convenience init() { self.init(frame: .zero) }

    open var frame: CGRect {
        get { storedFrame }
        set { storedFrame = newValue }
    }
    open var bounds: CGRect {
        get { CGRect(origin: .zero, size: storedFrame.size) }
        set { storedFrame.size = newValue.size }
    }
    open var center: CGPoint {
        get { CGPoint(x: storedFrame.midX, y: storedFrame.midY) }
        set { storedFrame.origin = CGPoint(x: newValue.x - storedFrame.width / 2, y: newValue.y - storedFrame.height / 2) }
    }
    open private(set) weak var superview: UIView?
    open private(set) var subviews: [UIView] = []
    /// Apple: `var window: UIWindow? { get }`.
    open var window: UIWindow? { superview?.window }
    /// Apple: `var layer: CALayer { get }` — the view's Core Animation layer, never `nil`.
    open var layer: CALayer { CALayer() }
    open var isHidden = false
    open var alpha: CGFloat = 1
    open var isOpaque = true
    open var backgroundColor: UIColor?
    open var tintColor: UIColor!
    open var clipsToBounds = false
    open var contentMode: UIView.ContentMode = .scaleToFill
    open var isUserInteractionEnabled = true
    open var tag = 0
    open var autoresizingMask: UIView.AutoresizingMask = []
    open var translatesAutoresizingMaskIntoConstraints = true
    open var safeAreaInsets: UIEdgeInsets { .zero }
    open var intrinsicContentSize: CGSize { CGSize(width: -1, height: -1) }
    /// Apple: `class let noIntrinsicMetric: CGFloat` (-1).
    public static let noIntrinsicMetric: CGFloat = -1

    open func addSubview(_ view: UIView) {
        subviews.append(view)
        view.superview = self
    }
    open func insertSubview(_ view: UIView, at index: Int) {
        subviews.insert(view, at: index)
        view.superview = self
    }
    open func removeFromSuperview() {
        superview?.subviews.removeAll { $0 === self }
        superview = nil
    }
    open func bringSubviewToFront(_ view: UIView) {}
    open func sendSubviewToBack(_ view: UIView) {}

    // Layout and the view hierarchy's notifications.
    open func layoutSubviews() {}
    open func setNeedsLayout() {}
    open func layoutIfNeeded() {}
    open func setNeedsDisplay() {}
    open func draw(_ rect: CGRect) {}
    open func sizeThatFits(_ size: CGSize) -> CGSize { bounds.size }
    open func sizeToFit() {}
    open func invalidateIntrinsicContentSize() {}
    open func willMove(toSuperview newSuperview: UIView?) {}
    open func didMoveToSuperview() {}
    open func willMove(toWindow newWindow: UIWindow?) {}
    open func didMoveToWindow() {}
    open func convert(_ rect: CGRect, to view: UIView?) -> CGRect { rect }
    open func convert(_ point: CGPoint, to view: UIView?) -> CGPoint { point }

    // Traits.
    /// Apple: `var traitCollection: UITraitCollection { get }` (from `UITraitEnvironment`).
    open var traitCollection: UITraitCollection { UITraitCollection() }
    /// Apple: deprecated in iOS 17, called on iOS 15 and 16.
    @available(iOS, introduced: 8.0, deprecated: 17.0)
    open func traitCollectionDidChange(_ previousTraitCollection: UITraitCollection?) {}

    // Gestures.
    open var gestureRecognizers: [UIGestureRecognizer]?
    open func addGestureRecognizer(_ gestureRecognizer: UIGestureRecognizer) {
        gestureRecognizers = (gestureRecognizers ?? []) + [gestureRecognizer]
    }
    open func removeGestureRecognizer(_ gestureRecognizer: UIGestureRecognizer) {
        gestureRecognizers?.removeAll { $0 === gestureRecognizer }
    }

    // Accessibility (Apple declares these on NSObject, main-actor; here on UIView, stricter).
    open var isAccessibilityElement = false
    open var accessibilityLabel: String?
    open var accessibilityHint: String?
    open var accessibilityValue: String?
    open var accessibilityTraits: UIAccessibilityTraits = .none
    open var accessibilityIdentifier: String?
    open var accessibilityElementsHidden = false
    open var shouldGroupAccessibilityChildren = false

    // Animation.
    /// Apple: `class func animate(withDuration:animations:)`.
    open class func animate(withDuration duration: TimeInterval, animations: @escaping () -> Void) {}
    /// Apple: `class func animate(withDuration:animations:completion:)`.
    open class func animate(
        withDuration duration: TimeInterval, animations: @escaping () -> Void,
        completion: ((Bool) -> Void)? = nil
    ) {}
    /// Apple: `class func animate(withDuration:delay:options:animations:completion:)`.
    open class func animate(
        withDuration duration: TimeInterval, delay: TimeInterval,
        options: UIView.AnimationOptions = [], animations: @escaping () -> Void,
        completion: ((Bool) -> Void)? = nil
    ) {}
    /// Apple: `class func transition(with:duration:options:animations:completion:)`.
    open class func transition(
        with view: UIView, duration: TimeInterval, options: UIView.AnimationOptions = [],
        animations: (() -> Void)?, completion: ((Bool) -> Void)? = nil
    ) {}
    /// Apple: `class func performWithoutAnimation(_ actionsWithoutAnimation: () -> Void)`.
    open class func performWithoutAnimation(_ actionsWithoutAnimation: () -> Void) { actionsWithoutAnimation() }
    /// Apple: `class var areAnimationsEnabled: Bool { get }`.
    open class var areAnimationsEnabled: Bool { true }
}

// MARK: - Views

/// Apple: `@MainActor class UIImageView : UIView`.
@MainActor
open class UIImageView: UIView {
    open var image: UIImage?
    open var highlightedImage: UIImage?
    open var isHighlighted = false
    public override init(frame: CGRect) { super.init(frame: frame) }
    public init(image: UIImage?) {
        self.image = image
        super.init(frame: .zero)
    }
    public required init?(coder: NSCoder) { super.init(coder: coder) }
    open var isAnimating: Bool { false }
    open func startAnimating() {}
    open func stopAnimating() {}
}

/// Apple: `@MainActor class UIActivityIndicatorView : UIView`.
@MainActor
open class UIActivityIndicatorView: UIView {
    /// Apple: `enum UIActivityIndicatorView.Style : Int` (`.medium`, `.large`: iOS 13+).
    public enum Style: Int, Sendable {
        case medium = 100
        case large = 101
    }
    open var style: UIActivityIndicatorView.Style
    open var hidesWhenStopped = true
    open var color: UIColor!
    open private(set) var isAnimating = false
    public init(style: UIActivityIndicatorView.Style) {
        self.style = style
        super.init(frame: .zero)
    }
    public override init(frame: CGRect) {
        style = .medium
        super.init(frame: frame)
    }
    public required init(coder: NSCoder) {
        style = .medium
        super.init(frame: .zero)
    }
    open func startAnimating() { isAnimating = true }
    open func stopAnimating() { isAnimating = false }
}

/// Apple: `@MainActor class UILabel : UIView`.
@MainActor
open class UILabel: UIView {
    open var text: String?
    open var textColor: UIColor!
    open var numberOfLines = 1
    public override init(frame: CGRect) { super.init(frame: frame) }
    public required init?(coder: NSCoder) { super.init(coder: coder) }
}

/// Apple: `@MainActor class UIWindow : UIView`.
@MainActor
open class UIWindow: UIView {
    open var screen: UIScreen = UIScreen()
    open var rootViewController: UIViewController?
    open override var window: UIWindow? { self }
    public override init(frame: CGRect) { super.init(frame: frame) }
    public required init?(coder: NSCoder) { super.init(coder: coder) }
    open func makeKeyAndVisible() {}
}

/// Apple: `@MainActor class UIScreen : NSObject`.
@MainActor
open class UIScreen: NSObject, UITraitEnvironment {
    public override init() { super.init() }
    /// Apple: `class var main: UIScreen` — deprecated in iOS 16 ("use a UIScreen instance found
    /// through context instead"), available on iOS 15.
    @available(iOS, introduced: 2.0, deprecated: 16.0)
    open class var main: UIScreen { UIScreen() }
    open var scale: CGFloat { 2 }
    open var nativeScale: CGFloat { 2 }
    open var bounds: CGRect { .zero }
    open var traitCollection: UITraitCollection { UITraitCollection(displayScale: scale) }
    open func traitCollectionDidChange(_ previousTraitCollection: UITraitCollection?) {}
}

/// Apple: `@MainActor class UIScrollView : UIView`.
@MainActor
open class UIScrollView: UIView {
    open var contentOffset: CGPoint = .zero
    open var contentSize: CGSize = .zero
    open var isDragging: Bool { false }
    open var isDecelerating: Bool { false }
    public override init(frame: CGRect) { super.init(frame: frame) }
    public required init?(coder: NSCoder) { super.init(coder: coder) }
}

// MARK: - Table views

/// Apple: `@MainActor class UITableViewCell : UIView`.
@MainActor
open class UITableViewCell: UIView {
    /// Apple: `enum UITableViewCell.CellStyle : Int`.
    public enum CellStyle: Int, Sendable {
        case `default` = 0
        case value1, value2, subtitle
    }
    /// Apple: `var contentView: UIView { get }`.
    open private(set) var contentView = UIView(frame: .zero)
    open private(set) var reuseIdentifier: String?
    open var textLabel: UILabel? { nil }
    open var imageView: UIImageView? { nil }
    open var isSelected = false
    open var isHighlighted = false
    open var selectionStyle: Int = 3
    /// Apple: `init(style: UITableViewCell.CellStyle, reuseIdentifier: String?)` (designated).
    public init(style: UITableViewCell.CellStyle, reuseIdentifier: String?) {
        self.reuseIdentifier = reuseIdentifier
        super.init(frame: .zero)
    }
    public required init?(coder: NSCoder) { super.init(coder: coder) }
    /// Apple: `func prepareForReuse()` — subclasses must call super.
    open func prepareForReuse() {}
}

/// Apple: `@MainActor class UITableView : UIScrollView`.
@MainActor
open class UITableView: UIScrollView {
    /// Apple: `enum UITableView.Style : Int`.
    public enum Style: Int, Sendable {
        case plain = 0
        case grouped, insetGrouped
    }
    public let style: UITableView.Style
    open weak var dataSource: (any UITableViewDataSource)?
    open weak var delegate: (any UITableViewDelegate)?
    open weak var prefetchDataSource: (any UITableViewDataSourcePrefetching)?
    open var rowHeight: CGFloat = 44
    open var estimatedRowHeight: CGFloat = 0
    open var visibleCells: [UITableViewCell] { [] }
    open var indexPathsForVisibleRows: [IndexPath]? { nil }
    /// Apple: `init(frame: CGRect, style: UITableView.Style)` (designated).
    public init(frame: CGRect, style: UITableView.Style) {
        self.style = style
        super.init(frame: frame)
    }
    public override convenience init(frame: CGRect) { self.init(frame: frame, style: .plain) }
    public required init?(coder: NSCoder) {
        style = .plain
        super.init(coder: coder)
    }
    /// Apple: `func register(_ cellClass: AnyClass?, forCellReuseIdentifier identifier: String)`.
    open func register(_ cellClass: AnyClass?, forCellReuseIdentifier identifier: String) {}
    /// Apple: `func dequeueReusableCell(withIdentifier:for:) -> UITableViewCell`.
    open func dequeueReusableCell(withIdentifier identifier: String, for indexPath: IndexPath) -> UITableViewCell {
        UITableViewCell(style: .default, reuseIdentifier: identifier)
    }
    /// Apple: `func dequeueReusableCell(withIdentifier:) -> UITableViewCell?`.
    open func dequeueReusableCell(withIdentifier identifier: String) -> UITableViewCell? { nil }
    open func cellForRow(at indexPath: IndexPath) -> UITableViewCell? { nil }
    open func reloadData() {}
    open func deselectRow(at indexPath: IndexPath, animated: Bool) {}
}

/// Apple: `@MainActor protocol UITableViewDataSource : NSObjectProtocol` (the optional
/// requirements have empty defaults here).
@MainActor
public protocol UITableViewDataSource: AnyObject {
    func tableView(_ tableView: UITableView, numberOfRowsInSection section: Int) -> Int
    func tableView(_ tableView: UITableView, cellForRowAt indexPath: IndexPath) -> UITableViewCell
    func numberOfSections(in tableView: UITableView) -> Int
}
extension UITableViewDataSource {
    public func numberOfSections(in tableView: UITableView) -> Int { 1 }
}

/// Apple: `@MainActor protocol UITableViewDelegate : UIScrollViewDelegate` (all optional).
@MainActor
public protocol UITableViewDelegate: AnyObject {
    func tableView(_ tableView: UITableView, didSelectRowAt indexPath: IndexPath)
    func tableView(_ tableView: UITableView, willDisplay cell: UITableViewCell, forRowAt indexPath: IndexPath)
    func tableView(_ tableView: UITableView, didEndDisplaying cell: UITableViewCell, forRowAt indexPath: IndexPath)
}
extension UITableViewDelegate {
    public func tableView(_ tableView: UITableView, didSelectRowAt indexPath: IndexPath) {}
    public func tableView(_ tableView: UITableView, willDisplay cell: UITableViewCell, forRowAt indexPath: IndexPath) {}
    public func tableView(_ tableView: UITableView, didEndDisplaying cell: UITableViewCell, forRowAt indexPath: IndexPath) {}
}

/// Apple: `@MainActor protocol UITableViewDataSourcePrefetching : NSObjectProtocol`.
@MainActor
public protocol UITableViewDataSourcePrefetching: AnyObject {
    func tableView(_ tableView: UITableView, prefetchRowsAt indexPaths: [IndexPath])
    func tableView(_ tableView: UITableView, cancelPrefetchingForRowsAt indexPaths: [IndexPath])
}
extension UITableViewDataSourcePrefetching {
    public func tableView(_ tableView: UITableView, cancelPrefetchingForRowsAt indexPaths: [IndexPath]) {}
}

// MARK: - Collection views

/// Apple: `@MainActor class UICollectionReusableView : UIView`.
@MainActor
open class UICollectionReusableView: UIView {
    open var reuseIdentifier: String? { nil }
    public override init(frame: CGRect) { super.init(frame: frame) }
    public required init?(coder: NSCoder) { super.init(coder: coder) }
    /// Apple: `func prepareForReuse()` — subclasses must call super.
    open func prepareForReuse() {}
}

/// Apple: `@MainActor class UICollectionViewCell : UICollectionReusableView`.
@MainActor
open class UICollectionViewCell: UICollectionReusableView {
    open private(set) var contentView = UIView(frame: .zero)
    open var isSelected = false
    open var isHighlighted = false
    public override init(frame: CGRect) { super.init(frame: frame) }
    public required init?(coder: NSCoder) { super.init(coder: coder) }
}

/// Apple: `@MainActor class UICollectionViewLayout : NSObject`.
@MainActor
open class UICollectionViewLayout: NSObject {
    public override init() { super.init() }
}

/// Apple: `@MainActor class UICollectionViewFlowLayout : UICollectionViewLayout`.
@MainActor
open class UICollectionViewFlowLayout: UICollectionViewLayout {
    open var itemSize = CGSize(width: 50, height: 50)
    public override init() { super.init() }
}

/// Apple: `@MainActor class UICollectionView : UIScrollView`.
@MainActor
open class UICollectionView: UIScrollView {
    open var collectionViewLayout: UICollectionViewLayout
    open weak var dataSource: (any UICollectionViewDataSource)?
    /// Apple: `init(frame: CGRect, collectionViewLayout layout: UICollectionViewLayout)`.
    public init(frame: CGRect, collectionViewLayout layout: UICollectionViewLayout) {
        collectionViewLayout = layout
        super.init(frame: frame)
    }
    public required init?(coder: NSCoder) {
        collectionViewLayout = UICollectionViewFlowLayout()
        super.init(coder: coder)
    }
    /// Apple: `func register(_ cellClass: AnyClass?, forCellWithReuseIdentifier identifier: String)`.
    open func register(_ cellClass: AnyClass?, forCellWithReuseIdentifier identifier: String) {}
    /// Apple: `func dequeueReusableCell(withReuseIdentifier:for:) -> UICollectionViewCell`.
    open func dequeueReusableCell(withReuseIdentifier identifier: String, for indexPath: IndexPath) -> UICollectionViewCell {
        UICollectionViewCell(frame: .zero)
    }
    open func reloadData() {}
}

/// Apple: `@MainActor protocol UICollectionViewDataSource : NSObjectProtocol`.
@MainActor
public protocol UICollectionViewDataSource: AnyObject {
    func collectionView(_ collectionView: UICollectionView, numberOfItemsInSection section: Int) -> Int
    func collectionView(_ collectionView: UICollectionView, cellForItemAt indexPath: IndexPath) -> UICollectionViewCell
}

// MARK: - View controllers

/// Apple: `@MainActor class UIViewController : UIResponder`.
@MainActor
open class UIViewController: UIResponder, UITraitEnvironment {
    private var loadedView: UIView?
    /// Apple: `init(nibName: String?, bundle: Bundle?)` (designated).
    public init(nibName nibNameOrNil: String?, bundle nibBundleOrNil: Bundle?) { super.init() }
    /// Apple: `init?(coder: NSCoder)` (required).
    public required init?(coder: NSCoder) { super.init() }
    /// `UIViewController()`: Objective-C's inherited `init`, which calls `init(nibName: nil, bundle: nil)`.
    public override convenience init() { self.init(nibName: nil, bundle: nil) }

    /// Apple: `var view: UIView!` — loaded on first access (`loadView()`, then `viewDidLoad()`).
    open var view: UIView! {
        get {
            if loadedView == nil {
                loadView()
                viewDidLoad()
            }
            return loadedView
        }
        set { loadedView = newValue }
    }
    open var isViewLoaded: Bool { loadedView != nil }
    open var viewIfLoaded: UIView? { loadedView }
    open var title: String?
    open var traitCollection: UITraitCollection { UITraitCollection() }
    open func traitCollectionDidChange(_ previousTraitCollection: UITraitCollection?) {}

    open func loadView() { loadedView = UIView(frame: .zero) }
    open func viewDidLoad() {}
    open func viewWillAppear(_ animated: Bool) {}
    open func viewDidAppear(_ animated: Bool) {}
    open func viewWillDisappear(_ animated: Bool) {}
    open func viewDidDisappear(_ animated: Bool) {}
    open func viewWillLayoutSubviews() {}
    open func viewDidLayoutSubviews() {}
    open func didReceiveMemoryWarning() {}
    open func present(_ viewControllerToPresent: UIViewController, animated flag: Bool, completion: (() -> Void)? = nil) {}
    open func dismiss(animated flag: Bool, completion: (() -> Void)? = nil) {}
}

// MARK: - Gestures

/// Apple: `@MainActor class UITouch : NSObject`.
@MainActor
open class UITouch: NSObject {
    open var view: UIView? { nil }
    open func location(in view: UIView?) -> CGPoint { .zero }
}

/// Apple: `@MainActor class UIGestureRecognizer : NSObject`.
@MainActor
open class UIGestureRecognizer: NSObject {
    /// Apple: `enum UIGestureRecognizer.State : Int`.
    public enum State: Int, Sendable {
        case possible = 0
        case began, changed, ended, cancelled, failed
        public static let recognized = State.ended
    }
    /// Apple: `init(target: Any?, action: Selector?)` (designated).
    public init(target: Any?, action: Selector?) { super.init() }
    public override convenience init() { self.init(target: nil, action: nil) }
    open func addTarget(_ target: Any, action: Selector) {}
    open func removeTarget(_ target: Any?, action: Selector?) {}
    open var state: UIGestureRecognizer.State = .possible
    open weak var delegate: (any UIGestureRecognizerDelegate)?
    open var isEnabled = true
    open private(set) weak var view: UIView?
    /// Apple: default `true` — a recognized gesture cancels the touches in the view.
    open var cancelsTouchesInView = true
    open var delaysTouchesBegan = false
    open var delaysTouchesEnded = true
    open func location(in view: UIView?) -> CGPoint { .zero }
}

/// Apple: `@MainActor class UITapGestureRecognizer : UIGestureRecognizer`.
@MainActor
open class UITapGestureRecognizer: UIGestureRecognizer {
    open var numberOfTapsRequired = 1
    open var numberOfTouchesRequired = 1
    public override init(target: Any?, action: Selector?) { super.init(target: target, action: action) }
}

/// Apple: `@MainActor protocol UIGestureRecognizerDelegate : NSObjectProtocol` (all optional).
@MainActor
public protocol UIGestureRecognizerDelegate: AnyObject {
    func gestureRecognizerShouldBegin(_ gestureRecognizer: UIGestureRecognizer) -> Bool
    func gestureRecognizer(_ gestureRecognizer: UIGestureRecognizer, shouldReceive touch: UITouch) -> Bool
    func gestureRecognizer(
        _ gestureRecognizer: UIGestureRecognizer,
        shouldRecognizeSimultaneouslyWith otherGestureRecognizer: UIGestureRecognizer
    ) -> Bool
}
extension UIGestureRecognizerDelegate {
    public func gestureRecognizerShouldBegin(_ gestureRecognizer: UIGestureRecognizer) -> Bool { true }
    public func gestureRecognizer(_ gestureRecognizer: UIGestureRecognizer, shouldReceive touch: UITouch) -> Bool { true }
    public func gestureRecognizer(
        _ gestureRecognizer: UIGestureRecognizer,
        shouldRecognizeSimultaneouslyWith otherGestureRecognizer: UIGestureRecognizer
    ) -> Bool { false }
}

// MARK: - UIApplication

/// Apple: `@MainActor class UIApplication : UIResponder`.
@MainActor
open class UIApplication: UIResponder {
    /// Apple: `enum UIApplication.State : Int`.
    public enum State: Int, Sendable {
        case active = 0
        case inactive, background
    }
    /// Apple: `class var shared: UIApplication { get }`.
    open class var shared: UIApplication { UIApplication() }
    open var applicationState: UIApplication.State { .active }

    /// Apple: `nonisolated class let didReceiveMemoryWarningNotification: NSNotification.Name`.
    nonisolated public static let didReceiveMemoryWarningNotification =
        NSNotification.Name("UIApplicationDidReceiveMemoryWarningNotification")
    /// Apple: `nonisolated class let didEnterBackgroundNotification: NSNotification.Name`.
    nonisolated public static let didEnterBackgroundNotification =
        NSNotification.Name("UIApplicationDidEnterBackgroundNotification")
    /// Apple: `nonisolated class let willEnterForegroundNotification: NSNotification.Name`.
    nonisolated public static let willEnterForegroundNotification =
        NSNotification.Name("UIApplicationWillEnterForegroundNotification")

    // Background tasks. SDK (iOS 18.0, UIApplication.h): `beginBackgroundTaskWithName:expirationHandler:`
    // and `endBackgroundTask:` are `NS_SWIFT_NONISOLATED`, the handler `NS_SWIFT_UI_ACTOR`
    // (Swift: `(@MainActor @Sendable () -> Void)?`). iOS 7 / 4, tvOS, Mac Catalyst, visionOS; no watchOS.
    /// Apple: `nonisolated func beginBackgroundTask(withName taskName: String?, expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil) -> UIBackgroundTaskIdentifier`.
    nonisolated open func beginBackgroundTask(
        withName taskName: String?, expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil
    ) -> UIBackgroundTaskIdentifier { .invalid }
    /// Apple: `nonisolated func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier)`.
    nonisolated open func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier) {}
}

/// Apple: `struct UIBackgroundTaskIdentifier : Hashable, Equatable, RawRepresentable, Sendable`
/// (`rawValue: Int`), with `static let invalid`.
public struct UIBackgroundTaskIdentifier: Hashable, RawRepresentable, Sendable {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Apple: `static let invalid: UIBackgroundTaskIdentifier`.
    public static let invalid = UIBackgroundTaskIdentifier(rawValue: 0)
}

// MARK: - Foundation on Apple platforms (what Linux's Foundation lacks)

extension ProcessInfo {
    /// Apple: `func performExpiringActivity(withReason reason: String, using block: @escaping @Sendable (Bool) -> Void)`
    /// (iOS 8.2, tvOS 9, watchOS 2, Mac Catalyst 13.1, visionOS 1; not macOS). The block runs
    /// asynchronously; it is called again with `true` when the process is about to be suspended.
    public func performExpiringActivity(withReason reason: String, using block: @escaping @Sendable (Bool) -> Void) {}
}

extension FileManager {
    /// Apple: `func containerURL(forSecurityApplicationGroupIdentifier groupIdentifier: String) -> URL?`
    /// (iOS 7, macOS 10.8, tvOS 9, watchOS 2, visionOS 1): the App Group's shared directory; nil
    /// on iOS when the group is not in the app's entitlements.
    public func containerURL(forSecurityApplicationGroupIdentifier groupIdentifier: String) -> URL? { nil }
}

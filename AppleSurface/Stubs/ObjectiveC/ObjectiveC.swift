// Stand-in for the parts of Apple's `ObjectiveC` module that Swift source touches by name.
// Source: https://developer.apple.com/documentation/objectivec/selector
//
// The surface check type-checks with `-enable-objc-interop` (as every Apple compile does), which
// makes `@objc` and `#selector` legal; `#selector` needs a `Selector` type from a module named
// `ObjectiveC`. `NSObject` itself comes from Foundation on Linux (the stand-ins build on it).

/// An Objective-C selector: what `#selector(method)` produces.
/// Apple: `struct Selector` — `Hashable`, `Sendable`, `ExpressibleByStringLiteral`.
public struct Selector: Hashable, Sendable, ExpressibleByStringLiteral {
    private let name: String
    /// Apple: `init(_ str: String)`.
    public init(_ str: String) { name = str }
    public init(stringLiteral value: String) { name = value }
}

/// Apple: `func NSStringFromSelector(_ aSelector: Selector) -> String` (Foundation).
/// Not declared: nothing uses it.

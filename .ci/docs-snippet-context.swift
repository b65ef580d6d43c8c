// The names a documentation snippet may use without declaring them, once it says so inside
// itself: a comment line `// Assumes `manager` (an ObjectManager) and `feedURL` (a URL).` makes
// `.ci/docs-check` import exactly those names into it (scoped imports), so a reader who copies the
// snippet is told what to supply. A block (of README.md, an article or a `///` doc comment) gets
// nothing else. Each name stands for something the prose around a snippet calls by name: "the
// manager", "an avatar's URL". Keep the list short and obvious: a reader must be able to guess
// each name's type.
import Foundation
import ManagedCacheUIKit

/// The app's manager.
public let manager = ObjectManager()
/// URLs of the kinds the snippets load.
public let url = URL(string: "https://example.com/object")!
public let avatarURL = URL(string: "https://example.com/avatars/42.jpg")!
public let photoURL = URL(string: "https://example.com/photos/7.jpg")!
public let coverURL = URL(string: "https://example.com/covers/7.jpg")!
public let feedURL = URL(string: "https://example.com/feed.json")!
public let documentURL = URL(string: "https://example.com/manual.pdf")!
/// The app's caches directory.
public let cachesDirectory = FileManager.default.temporaryDirectory

/// A decoded JSON feed, as an app would declare it.
public struct Feed: Decodable, Sendable {
    public var title: String
    public var posts: [Post]
}

/// One post of a `Feed`.
public struct Post: Decodable, Sendable {
    public var id: Int
    public var text: String
    public var avatarURL: URL
}

/// An article, as an app would declare it.
public struct Article: Decodable, Sendable {
    public var title: String
    public var body: String
}

/// Stands for the app's own handling of a feed.
public func store(_ feed: Feed) {}

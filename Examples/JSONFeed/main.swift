// A `Codable` model as a managed object: a feed API response loaded once, decoded once, and
// shared by two "screens" and an `await` caller, then served from memory.
//
//     swift run JSONFeed
import Foundation
import LoopbackServer
import ManagedCache

struct Feed: Codable, Sendable {
    struct Post: Codable, Sendable {
        let id: Int
        let author: String
        let text: String
    }
    let posts: [Post]
}

// A local API server, so the example runs anywhere, offline.
let server = try LoopbackServer()
let feedJSON = try JSONEncoder().encode(
    Feed(
        posts: (1...5).map {
            Feed.Post(id: $0, author: ["ana", "bo", "cy"][$0 % 3], text: "post number \($0)")
        }))
server.setRoute(
    "/api/feed.json",
    LoopbackResponse.ok(feedJSON, contentType: "application/json")
        .behaving(.delayed(seconds: 0.2)))

let manager = ObjectManager()
let request = ObjectRequest(url: server.url("/api/feed.json"))
let decoder = JSONObjectDecoder<Feed>()

// Two screens show the same feed. Each is a user; neither knows about the other.
let done = DispatchSemaphore(value: 0)
let timeline = ObjectUser(request: request, decoder: decoder) { feed, origin in
    print("timeline: \(feed.posts.count) posts (from \(origin))")
    done.signal()
}
let badge = ObjectUser(request: request, decoder: decoder) { feed, origin in
    print("badge:    \(Set(feed.posts.map(\.author)).count) authors (from \(origin))")
    done.signal()
}
manager.manage(timeline)
manager.manage(badge)
done.wait()
done.wait()

// Code with no user object awaits the same shared object.
let feed = try await manager.object(for: request, decoder: decoder)
print("await:    first post is \"\(feed.posts[0].text)\"")

let statistics = manager.statistics
print(
    """

    requests: \(statistics.requests), HTTP requests: \(statistics.networkRequests), \
    decodes: \(statistics.decodes), memory hits: \(statistics.memoryHits), coalesced: \(statistics.coalescedJoins)
    """)
precondition(statistics.networkRequests == 1 && statistics.decodes == 1, "one download, one decode")

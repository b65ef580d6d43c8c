// The README's quick start for Linux (its `async` snippet), as an app would write it. `.ci/run`
// checks that every Linux snippet of the README appears here unchanged, then builds this package.

import Foundation
import ManagedCache

struct Feed: Decodable, Sendable { var title: String }

let manager = ObjectManager()  // loading buffer 12, memory cache 20 objects / 64 MiB, no file cache
do {
    let request = ObjectRequest(url: URL(string: "https://example.com/feed.json")!)
    print(try await manager.object(for: request, decoder: JSONObjectDecoder<Feed>()).title)
} catch .httpStatus(let code) { print("HTTP \(code)") } catch { print(error) }

// The path of one call, for `scripts/path-of-one-call.sh`: `manage(user)` for a URL no cache
// holds, with a `FileCache` and the default policy, until the user's `managedObjectReady`.
// Run as `setup` it builds the same objects and manages nothing; the script compares the
// coverage of the two runs, so the files it lists are those whose code ran for the call alone.
import Dispatch
import Foundation
import LoopbackServer
import ManagedCache

/// Counts the bytes: the smallest decoder, so the decoding stop is one function.
struct ByteCounter: ObjectDecoding {
    func decode(_ data: LoadedData) throws -> Int { try data.bytes().count }
}

/// Signals when its one callback arrives.
final class ProbeUser: ManagedObjectUser {
    let objectRequest: ObjectRequest?
    let objectDecoder = ByteCounter()
    let called = DispatchSemaphore(value: 0)

    init(url: URL) { objectRequest = ObjectRequest(url: url) }

    func managedObjectReady(_ count: Int, origin: DataOrigin, request: ObjectRequest) { called.signal() }
    func managedObjectFailed(_ error: ManagedCacheError, request: ObjectRequest) { called.signal() }
}

let managesOneUser = CommandLine.arguments.dropFirst().first == "call"
let server = try LoopbackServer()
server.setRoute("/object", .ok(Data(repeating: 7, count: 1_000)))
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("path-of-one-call-\(getpid())")
defer { try? FileManager.default.removeItem(at: directory) }
var configuration = ObjectManager.Configuration()
configuration.fileCache = try FileCache(directory: directory)
let manager = ObjectManager(configuration: configuration)
let user = ProbeUser(url: server.url("/object"))
if managesOneUser {
    manager.manage(user)
    guard user.called.wait(timeout: .now() + 30) == .success else { fatalError("no callback within 30 s") }
}
// Both runs end the same way, the manager alive: its shutdown is not part of the path.
Thread.sleep(forTimeInterval: 0.2)
if managesOneUser {
    // The manager's lock sections for the call, from `manage` to the fetch's end.
    print("manager lock sections: \(manager.lockSectionCount)")
}
withExtendedLifetime((manager, user, server)) {}

import Foundation
import LoopbackServer
import TestSupport
import Testing

@testable import ManagedCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A downloaded body kept in memory is stored at its size, not with the slack of a buffer grown
/// chunk by chunk: a decoder that keeps the bytes keeps that slack in the
/// memory cache, which counts only the bytes.
@Suite(.offCooperativePool) struct BodyMemoryTests {
    /// 100,000 bytes, grown by appending the pieces FoundationNetworking delivers, took a buffer
    /// of 122,888 bytes.
    static let bodySize = 100_000

    /// A server that sends bodies in pieces of 20,000 bytes, 20 ms apart, so that a body arrives
    /// in several chunks (sent at once over loopback, it may arrive in one).
    static func pacedServer() throws -> LoopbackServer {
        try LoopbackServer(configuration: .init(bytesPerSecond: 1_000_000))
    }

    @Test func aBodyWithAnAnnouncedLengthIsAllocatedAtItsSize() async throws {
        let server = try Self.pacedServer()
        let body = fixtureBody("sized", count: Self.bodySize)
        server.setRoute("/sized", .ok(body))
        let data = try await makeNetworkManager().object(for: ObjectRequest(url: server.url("/sized")), decoder: DataDecoder())
        #expect(data == body)
        try #require(Allocation.isMeasurable)
        #expect(Allocation.bytes(of: data) <= body.count + Self.slack, "allocated \(Allocation.bytes(of: data)) bytes")
    }

    @Test func aBodyWithoutALengthIsCompactedToItsSize() async throws {
        let server = try Self.pacedServer()
        let body = fixtureBody("unsized", count: Self.bodySize)
        // No `Content-Length`: the body ends when the server closes the connection.
        server.setRoute("/unsized", LoopbackResponse.ok(body).behaving(.truncate(afterBodyBytes: body.count, sendContentLength: false)))
        let data = try await makeNetworkManager().object(
            for: ObjectRequest(url: server.url("/unsized")), decoder: DataDecoder())
        #expect(data == body)
        try #require(Allocation.isMeasurable)
        #expect(Allocation.bytes(of: data) <= body.count + Self.slack, "allocated \(Allocation.bytes(of: data)) bytes")
    }

    /// A body received at its announced length is kept as it is; one that grew chunk by chunk
    /// (without a length, or past it) or used little of its reservation is copied to storage of
    /// its size; a slack under `compactionFloor` is left alone.
    @Test func onlyBodiesWithSlackAreCompacted() {
        let body = Data(count: Self.bodySize)
        #expect(!FetchReceiver.hasSlack(body, reserved: Self.bodySize))
        #expect(FetchReceiver.hasSlack(body, reserved: nil))
        #expect(FetchReceiver.hasSlack(body, reserved: 2 * Self.bodySize))
        #expect(!FetchReceiver.hasSlack(Data(count: FetchReceiver.compactionFloor - 1), reserved: nil))
        // A small body under a large announced length leaves the reservation's unused part.
        #expect(FetchReceiver.hasSlack(Data(count: 10), reserved: Self.bodySize))
        // More bytes than announced grew past the reservation, chunk by chunk.
        #expect(FetchReceiver.hasSlack(body + Data(count: 10), reserved: Self.bodySize))
        #expect(!FetchReceiver.hasSlack(body.prefix(Self.bodySize - 100), reserved: Self.bodySize))
        let compacted = FetchReceiver.compacted(fixtureBody("compacted", count: 10_000))
        #expect(compacted == fixtureBody("compacted", count: 10_000))
        #expect(FetchReceiver.compacted(Data()).isEmpty)
    }

    /// What the allocator may add to a block of ~100 KB (its rounding, a page at most).
    static let slack = 4_096 + 16
}

/// The size of the heap block behind a `Data` (only for a `Data` that owns a block from its start:
/// one built by the download, never a slice or a mapped file).
private enum Allocation {
    #if canImport(Glibc)
    private typealias UsableSize = @convention(c) (UnsafeMutableRawPointer?) -> Int
    /// glibc's `malloc_usable_size`, looked up at run time (`malloc.h` is not in the Glibc module).
    private static let usableSize: UsableSize? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size")
        .map { unsafeBitCast($0, to: UsableSize.self) }
    static var isMeasurable: Bool { usableSize != nil }
    static func bytes(of data: Data) -> Int {
        data.withUnsafeBytes { usableSize?(UnsafeMutableRawPointer(mutating: $0.baseAddress)) ?? 0 }
    }
    #elseif canImport(Darwin)
    static var isMeasurable: Bool { true }
    static func bytes(of data: Data) -> Int { data.withUnsafeBytes { malloc_size($0.baseAddress) } }
    #else
    static var isMeasurable: Bool { false }
    static func bytes(of data: Data) -> Int { 0 }
    #endif
}

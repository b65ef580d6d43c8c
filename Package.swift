// swift-tools-version: 6.0
import PackageDescription

// ManagedCache has no package dependencies: everything below builds with the toolchain alone.
// Apple targets: iOS 15, macOS 12, tvOS 15, watchOS 8, visionOS 1 (what apps in the field support),
// and Mac Catalyst 15 (without it SwiftPM picks the SDK's oldest, 13.1, below what the image
// views use: `StateObject`, `onChange` (14), `CADisplayLink.preferredFrameRateRange` (15)).
// The engine's lock is a pthread mutex on Linux (`Synchronization.Mutex` spins there before it
// waits) and an `os_unfair_lock` on Apple platforms, where `Mutex` needs iOS 18
// (Sources/ManagedCacheLocking/Lock.swift says why; `-DMANAGEDCACHE_SWIFT_MUTEX` swaps in `Mutex`).
let package = Package(
    name: "ManagedCache",
    // ManagedCacheUIKit's spoken strings are English resources (Sources/ManagedCacheUIKit/Resources).
    defaultLocalization: "en",
    platforms: [.iOS(.v15), .macOS(.v12), .macCatalyst(.v15), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
    products: [
        .library(name: "ManagedCache", targets: ["ManagedCache"]),
        .library(name: "ManagedCacheUIKit", targets: ["ManagedCacheUIKit"]),
    ],
    targets: [
        // The package's lock type: a pthread mutex on Linux, an `os_unfair_lock` on Apple platforms.
        .target(name: "ManagedCacheLocking"),
        .target(name: "ManagedCache", dependencies: ["ManagedCacheLocking"]),
        .target(
            name: "ManagedCacheUIKit", dependencies: ["ManagedCache", "ManagedCacheLocking"],
            resources: [.process("Resources")]
        ),
        // A small HTTP/1.1 server on 127.0.0.1 that misbehaves on request. The tests, the
        // examples and the benchmarks use it; it is not a product.
        .target(name: "LoopbackServer", dependencies: ["ManagedCacheLocking"]),
        // Synthetic PNG images for the tests and the examples (valid, patterned, seeded). A
        // test-support target, so no library product shows fixture types to apps.
        .target(name: "ImageFixtures", dependencies: ["ManagedCache"], path: "Tests/ImageFixtures"),
        // Child processes started with posix_spawn, for the tests and the benchmarks (not
        // Foundation's Process, whose run() crashes now and then on Linux with Swift 6.3.1).
        .target(name: "ChildProcesses", dependencies: ["ManagedCacheLocking"], path: "Tests/ChildProcesses"),
        // Shared test fixtures: temporary directories, bounded waits, recording users.
        .target(
            name: "TestSupport",
            dependencies: ["ManagedCache", "ManagedCacheLocking", "LoopbackServer", "ChildProcesses"],
            path: "Tests/TestSupport"
        ),
        .executableTarget(
            name: "Feed",
            dependencies: ["ManagedCache", "ManagedCacheUIKit", "LoopbackServer", "ImageFixtures", "ExampleSupport"],
            path: "Examples/Feed"
        ),
        // The benchmark program: `swift run -c release ManagedCacheBenchmarks [filter] [--quick]`.
        // Its own small harness; not part of the tests' verdict.
        .executableTarget(
            name: "ManagedCacheBenchmarks",
            dependencies: ["ManagedCache", "LoopbackServer", "ManagedCacheLocking", "ChildProcesses", "HeapProbe"],
            path: "Benchmarks/Sources"
        ),
        // The soak: `swift run -c release ManagedCacheSoak [--seconds 60]`. An app-like
        // mix under a 256-descriptor limit; fails on a leak or a wrong object. Not a unit test.
        .executableTarget(
            name: "ManagedCacheSoak",
            dependencies: ["ManagedCache", "LoopbackServer", "ManagedCacheLocking", "HeapProbe", "ChildProcesses"],
            path: "Benchmarks/Soak"
        ),
        // glibc's malloc statistics for the soak's memory samples (a C target: Swift's Glibc
        // module does not export malloc.h). Answers -1 on other C libraries.
        .target(name: "HeapProbe", path: "Benchmarks/HeapProbe"),
        // The path of one `manage` call, listed by scripts/path-of-one-call.sh.
        .executableTarget(
            name: "PathOfOneCall", dependencies: ["ManagedCache", "LoopbackServer"],
            path: "Benchmarks/PathOfOneCall"
        ),
        // A lock for the examples that an app shipping for iOS 15 could write the same way.
        .target(name: "ExampleSupport", path: "Examples/Support"),
        .executableTarget(
            name: "ImageFeatures",
            dependencies: ["ManagedCache", "ManagedCacheUIKit", "LoopbackServer", "ImageFixtures", "ExampleSupport"],
            path: "Examples/ImageFeatures"
        ),
        .executableTarget(
            name: "JSONFeed",
            dependencies: ["ManagedCache", "LoopbackServer"],
            path: "Examples/JSONFeed"
        ),
        .executableTarget(
            name: "CustomUser",
            dependencies: ["ManagedCache", "LoopbackServer", "ExampleSupport"],
            path: "Examples/CustomUser"
        ),
        .executableTarget(
            name: "LargeFiles",
            dependencies: ["ManagedCache", "LoopbackServer"],
            path: "Examples/LargeFiles"
        ),
        .executableTarget(
            name: "CustomFileCache",
            dependencies: ["ManagedCache", "LoopbackServer", "ExampleSupport"],
            path: "Examples/CustomFileCache"
        ),
        // What the crash writer stores, shared by the writer and the tests that check it.
        .target(name: "CrashPayload", path: "Tests/CrashPayload"),
        // A child process for the file-cache crash tests: writes entries until it is killed.
        .executableTarget(
            name: "FileCacheCrashWriter",
            dependencies: ["ManagedCache", "ManagedCacheLocking", "CrashPayload"],
            path: "Tests/FileCacheCrashWriter"
        ),
        // A child process for the descriptor-exhaustion test: loads under a lowered RLIMIT_NOFILE.
        .executableTarget(
            name: "DescriptorExhaustionChild",
            dependencies: ["ManagedCache", "ManagedCacheLocking", "LoopbackServer"],
            path: "Tests/DescriptorExhaustionChild"
        ),
        // The body of the streaming-memory test, shared by the test and its child.
        .target(name: "StreamingPayload", path: "Tests/StreamingPayload"),
        // A child process for the streaming-memory test: downloads 200 MB and reports its peak memory.
        .executableTarget(
            name: "StreamingMemoryChild",
            dependencies: ["ManagedCache", "ManagedCacheLocking", "StreamingPayload"],
            path: "Tests/StreamingMemoryChild"
        ),
        // A child process for the busy-pool test: counts the chunks delivered while every
        // thread of the cooperative pool computes.
        .executableTarget(
            name: "BusyPoolChild",
            dependencies: ["ManagedCache", "ManagedCacheLocking"],
            path: "Tests/BusyPoolChild"
        ),
        // A child process for the private-files tests: makes every kind of file the package
        // creates under the umask it is given (a process-wide setting the tests must not change).
        .executableTarget(
            name: "PrivateFilesChild",
            dependencies: ["ManagedCache", "LoopbackServer"],
            path: "Tests/PrivateFilesChild"
        ),
        .testTarget(
            name: "ManagedCacheTests",
            // The child executables are listed so that they are built before the tests that launch them.
            dependencies: ["ManagedCache", "ManagedCacheLocking", "TestSupport", "ChildProcesses", "LoopbackServer", "CrashPayload",
                           "FileCacheCrashWriter",
                           "DescriptorExhaustionChild", "StreamingPayload", "StreamingMemoryChild", "BusyPoolChild", "PrivateFilesChild"]
        ),
        .testTarget(
            name: "ManagedCacheUIKitTests",
            dependencies: [
                "ManagedCacheUIKit", "ManagedCache", "ManagedCacheLocking", "TestSupport", "LoopbackServer", "ImageFixtures",
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "LoopbackServerTests",
            dependencies: ["LoopbackServer", "ManagedCacheLocking"]
        ),
        // Interoperability with a real nginx, which the tests start themselves (skipped, by
        // name, where nginx is not installed; `.ci/run` installs it).
        .testTarget(
            name: "InteropTests",
            dependencies: ["ManagedCache", "ManagedCacheLocking", "TestSupport", "ChildProcesses"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

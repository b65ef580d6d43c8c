// swift-tools-version: 6.0
import PackageDescription

// ManagedCache has no package dependencies: everything below builds with the toolchain alone.
// Apple targets are iOS 18 / macOS 15 (and their siblings) because the engine's locks are
// `Synchronization.Mutex`, which needs them; an app shipping in 2026 supports iOS 18 and later.
let package = Package(
    name: "ManagedCache",
    platforms: [.iOS(.v18), .macOS(.v15), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "ManagedCache", targets: ["ManagedCache"]),
        .library(name: "ManagedCacheUIKit", targets: ["ManagedCacheUIKit"]),
    ],
    targets: [
        // The package's lock type: `Mutex`, or a pthread mutex in ThreadSanitizer builds.
        .target(name: "ManagedCacheLocking"),
        .target(name: "ManagedCache", dependencies: ["ManagedCacheLocking"]),
        .target(name: "ManagedCacheUIKit", dependencies: ["ManagedCache", "ManagedCacheLocking"]),
        // A small HTTP/1.1 server on 127.0.0.1 that misbehaves on request. The tests, the
        // examples and the benchmarks use it; it is not a product.
        .target(name: "LoopbackServer", dependencies: ["ManagedCacheLocking"]),
        // Shared test fixtures: temporary directories, bounded waits, recording users.
        .target(
            name: "TestSupport",
            dependencies: ["ManagedCache", "ManagedCacheLocking", "LoopbackServer"],
            path: "Tests/TestSupport"
        ),
        .executableTarget(
            name: "Feed",
            dependencies: ["ManagedCache", "ManagedCacheUIKit", "LoopbackServer"],
            path: "Examples/Feed"
        ),
        // The benchmark program: `swift run -c release ManagedCacheBenchmarks [filter] [--quick]`.
        // Its own small harness; not part of the tests' verdict.
        .executableTarget(
            name: "ManagedCacheBenchmarks",
            dependencies: ["ManagedCache", "LoopbackServer"],
            path: "Benchmarks/Sources"
        ),
        // The soak (issue 19): `swift run -c release ManagedCacheSoak [--seconds 60]`. An app-like
        // mix under a 256-descriptor limit; fails on a leak or a wrong object. Not a unit test.
        .executableTarget(
            name: "ManagedCacheSoak",
            dependencies: ["ManagedCache", "LoopbackServer"],
            path: "Benchmarks/Soak"
        ),
        .executableTarget(
            name: "JSONFeed",
            dependencies: ["ManagedCache", "LoopbackServer"],
            path: "Examples/JSONFeed"
        ),
        .executableTarget(
            name: "CustomUser",
            dependencies: ["ManagedCache", "LoopbackServer"],
            path: "Examples/CustomUser"
        ),
        .executableTarget(
            name: "LargeFiles",
            dependencies: ["ManagedCache", "LoopbackServer"],
            path: "Examples/LargeFiles"
        ),
        .executableTarget(
            name: "CustomFileCache",
            dependencies: ["ManagedCache", "LoopbackServer"],
            path: "Examples/CustomFileCache"
        ),
        // What the crash writer stores, shared by the writer and the tests that check it.
        .target(name: "CrashPayload", path: "Tests/CrashPayload"),
        // A child process for the file-cache crash tests: writes entries until it is killed.
        .executableTarget(
            name: "FileCacheCrashWriter",
            dependencies: ["ManagedCache", "CrashPayload"],
            path: "Tests/FileCacheCrashWriter"
        ),
        // A child process for the descriptor-exhaustion test: loads under a lowered RLIMIT_NOFILE.
        .executableTarget(
            name: "DescriptorExhaustionChild",
            dependencies: ["ManagedCache", "ManagedCacheLocking", "LoopbackServer"],
            path: "Tests/DescriptorExhaustionChild"
        ),
        .testTarget(
            name: "ManagedCacheTests",
            // The child executables are listed so that they are built before the tests that launch them.
            dependencies: ["ManagedCache", "ManagedCacheLocking", "TestSupport", "LoopbackServer", "CrashPayload", "FileCacheCrashWriter",
                           "DescriptorExhaustionChild"]
        ),
        .testTarget(
            name: "ManagedCacheUIKitTests",
            dependencies: ["ManagedCacheUIKit", "ManagedCache", "ManagedCacheLocking", "TestSupport", "LoopbackServer"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "LoopbackServerTests",
            dependencies: ["LoopbackServer", "ManagedCacheLocking"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

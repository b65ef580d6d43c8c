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
        .target(name: "ManagedCache"),
        .target(name: "ManagedCacheUIKit", dependencies: ["ManagedCache"]),
        // A small HTTP/1.1 server on 127.0.0.1 that misbehaves on request. The tests, the
        // examples and the benchmarks use it; it is not a product.
        .target(name: "LoopbackServer"),
        // Shared test fixtures: temporary directories, bounded waits, recording users.
        .target(
            name: "TestSupport",
            dependencies: ["ManagedCache", "LoopbackServer"],
            path: "Tests/TestSupport"
        ),
        .executableTarget(
            name: "Feed",
            dependencies: ["ManagedCache", "ManagedCacheUIKit", "LoopbackServer"],
            path: "Examples/Feed"
        ),
        // A child process for the file-cache crash tests: writes entries until it is killed.
        .executableTarget(
            name: "FileCacheCrashWriter",
            dependencies: ["ManagedCache"],
            path: "Tests/FileCacheCrashWriter"
        ),
        .testTarget(
            name: "ManagedCacheTests",
            // FileCacheCrashWriter is listed so that it is built before the tests that launch it.
            dependencies: ["ManagedCache", "TestSupport", "LoopbackServer", "FileCacheCrashWriter"]
        ),
        .testTarget(
            name: "ManagedCacheUIKitTests",
            dependencies: ["ManagedCacheUIKit", "ManagedCache", "TestSupport", "LoopbackServer"]
        ),
        .testTarget(
            name: "LoopbackServerTests",
            dependencies: ["LoopbackServer"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

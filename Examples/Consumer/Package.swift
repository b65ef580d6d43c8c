// swift-tools-version: 6.0
// A package that uses ManagedCache the way the README's Installation says: the repository cloned
// beside it, as `../ManagedCache` (SwiftPM names a local package after its folder). CI builds a
// copy of it placed beside a link named `ManagedCache` to the checkout (`.ci/run`, step
// "consumer package"); to build it by hand, do the same. Its code is the README's Linux snippet,
// which that step checks is still the README's word for word.
import PackageDescription

let package = Package(
    name: "Consumer",
    platforms: [.iOS(.v15), .macOS(.v12)],
    dependencies: [.package(path: "../ManagedCache")],
    targets: [
        .executableTarget(name: "Consumer", dependencies: [.product(name: "ManagedCache", package: "ManagedCache")])
    ]
)

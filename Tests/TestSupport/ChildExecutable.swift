import Foundation

/// A child executable of the package (`DescriptorExhaustionChild`, `StreamingMemoryChild`), built
/// by SwiftPM beside the test bundle (or in the package's `.build`).
public func childExecutable(named name: String) throws -> URL {
    var directories: [URL] = []
    var current = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    for _ in 0..<5 {
        directories.append(current)
        current = current.deletingLastPathComponent()
    }
    let build = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build")
    for configuration in ["debug", "release"] {
        directories.append(build.appendingPathComponent(configuration))
    }
    for directory in directories {
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    throw ChildExecutableNotFound(name: name, searched: directories.map(\.path))
}

/// `childExecutable(named:)` found nothing.
public struct ChildExecutableNotFound: Error, CustomStringConvertible {
    /// The executable's name.
    public var name: String
    /// Where it was looked for.
    public var searched: [String]
    public var description: String { "\(name) not found; looked in: \(searched.joined(separator: ", "))" }
}

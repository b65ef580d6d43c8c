import ChildProcesses
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `SpawnedProcess`, which the tests start their children with: what the child gets of the
/// parent, and how its end is told.
@Suite(.offCooperativePool, .spawnsChildProcesses) struct SpawnedProcessTests {
    #if os(Linux)
    /// A descriptor the parent opened without close-on-exec stays the parent's: the child has
    /// its standard streams and nothing else (a lock or a socket it inherited would outlive the
    /// test that made it).
    @Test func theChildGetsTheStandardStreamsAndNoOtherDescriptor() throws {
        let open = Glibc.open("/dev/null", O_RDONLY)
        #expect(open > 2)
        defer { close(open) }
        // `ls` lists its own descriptors, plus the one it opens to read the directory.
        let child = try SpawnedProcess(
            executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", "exec ls /proc/self/fd"], standardOutput: .pipe)
        let listed = String(decoding: child.readOutputToEnd(), as: UTF8.self).split(separator: "\n").compactMap { Int32($0) }
        child.waitUntilExit()
        #expect(child.terminationReason == .exit && child.terminationStatus == 0)
        #expect(Set(listed).isSuperset(of: [0, 1, 2]))
        #expect(!listed.contains(open))
        #expect(listed.count <= 4)
    }
    #endif

    @Test func anExitStatusAndAKillingSignalAreToldApart() throws {
        let exiting = try SpawnedProcess(executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", "exit 3"])
        exiting.waitUntilExit()
        #expect(exiting.terminationReason == .exit)
        #expect(exiting.terminationStatus == 3)
        #expect(!exiting.isRunning)

        let sleeping = try SpawnedProcess(executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", "sleep 60"])
        #expect(sleeping.isRunning)
        sleeping.send(SIGTERM)  // with no signal blocked in the child, SIGTERM ends it
        sleeping.waitUntilExit()
        #expect(sleeping.terminationReason == .uncaughtSignal)
        #expect(sleeping.terminationStatus == SIGTERM)
    }
}

#if canImport(Darwin)
import Darwin
func modified(_ info: stat) -> Int { info.st_mtimespec.tv_sec }
#elseif canImport(Glibc)
import Glibc
func modified(_ info: stat) -> Int { info.st_mtim.tv_sec }
func mountTmpfs() { _ = Glibc.mount("tmpfs", "/tmp/x", "tmpfs", 0, nil) }
#endif

#if os(Linux)
let descriptors = "/proc/self/fd"
#else
let descriptors: String? = nil
#endif

// A comment about /proc and st_mtim is not code.
func unsupported() -> Bool { errno == EOPNOTSUPP }
let hostile = "/proc/self/environ"  // portability-lint: allow a hostile key string, never read
let label = "a `Dictionary` + `Mutex` baseline"
func pause() async throws { try await Task.sleep(nanoseconds: 1_000_000_000) }
@available(macOS 15, iOS 18, *)
final class Worker: TaskExecutor {}  // portability-lint: allow declared @available

import Glibc

func modified(_ info: stat) -> Int { info.st_mtim.tv_sec }  // lint-expect
func mount() { _ = Glibc.mount("a", "b", "c", 0, nil) }  // lint-expect
func unsupported() -> Bool { errno == 95 }  // lint-expect
let descriptors = "/proc/self/fd"  // lint-expect
func code() -> POSIXErrorCode? { POSIXErrorCode(rawValue: 28) }  // lint-expect
let started = ContinuousClock.now  // lint-expect
func pause() async throws { try await Task.sleep(for: .seconds(1)) }  // lint-expect
final class Worker: TaskExecutor {}  // lint-expect

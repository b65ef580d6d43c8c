#if canImport(Darwin)
let changed = 1
#else
let stamp = 2
#endif

#if os(Linux)
#else
func age(_ info: stat) -> Int { info.st_ctim.tv_sec }  // lint-expect
#endif

#if canImport(Glibc)
#if DEBUG
let fine = "/proc/self/status"
#endif
#endif

#if DEBUG
#if canImport(Glibc)
let alsoFine = "/proc/meminfo"
#elseif canImport(Darwin)
let notFine = "/proc/meminfo"  // lint-expect
#endif
#endif

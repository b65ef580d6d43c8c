/// Placeholder, replaced below.
struct MemoryFootprintChild {
    static let flag = "--memory-child"
    let arguments: [String: String]
    func run() -> Int32 { 0 }
}

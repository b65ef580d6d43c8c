/// Keeps the optimizer from deleting work whose result a benchmark does not otherwise use.
enum BlackHole {
    /// Consumes `value` in a way the optimizer cannot see through.
    @inline(never)
    static func consume<T>(_ value: T) {
        withExtendedLifetime(value) {}
    }
}

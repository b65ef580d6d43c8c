import Foundation

/// Runs `async` work from the synchronous benchmark thread and waits for it there. Scenarios run
/// on the main thread, never on a Swift concurrency thread, so blocking here starves nobody.
enum AsyncBridge {
    /// Starts `body` in a task and blocks until it returns or throws.
    static func wait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let outcome = Locked<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.value!.get()
    }
}

import Foundation

/// Runs `body` on a thread of its own and awaits its result. Long synchronous work in a test — a
/// child process, a scan of the tree, a big simulation — must not hold one of the cooperative
/// pool's threads (two on a 2-core machine), which every other test of the run shares: a starved
/// pool turned timing tests elsewhere into flakes. Assert on the result, back in the test.
package func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.start()
    }
}

/// ``offPool(_:)`` for work that cannot fail.
package func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.start()
    }
}

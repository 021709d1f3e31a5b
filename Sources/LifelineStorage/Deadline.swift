import Synchronization

/// Runs `body` and answers within `limit`: its result, or ``StoreError/Code/unavailable`` naming
/// the bound when it has not finished by then (the body is cancelled and left to end on its own;
/// nothing waits for it). How a store keeps a request from waiting on a database that does not
/// answer — a restart, a lost connection, a held lock — longer than a documented bound.
package func withDeadline<T: Sendable>(
    _ limit: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let once = Once<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            once.set(continuation)
            let work = Task {
                do {
                    once.resume(with: .success(try await body()))
                } catch {
                    once.resume(with: .failure(error))
                }
            }
            let timer = Task {
                try? await Task.sleep(for: limit)
                guard !Task.isCancelled else { return }
                once.resume(
                    with: .failure(
                        StoreError(
                            .unavailable, "the database did not answer within \(limit.seconds) s",
                            cause: "\(what): deadline")))
                work.cancel()
            }
            once.onFinish { timer.cancel() }
        }
    } onCancel: {
        once.resume(with: .failure(CancellationError()))
    }
}

/// A continuation resumed once, whoever comes first.
private final class Once<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var early: Result<T, any Error>?
        var finish: (@Sendable () -> Void)?
        var done = false
    }

    private let state = Mutex(State())

    func set(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            guard let early = state.early else {
                state.continuation = continuation
                return nil
            }
            state.early = nil
            return early
        }
        if let early { continuation.resume(with: early) }
    }

    func onFinish(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            guard !state.done else { return true }
            state.finish = body
            return false
        }
        if now { body() }
    }

    func resume(with result: Result<T, any Error>) {
        let (continuation, finish) = state.withLock {
            state -> (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?) in
            guard !state.done else { return (nil, nil) }
            state.done = true
            defer {
                state.continuation = nil
                state.finish = nil
            }
            if state.continuation == nil { state.early = result }
            return (state.continuation, state.finish)
        }
        continuation?.resume(with: result)
        finish?()
    }
}

extension Duration {
    /// Whole and fractional seconds, for messages ("5 s", "0.5 s").
    package var seconds: String {
        let value = Double(components.seconds) + Double(components.attoseconds) / 1e18
        return value == value.rounded() ? String(Int64(value)) : String(value)
    }
}

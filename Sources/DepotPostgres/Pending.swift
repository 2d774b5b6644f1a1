#if Postgres
import Foundation
import NIOCore

/// The result of a statement, or of work on an event loop, for the one thread that waits for it.
/// A statement's is filled by the waiting thread itself, reading its connection's answers
/// (``PostgresSession/wait(_:)``); a side connection's (postgres-nio, on its event loop) is
/// filled there (`set`) while the calling thread blocks on a condition (`wait(until:)`, always
/// with a deadline).
///
/// Nothing here runs on Swift's cooperative pool, so a caller that blocks a cooperative thread
/// can never starve it.
final class Pending<T: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `result` is guarded by `condition`.
    private let condition = NSCondition()
    private var result: Result<T, any Error>?
    private var failureHandler: (@Sendable (any Error) -> Void)?

    init() {}

    /// A pending already holding `result`.
    init(_ result: Result<T, any Error>) { self.result = result }

    /// Sets the result unless one arrived first; whether this one was taken.
    @discardableResult
    func set(_ value: Result<T, any Error>) -> Bool {
        let (taken, handler): (Bool, (@Sendable (any Error) -> Void)?) = condition.withLock {
            guard result == nil else { return (false, nil) }
            result = value
            condition.broadcast()
            defer { failureHandler = nil }
            return (true, failureHandler)
        }
        if let handler, case .failure(let error) = value { handler(error) }
        return taken
    }

    /// Fails the pending, unless a result arrived first.
    func fail(_ error: any Error) { set(.failure(error)) }

    /// Runs `handler` with the failure, if the result is one (at once when it has arrived,
    /// else on the thread that sets it). For statements nobody waits for.
    func onFailure(_ handler: @escaping @Sendable (any Error) -> Void) {
        let arrived: Result<T, any Error>? = condition.withLock {
            if result == nil { failureHandler = handler }
            return result
        }
        if case .failure(let error)? = arrived { handler(error) }
    }

    /// Blocks until the result arrives or `deadline` passes (nil then).
    func wait(until deadline: Date) -> Result<T, any Error>? {
        condition.withLock {
            while result == nil {
                if !condition.wait(until: deadline) { break }
            }
            return result
        }
    }

    /// The result if it has arrived, without waiting.
    var current: Result<T, any Error>? { condition.withLock { result } }
}
#endif

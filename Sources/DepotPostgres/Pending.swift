#if Postgres
import Foundation
import NIOConcurrencyHelpers
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
    // @unchecked Sendable: `result`, `failureHandler` and `waiters` are guarded by `lock`.
    //
    // A lock (one allocation, a pthread mutex inside it) rather than a condition: most results
    // are set by the thread that waits for them (a statement's, read by the waiting thread
    // itself), which never blocks; the condition is made by the first wait that has to.
    private let lock = NIOLock()
    private var result: Result<T, any Error>?
    private var failureHandler: (@Sendable (any Error) -> Void)?
    /// What a blocked ``wait(until:)`` waits on; made by the first one.
    private var waiters: NSCondition?

    init() {}

    /// A pending already holding `result`.
    init(_ result: Result<T, any Error>) { self.result = result }

    /// Sets the result unless one arrived first; whether this one was taken.
    @discardableResult
    func set(_ value: Result<T, any Error>) -> Bool {
        let (taken, handler, blocked): (Bool, (@Sendable (any Error) -> Void)?, NSCondition?) = lock.withLock {
            guard result == nil else { return (false, nil, nil) }
            result = value
            defer { failureHandler = nil }
            return (true, failureHandler, waiters)
        }
        if let blocked {
            // A waiter checks the result holding the condition's lock: taking it here means it
            // is either waiting (and woken now) or has not checked yet (and sees the result).
            blocked.lock()
            blocked.broadcast()
            blocked.unlock()
        }
        if let handler, case .failure(let error) = value { handler(error) }
        return taken
    }

    /// Fails the pending, unless a result arrived first.
    func fail(_ error: any Error) { set(.failure(error)) }

    /// Runs `handler` with the failure, if the result is one (at once when it has arrived,
    /// else on the thread that sets it). For statements nobody waits for.
    func onFailure(_ handler: @escaping @Sendable (any Error) -> Void) {
        let arrived: Result<T, any Error>? = lock.withLock {
            if result == nil { failureHandler = handler }
            return result
        }
        if case .failure(let error)? = arrived { handler(error) }
    }

    /// Blocks until the result arrives or `deadline` passes (nil then).
    func wait(until deadline: Date) -> Result<T, any Error>? {
        let condition: NSCondition? = lock.withLock {
            guard result == nil else { return nil }
            if waiters == nil { waiters = NSCondition() }
            return waiters
        }
        guard let condition else { return current }
        condition.lock()
        defer { condition.unlock() }
        while current == nil {
            if !condition.wait(until: deadline) { break }
        }
        return current
    }

    /// The result if it has arrived, without waiting.
    var current: Result<T, any Error>? { lock.withLock { result } }
}
#endif

import Dispatch

/// Runs blocking work (a driver call that waits on a socket, a lock or the disk) for an `async`
/// API whose driver has no asynchronous path of its own, off Swift's cooperative pool (which
/// must never block) and off the caller's task.
///
/// On one concurrent dispatch queue: libdispatch reuses its threads, and adds threads while those
/// it has are blocked, up to its own limit (further calls then wait in the queue, where a thread
/// per call would have made one more thread). Async writes on PostgreSQL, a thread per call
/// against this queue, same run (2026-12-06, 2 cores, `depot-postgres-bench writers N 3 indexed
/// tasks`): 8 tasks 209–237 against 160–164 µs of client CPU per commit; 64 tasks 1,931–2,657
/// against 2,963–3,083 commits/s.
package enum BlockingCalls {
    /// `Sendable`: dispatch queues are safe to use from any thread.
    private static let queue = DispatchQueue(label: "depot.blocking-calls", attributes: .concurrent)

    /// Runs `body` on the queue; its result or error once it returned.
    package static func run<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}

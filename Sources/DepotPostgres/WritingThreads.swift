#if Postgres
import DepotSupport
import Foundation

/// The threads inside one driver's `write` (by `ThreadIndex`), so that a second write on the same
/// thread is refused (``PostgresDriverError/nestedWrite``): it would wait for a second connection
/// and could block on the first one's row locks forever. A set of small numbers under a lock held
/// for an insert or a removal (a thread's dictionary cost several thousand instructions per write:
/// an interpolated key and a boxed value).
///
/// `@unchecked Sendable`: `threads` is guarded by `lock`.
final class WritingThreads: @unchecked Sendable {
    private let lock = NSLock()
    private var threads: Set<Int> = []

    /// Enters the calling thread; false when it is inside a write already.
    func enter() -> Bool {
        let thread = ThreadIndex.current
        return lock.withLock { threads.insert(thread).inserted }
    }

    /// Leaves the calling thread (after ``enter()`` returned true).
    func leave() {
        let thread = ThreadIndex.current
        _ = lock.withLock { threads.remove(thread) }
    }
}
#endif

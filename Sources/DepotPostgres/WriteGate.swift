#if Postgres
import Foundation

/// Admits at most `slots` write transactions of one driver at a time; the others wait on the
/// client, before they lease a connection or take a snapshot.
///
/// Why: under `SERIALIZABLE`, PostgreSQL tracks reads with predicate locks on B-tree leaf pages.
/// A Depot write reads the key of the document it stores (absent for a new one) and inserts it
/// in the same leaf page, next to the keys other writers are inserting (sequential IDs, the
/// same index values). Two such transactions that overlap form a read/write cycle and one is
/// cancelled (40001, "identification as a pivot") even though they touch different rows; with
/// 64 overlapping writers most attempts fail and some exhaust their retries. Writers of one
/// driver waiting here never overlap, so they never cancel each other; writers of other drivers
/// (other hosts) still run concurrently and are retried as before.
final class WriteGate: @unchecked Sendable {
    // @unchecked Sendable: `busy` is guarded by `condition`.
    private let condition = NSCondition()
    private var busy = 0
    let slots: Int

    init(slots: Int) { self.slots = max(1, slots) }

    /// Takes a slot, waiting until `deadline` at most; false when none was free by then.
    func enter(until deadline: Date) -> Bool {
        condition.withLock {
            while busy >= slots {
                if !condition.wait(until: deadline) && busy >= slots { return false }
            }
            busy += 1
            return true
        }
    }

    /// A count shared by threads. `@unchecked Sendable`: `count` is only touched under `lock`
    /// (an `NSLock`: `Synchronization.Atomic` would raise the Apple platform floor).
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0

        func add(_ amount: Int) { lock.withLock { count += amount } }

        var value: Int { lock.withLock { count } }
    }

    /// Gives a slot back.
    func leave() {
        condition.withLock {
            busy -= 1
            condition.signal()
        }
    }
}
#endif

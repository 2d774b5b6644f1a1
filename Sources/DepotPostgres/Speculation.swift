#if Postgres
import Foundation

/// Decides, for one driver, whether a write's new document is inserted on trust (see
/// ``PostgresTransaction/putExpectingAbsent(_:forKey:in:existing:)``): one round trip less per
/// new document, at the price of running the write again when the key was there after all (a
/// park of a document that exists: an update). After such a miss the next `cooldown` inserts
/// wait for their answer; the cooldown doubles with each miss (up to 4,096) and falls back to
/// 32 once an insert on trust commits, so a workload of updates pays for about one miss in
/// every few thousand writes and a workload of new documents almost never waits.
///
/// `@unchecked Sendable`: `skip`, `cooldown` and `misses` are only touched under `lock` (an
/// `NSLock`: `Synchronization.Mutex` would raise the Apple platform floor). The write path
/// only: reads never touch it.
final class Speculation: @unchecked Sendable {
    private let lock = NSLock()
    private var skip = 0
    private var cooldown = Speculation.shortestCooldown
    private var misses = 0

    static let shortestCooldown = 32
    static let longestCooldown = 4_096

    /// Whether the next insert may be taken on trust (false during a cooldown, which it shortens).
    func admits() -> Bool {
        lock.withLock {
            guard skip > 0 else { return true }
            skip -= 1
            return false
        }
    }

    /// An insert taken on trust found its key present.
    func missed() {
        lock.withLock {
            misses += 1
            skip = cooldown
            cooldown = min(cooldown * 2, Self.longestCooldown)
        }
    }

    /// A write with inserts taken on trust committed.
    func held() {
        lock.withLock { cooldown = Self.shortestCooldown }
    }

    /// Inserts taken on trust that found their key present, since the driver opened.
    var missCount: Int { lock.withLock { misses } }
}
#endif

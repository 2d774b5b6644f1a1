#if Postgres
import Foundation

/// Keyspace handles (name → id and kind) shared by the driver's transactions, so that a
/// transaction does not look up a keyspace another one already found.
///
/// Correctness rests on the schema's `epoch` row: every drop of a keyspace increments it in the
/// dropping transaction, and each transaction reads it (pipelined with `BEGIN`) from its own
/// snapshot. Keyspaces that exist in a snapshot with epoch E exist in every snapshot with epoch
/// E (creating does not change ids; dropping changes the epoch), so entries are tagged with the
/// epoch they were seen at and used only by transactions reading the same epoch — whichever
/// host dropped or recreated a keyspace. Creations are published only after their commit.
/// `@unchecked Sendable`: `state` is only touched under `lock` (an `NSLock`: `Synchronization.Mutex`
/// would raise the package's Apple platform floor to macOS 15 / iOS 18).
final class KeyspaceCache: @unchecked Sendable {
    private struct State {
        var epoch: Int64 = .min
        var handles: [String: UInt32] = [:]
    }

    private let lock = NSLock()
    private var state = State()

    /// The handle of `name` for a transaction whose snapshot has `epoch`.
    func handle(named name: String, epoch: Int64) -> UInt32? {
        lock.withLock {
            if epoch > state.epoch { state = State(epoch: epoch) }
            return state.epoch == epoch ? state.handles[name] : nil
        }
    }

    /// Forgets the handles of epochs before `epoch` (a transaction saw that epoch: guesses from
    /// before it are stale).
    func advance(to epoch: Int64) {
        lock.withLock {
            if epoch > state.epoch { state = State(epoch: epoch) }
        }
    }

    /// The handle of `name` at the latest epoch the cache has seen, with that epoch: a guess
    /// for a transaction whose epoch has not arrived yet (it must check the epoch before
    /// trusting what it read with it).
    func latest(named name: String) -> (UInt32, Int64)? {
        lock.withLock { state.handles[name].map { ($0, state.epoch) } }
    }

    /// Remembers handles seen by a transaction whose snapshot has `epoch` (ignored when the
    /// cache has moved on to a later epoch).
    func store(_ handles: [String: UInt32], epoch: Int64) {
        guard !handles.isEmpty else { return }
        lock.withLock {
            if epoch > state.epoch { state = State(epoch: epoch) }
            guard state.epoch == epoch else { return }
            state.handles.merge(handles) { _, new in new }
        }
    }
}
#endif

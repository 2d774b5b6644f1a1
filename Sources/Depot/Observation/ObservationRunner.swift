import Dispatch
import Foundation

/// The engine of one iteration of a ``StoreObservation``: listens to the store's change sets,
/// re-reads on a queue of its own, and hands fresh values to an `AsyncThrowingStream`.
///
/// Coalescing: at most one read runs at a time. A matching change set that arrives while a read
/// is scheduled or running only sets `dirty`; when the read finishes, one more read follows.
/// So under any load there is at most one read in flight plus one pending, and the last
/// commit is always followed by a read that sees it. The stream keeps only the newest value
/// for a slow consumer (`.bufferingNewest(1)`).
///
/// `@unchecked Sendable`: `state` is guarded by `lock`; `store`, `filter`, `read` and `queue` are
/// immutable and Sendable; the continuation is Sendable.
final class ObservationRunner<Value: Sendable>: StoreObserver, @unchecked Sendable {
    private enum State {
        /// No read scheduled or running.
        case idle
        /// A read is scheduled or running; `dirty`: a change arrived meanwhile.
        case reading(dirty: Bool)
        /// Cancelled, failed or finished: nothing more happens.
        case stopped
    }

    private let store: Store
    private let aliases: Set<String>
    private let collections: Set<String>
    private let read: @Sendable (DocumentTransaction) throws -> Value
    private let continuation: AsyncThrowingStream<Value, any Error>.Continuation
    private let queue = DispatchQueue(label: "depot.observation")
    private let lock = NSLock()
    private var state = State.idle

    init(store: Store, aliases: Set<String>, collections: Set<String>,
         read: @escaping @Sendable (DocumentTransaction) throws -> Value,
         continuation: AsyncThrowingStream<Value, any Error>.Continuation) {
        self.store = store
        self.aliases = aliases
        self.collections = collections
        self.read = read
        self.continuation = continuation
    }

    /// Registers with the store, then schedules the first read (so no commit made after the
    /// first read's snapshot can be missed).
    func start() {
        store.addObserver(self)
        notify()
    }

    /// Stops: no more reads, unregistered from the store. Idempotent.
    func stop() {
        let wasRunning: Bool = lock.withLock {
            if case .stopped = state { return false }
            state = .stopped
            return true
        }
        if wasRunning { store.removeObserver(self) }
    }

    // MARK: StoreObserver

    /// Called on the committing thread (or the external watcher's): only flags and schedules.
    func store(_ store: Store, didCommit changes: ChangeSet) {
        if touches(changes) { notify() }
    }

    /// Whether a change set names one of the observed collections in one of the aliases.
    func touches(_ changes: ChangeSet) -> Bool {
        changes.collections.contains { part in
            aliases.contains(part.alias) && collections.contains(part.collection)
                && !(part.created.isEmpty && part.updated.isEmpty && part.deleted.isEmpty)
        }
    }

    // MARK: Reading

    private func notify() {
        let schedule: Bool = lock.withLock {
            switch state {
            case .idle:
                state = .reading(dirty: false)
                return true
            case .reading:
                state = .reading(dirty: true)
                return false
            case .stopped:
                return false
            }
        }
        if schedule { queue.async { [self] in runReads() } }
    }

    /// Reads until no change arrived during the last read. Runs on `queue`, never on the
    /// committing thread; each read is one synchronous read transaction.
    private func runReads() {
        while true {
            let proceed: Bool = lock.withLock {
                if case .stopped = state { return false }
                state = .reading(dirty: false)
                return true
            }
            if !proceed { return }
            let result = Result { try store.read(read) }
            switch result {
            case .success(let value):
                continuation.yield(value)
            case .failure(let error):
                continuation.finish(throwing: error)
                stop()
                return
            }
            let again: Bool = lock.withLock {
                switch state {
                case .reading(dirty: true): return true
                case .reading(dirty: false): state = .idle; return false
                case .idle, .stopped: return false
                }
            }
            if !again { return }
        }
    }
}

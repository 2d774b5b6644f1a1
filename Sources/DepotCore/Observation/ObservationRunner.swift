import Dispatch
import Foundation

/// The engine of one iteration of a ``StoreObservation``: listens to the store's change sets
/// and reads a fresh value, on a queue of its own, each time the consumer asks for one after a
/// change.
///
/// Coalescing is by demand: a matching change set only sets `dirty` (on the committing thread,
/// under the lock, nothing else). ``next()`` waits until `dirty` is set, clears it, and runs one
/// read. Every commit that arrives while the consumer is busy or a read runs sets the same
/// flag, so they merge into the next read: reads never outnumber the values handed out, and
/// the last commit is always followed by a read that sees it.
///
/// `@unchecked Sendable`: `dirty`, `waiter`, `stopped` and `failed` are guarded by `lock`; the
/// other fields are immutable and Sendable.
final class ObservationRunner<Value: Sendable>: StoreObserver, @unchecked Sendable {
    private let store: Store
    private let aliases: Set<String>
    private let collections: Set<String>
    private let read: @Sendable (DocumentTransaction) throws -> Value
    private let queue = DispatchQueue(label: "depot.observation")
    private let lock = NSLock()
    /// A read is due (true at start: the first value).
    private var dirty = true
    /// The consumer, suspended until `dirty` or `stopped`.
    private var waiter: CheckedContinuation<Void, Never>?
    private var stopped = false
    private var registered = false

    init(store: Store, aliases: Set<String>, collections: Set<String>,
         read: @escaping @Sendable (DocumentTransaction) throws -> Value) {
        self.store = store
        self.aliases = aliases
        self.collections = collections
        self.read = read
    }

    /// Registers with the store. Registered before the first read, so no commit made after the
    /// first read's snapshot can be missed.
    func start() {
        let register: Bool = lock.withLock {
            if stopped || registered { return false }
            registered = true
            return true
        }
        if register { store.addObserver(self) }
    }

    /// Stops: no more values, the consumer (if waiting) is resumed, unregistered from the store.
    /// Idempotent.
    func stop() {
        let (waiting, unregister): (CheckedContinuation<Void, Never>?, Bool) = lock.withLock {
            let unregister = registered && !stopped
            stopped = true
            defer { waiter = nil }
            return (waiter, unregister)
        }
        waiting?.resume()
        if unregister { store.removeObserver(self) }
    }

    // MARK: StoreObserver

    /// Called on the committing thread (or the external watcher's): only sets a flag.
    func store(_ store: Store, didCommit changes: ChangeSet) {
        guard touches(changes) else { return }
        let waiting: CheckedContinuation<Void, Never>? = lock.withLock {
            if stopped { return nil }
            dirty = true
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume()
    }

    /// Whether a change set names one of the observed collections in one of the aliases.
    func touches(_ changes: ChangeSet) -> Bool {
        changes.collections.contains { part in
            aliases.contains(part.alias) && collections.contains(part.collection)
                && !(part.created.isEmpty && part.updated.isEmpty && part.deleted.isEmpty)
        }
    }

    // MARK: Reading

    /// The next fresh value: waits for a change (none for the first value), then reads once.
    /// Nil once stopped (cancelled, released, or after a read failed).
    func next() async throws -> Value? {
        while true {
            if Task.isCancelled { stop() }
            let proceed: Bool? = lock.withLock {
                if stopped { return false }
                if dirty { dirty = false; return true }
                return nil
            }
            if proceed == false { return nil }
            if proceed == true { break }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow: Bool = lock.withLock {
                        if stopped || dirty { return true }
                        waiter = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                stop()
            }
        }
        // One synchronous read transaction on the queue: never on the committing thread, never
        // on the consumer's executor, never across an await.
        let result: Result<Value, any Error> = await withCheckedContinuation { continuation in
            queue.async { [store, read] in continuation.resume(returning: Result { try store.read(read) }) }
        }
        switch result {
        case .success(let value):
            return lock.withLock { stopped } ? nil : value
        case .failure(let error):
            stop()
            throw error
        }
    }
}

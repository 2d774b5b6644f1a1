import Foundation

/// The observers and change streams of one store core: who is told about each commit. Its
/// streams finish when it goes, with the core, once the last handle of the store is released.
///
/// `@unchecked Sendable`: every field is guarded by `lock`.
final class ChangePublisher: @unchecked Sendable {
    private let lock = NSLock()
    private var observers: [(id: UUID, ref: WeakObserver)] = []
    private var streams: [UUID: (alias: String?, collections: Set<String>?, continuation: AsyncStream<ChangeSet>.Continuation)] = [:]
    private var observing = false

    struct WeakObserver { weak var observer: (any StoreObserver)? }

    /// The store core (every ``Store`` handle on it) is gone: no change can come any more, so
    /// every `changes()` stream finishes (a task iterating one ends its loop).
    deinit { finishStreams() }

    /// Finishes every change stream (they are forgotten through their termination handlers).
    func finishStreams() {
        let sinks = lock.withLock { streams.values.map(\.continuation) }
        for continuation in sinks { continuation.finish() }
    }

    /// Whether anybody listens; transactions record changes only then.
    var hasObservers: Bool { lock.withLock { observing } }

    func add(_ observer: any StoreObserver) -> UUID {
        lock.withLock {
            let id = UUID()
            observers.append((id, WeakObserver(observer: observer)))
            observing = true
            return id
        }
    }

    func remove(observer: any StoreObserver) {
        lock.withLock {
            observers.removeAll { $0.ref.observer == nil || $0.ref.observer === observer }
            observing = !observers.isEmpty || !streams.isEmpty
        }
    }

    func stream(alias: String?, collections: Set<String>?) -> AsyncStream<ChangeSet> {
        let (stream, continuation) = AsyncStream<ChangeSet>.makeStream(bufferingPolicy: .unbounded)
        let id = UUID()
        lock.withLock {
            streams[id] = (alias, collections, continuation)
            observing = true
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.lock.withLock {
                self.streams[id] = nil
                self.observing = !self.observers.isEmpty || !self.streams.isEmpty
            }
        }
        return stream
    }

    /// Hands a committed change set to every observer and stream.
    func publish(_ changes: ChangeSet, from store: Store) {
        if changes.isEmpty { return }
        let (targets, sinks) = lock.withLock { () -> ([any StoreObserver], [(String?, Set<String>?, AsyncStream<ChangeSet>.Continuation)]) in
            observers.removeAll { $0.ref.observer == nil }
            return (observers.compactMap { $0.ref.observer }, streams.values.map { ($0.alias, $0.collections, $0.continuation) })
        }
        if !targets.isEmpty {
            // Grouped once per commit, not once per observer.
            let created = changes.createdByCollection, updated = changes.updatedByCollection, deleted = changes.deletedByCollection
            for observer in targets {
                observer.store(store, didCommit: changes)
                observer.store(store, createdObjects: created, updatedObjects: updated, deletedObjects: deleted)
            }
        }
        for (alias, collections, continuation) in sinks {
            if alias == nil && collections == nil {
                continuation.yield(changes)
                continue
            }
            // A stream of other collections costs a look, not a copy of the change set.
            guard changes.touches(alias: alias, collections: collections) else { continue }
            let part = changes.filtered(alias: alias, collections: collections)
            if !part.isEmpty { continuation.yield(part) }
        }
    }
}

import Foundation

/// What every ``Store`` handle on one storage shares: the record engine's state
/// (`EngineCore`: the driver, descriptors, schemas, transform, delete rules, unique IDs), and
/// the document layer's registries: observers, seed types, named fetch requests, date strategy.
///
/// `@unchecked Sendable`: mutable state is guarded by `lock`; the engine is `Sendable`.
package final class StoreCore: @unchecked Sendable {
    /// The record engine's share of the store.
    package let engine: EngineCore
    /// The storage backend.
    package var driver: any StorageDriver { engine.driver }
    /// The driver's LMDB-style extras, when it has them (Depot's LMDB driver).
    package var native: (any EnvironmentBackedDriver)? { engine.native }
    private let lock = NSLock()
    /// What the document types used with this core declare (see ``TypeDeclarations``).
    let declarations = TypeDeclarations()

    /// A read transaction of the driver; its errors (`StorageDriverError`) come wrapped in a
    /// `DepotError` with code `storage`. Every read of the document layer begins here.
    @inline(__always)
    /// `EngineCore.read(fromFirstOperation:_:)`.
    package func read<R>(fromFirstOperation: Bool = false, _ body: (any StorageTransaction) throws -> R) throws -> R {
        try engine.read(fromFirstOperation: fromFirstOperation, body)
    }

    /// A write transaction of the driver, its errors wrapped as ``read(_:)``'s. Every write of
    /// the document layer begins here.
    @inline(__always)
    package func write<R>(_ body: (any StorageTransaction) throws -> R) throws -> R { try engine.write(body) }

    /// The longest key the storage accepts (`StorageTransaction.maxKeySize`), read once.
    func maxKeySize() throws -> Int { try engine.maxKeySize() }

    private static let registryLock = NSLock()
    nonisolated(unsafe) private static var registry: [ObjectIdentifier: WeakCore] = [:]
    struct WeakCore { weak var core: StoreCore? }

    /// The core of `driver`, shared by every store opened on it (on an LMDB driver: on its
    /// environment, see ``EnvironmentBackedDriver/storeIdentity``).
    package static func core(for driver: any StorageDriver) throws -> StoreCore {
        let native = driver as? any EnvironmentBackedDriver
        let key = native?.storeIdentity ?? ObjectIdentifier(driver)
        return try registryLock.withLock {
            // A live core keeps its driver (and so the identity's object) alive: the key is not reused meanwhile.
            if let core = registry[key]?.core { return core }
            let core = try StoreCore(engine: EngineCore(driver: driver))
            registry = registry.filter { $0.value.core != nil }
            registry[key] = WeakCore(core: core)
            return core
        }
    }

    private init(engine: EngineCore) {
        self.engine = engine
    }

    // MARK: External change log

    /// Identifies this process's store core in change-log entries (so its watcher skips them).
    var token: String { engine.token }

    /// Forgets the cached lease check (a watcher just started in this process).
    func refreshLeaseCheck() { engine.refreshLeaseCheck() }

    // MARK: Unique IDs

    func uniqueIDs(store: Store) -> UniqueIDs { engine.uniqueIDs() }

    // MARK: Dates

    private var dateStrategyValue = DateStrategy.iso8601
    /// How dates look in exported JSON and seed files.
    package var dateStrategy: DateStrategy {
        get { lock.withLock { dateStrategyValue } }
        set { lock.withLock { dateStrategyValue = newValue } }
    }

    // MARK: Record transform

    /// The record transform of this store, if any.
    var recordTransform: (any RecordTransform)? { engine.recordTransform }

    /// Takes the transform a store was opened with; a second handle must agree on whether there
    /// is one.
    package func adopt(_ new: (any RecordTransform)?) throws { try engine.adopt(new) }

    /// Whether the store has a record transform (checked on every read, without copying it).
    @inline(__always)
    var hasRecordTransform: Bool { engine.hasRecordTransform }

    /// `txn` seen through the record transform (itself when there is none).
    @inline(__always)
    func wrap(_ txn: any StorageTransaction) -> any StorageTransaction { engine.wrap(txn) }

    // MARK: Delete rules

    func register(_ rule: RegisteredDeleteRule) { engine.register(rule) }

    // MARK: Seed types

    private var seedRegistrations: [String: SeedTypeRegistration] = [:]
    func register(_ registration: SeedTypeRegistration) { lock.withLock { seedRegistrations[registration.collection] = registration } }
    var seedTypes: [String: SeedTypeRegistration] { lock.withLock { seedRegistrations } }

    // MARK: Named fetch requests

    private var templates: [String: FetchRequestTemplate] = [:]

    func register(_ template: FetchRequestTemplate) { lock.withLock { templates[template.name] = template } }
    func template(named name: String) -> FetchRequestTemplate? { lock.withLock { templates[name] } }
    var templateNames: [String] { lock.withLock { templates.keys.sorted() } }

    // MARK: Observation

    /// Observers and change streams of every store on this core.
    let publisher = ChangePublisher()

    /// Whether anybody listens; transactions record changes only then.
    var hasObservers: Bool { publisher.hasObservers }
    func add(_ observer: any StoreObserver) -> UUID { publisher.add(observer) }
    func remove(observer: any StoreObserver) { publisher.remove(observer: observer) }
    func stream(alias: String?, collections: Set<String>?) -> AsyncStream<ChangeSet> { publisher.stream(alias: alias, collections: collections) }
    func publish(_ changes: ChangeSet, from store: Store) { publisher.publish(changes, from: store) }

    // MARK: External changes

    /// Guards `externalWatchers`, `externalNext` and `externalLogEnded`.
    private let externalLock = NSLock()
    /// Held while other writers' entries are published, so that they reach observers in log
    /// order whichever watcher read them. Recursive: an observer may poll a watcher itself.
    private let externalPublishing = NSRecursiveLock()
    /// How many watchers of this core run.
    private var externalWatchers = 0
    /// While watchers run: the change-log position below which every entry was published (or
    /// passed over) by one of them.
    private var externalNext: UInt64?
    /// Whether a watcher published the entry with the last possible position (nothing follows).
    private var externalLogEnded = false

    /// A watcher of this core starts; `start` is where the log ends now. Returns where it reads
    /// from: while other watchers run, the position they published up to when lower, so that
    /// entries they read but did not publish yet are read again here, never lost.
    func watcherStarts(at start: UInt64) -> UInt64 {
        externalLock.withLock {
            externalWatchers += 1
            if externalWatchers > 1, let next = externalNext { return min(start, next) }
            externalNext = start
            externalLogEnded = false
            return start
        }
    }

    /// A watcher that ``watcherStarts(at:)`` stopped; the last one resets the position.
    func watcherStops() {
        externalLock.withLock {
            externalWatchers -= 1
            if externalWatchers <= 0 {
                externalWatchers = 0
                externalNext = nil
                externalLogEnded = false
            }
        }
    }

    /// Publishes what a watcher read from the change log: `entries` with their positions, in
    /// log order; `next`, where its next read starts; `ended`, whether the log ended (an entry at
    /// the last position). Each entry reaches the key/value caches, observers and streams once
    /// per core, however many watchers read it; entries of this core's own writer not at all.
    func publishExternal(_ entries: [(position: UInt64, entry: ChangeLog.Entry)], through next: UInt64, ended: Bool, from store: Store) {
        externalPublishing.withLock {
            let fresh = externalLock.withLock { () -> [(position: UInt64, entry: ChangeLog.Entry)] in
                // A watcher stopped while it read (the last one reset the position) publishes
                // nothing: from 0 it would publish again what others did.
                if externalLogEnded || externalWatchers == 0 { return [] }
                let from = externalNext ?? 0
                externalNext = max(from, next)
                externalLogEnded = ended
                return entries.filter { $0.position >= from }
            }
            for (_, entry) in fresh where entry.writer != token {
                let changes = ChangeLog.changeSet(entry)
                // Caches first, so that whoever is told can read the new values at once.
                KeyValueCacheRegistry.shared.invalidate(changes, core: self)
                publish(changes, from: store)
            }
        }
    }
}

extension Store {
    /// The store's unique-ID generator (shared by every handle of this environment).
    public var uniqueIDs: UniqueIDs { core.uniqueIDs(store: self) }
}

extension ChangeSet {
    /// IDs grouped as DLData's delegate reports them: `[alias/collection: [IDs]]`.
    var createdByCollection: [String: [DocumentValue]] { grouped(\.created) }
    var updatedByCollection: [String: [DocumentValue]] { grouped(\.updated) }
    var deletedByCollection: [String: [DocumentValue]] { grouped(\.deleted) }

    private func grouped(_ path: KeyPath<CollectionChanges, [DocumentValue]>) -> [String: [DocumentValue]] {
        var result: [String: [DocumentValue]] = [:]
        for c in collections where !c[keyPath: path].isEmpty { result[c.alias + "/" + c.collection] = c[keyPath: path] }
        return result
    }
}

/// Told after every successful commit of the store's environment (all aliases).
///
/// Both methods have default implementations: adopt the one you like. They are called on the
/// committing thread, after the commit is durable and the writer released.
public protocol StoreObserver: AnyObject, Sendable {
    /// The whole change set of one commit.
    func store(_ store: Store, didCommit changes: ChangeSet)
    /// DLData's `dataManager:createdObjects:updatedObjects:deletedObjects:`: IDs keyed by
    /// `"alias/collection"`.
    func store(_ store: Store, createdObjects: [String: [DocumentValue]], updatedObjects: [String: [DocumentValue]],
               deletedObjects: [String: [DocumentValue]])
}

extension StoreObserver {
    public func store(_ store: Store, didCommit changes: ChangeSet) {}
    public func store(_ store: Store, createdObjects: [String: [DocumentValue]], updatedObjects: [String: [DocumentValue]],
                      deletedObjects: [String: [DocumentValue]]) {}
}

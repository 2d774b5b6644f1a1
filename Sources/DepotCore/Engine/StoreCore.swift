import Foundation

/// What every ``Store`` handle on one environment shares: the environment, the observers and
/// the descriptors of known collections.
///
/// `@unchecked Sendable`: mutable state is guarded by `lock`; what every read transaction
/// consults (collection descriptors, cached schemas, the record transform) is in `readState`,
/// changed under `lock` and read without it; the environment is `Sendable`.
package final class StoreCore: @unchecked Sendable {
    /// The storage backend.
    package let driver: any StorageDriver
    /// The driver's LMDB-style extras, when it has them (Depot's LMDB driver).
    package let native: (any EnvironmentBackedDriver)?
    private let lock = NSLock()
    /// The storage's key limit, read from its first transaction (see ``maxKeySize()``).
    private let keyLimit = Published<Int?>(nil)

    /// A read transaction of the driver; its errors (`StorageDriverError`) come wrapped in a
    /// `DepotError` with code `storage`. Every read of the document layer begins here.
    package func read<R>(_ body: (any StorageTransaction) throws -> R) throws -> R {
        do {
            return try driver.read(body)
        } catch let error as any StorageDriverError {
            throw DepotError.storage(error)
        }
    }

    /// A write transaction of the driver, its errors wrapped as ``read(_:)``'s. Every write of
    /// the document layer begins here.
    package func write<R>(_ body: (any StorageTransaction) throws -> R) throws -> R {
        do {
            return try driver.write(body)
        } catch let error as any StorageDriverError {
            throw DepotError.storage(error)
        }
    }

    /// The longest key the storage accepts (`StorageTransaction.maxKeySize`), read once.
    func maxKeySize() throws -> Int {
        if let known = keyLimit.value { return known }
        let limit = try read { $0.maxKeySize }
        lock.withLock { if keyLimit.value == nil { keyLimit.publish(limit) } }
        return limit
    }

    /// What read transactions consult, published for lock-free reads (see ``Published``).
    struct ReadState {
        /// ID kinds of known collections, by database name.
        var descriptors: [String: IDKind] = [:]
        /// Collection schemas as last read, valid for one schema version (see ``CollectionSchema``).
        var schemaVersion: UInt64 = 0
        var schemas: [TransactionContext.CollectionName: CollectionSchema] = [:]
        var transform: (any RecordTransform)?
        /// Whether ``transform`` is set (read on every transaction without copying the existential).
        var hasTransform = false
        /// What read transactions resolved for a document type and alias, valid in snapshots of
        /// schema version `readTargetsVersion` (every collection drop bumps the version).
        var readTargetsVersion: UInt64 = 0
        var readTargets: [ReadTargetKey: ReadTarget] = [:]
    }

    struct ReadTargetKey: Hashable {
        let type: ObjectIdentifier
        let alias: String
    }

    /// A collection as a read transaction resolved it: reused by later read transactions of
    /// the same schema version instead of validating the name, reading the descriptor and the
    /// schema again.
    struct ReadTarget {
        let collection: String
        let keyspace: Keyspace
        let kind: IDKind
        let typeVersion: Int
    }

    func readTarget(_ key: ReadTargetKey, version: UInt64) -> ReadTarget? {
        readState.read { $0.readTargetsVersion == version ? $0.readTargets[key] : nil }
    }

    func rememberReadTarget(_ target: ReadTarget, for key: ReadTargetKey, version: UInt64) {
        updateReadState { state in
            if state.readTargetsVersion != version {
                // Only move forward: a reader of an older snapshot does not evict newer entries.
                if version < state.readTargetsVersion { return false }
                state.readTargetsVersion = version
                state.readTargets = [:]
            }
            if state.readTargets[key] != nil { return false }
            state.readTargets[key] = target
            return true
        }
    }
    private let readState = Published(ReadState())

    /// Changes the read state under the lock, publishing it when `change` returns true.
    private func updateReadState(_ change: (inout ReadState) throws -> Bool) rethrows {
        try lock.withLock {
            var state = readState.value
            if try change(&state) { readState.publish(state) }
        }
    }

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
            let core = try StoreCore(driver: driver, native: native)
            registry = registry.filter { $0.value.core != nil }
            registry[key] = WeakCore(core: core)
            return core
        }
    }

    private init(driver: any StorageDriver, native: (any EnvironmentBackedDriver)?) throws {
        self.driver = driver
        self.native = native
        do {
            try native?.prepareForStores()
        } catch let error as any StorageDriverError {
            throw DepotError.storage(error)
        }
    }

    // MARK: External change log

    /// Identifies this process's store core in change-log entries (so its watcher skips them).
    let token = UUID().uuidString
    private var leaseCheck: (at: Double, live: Bool) = (0, false)

    /// Whether write transactions must log their changes for watchers in other processes:
    /// checked in `txn` at most once a second.
    func externalWatchersActive(_ txn: any StorageTransaction) -> Bool {
        let now = Date().timeIntervalSince1970
        if let cached = lock.withLock({ now - leaseCheck.at < 1 ? leaseCheck.live : nil }) { return cached }
        let live = (try? ChangeLog.hasLiveLease(txn)) ?? false
        lock.withLock { leaseCheck = (now, live) }
        return live
    }

    /// Forgets the cached lease check (a watcher just started in this process).
    func refreshLeaseCheck() { lock.withLock { leaseCheck = (0, false) } }

    // MARK: Collection descriptors

    func knownKind(of database: String) -> IDKind? { readState.read { $0.descriptors[database] } }

    func remember(_ kind: IDKind, for database: String) {
        updateReadState { state in
            if state.descriptors[database] == kind { return false }
            state.descriptors[database] = kind
            return true
        }
    }

    func forget(databases: [String]) {
        guard !databases.isEmpty else { return }
        updateReadState { state in
            for d in databases { state.descriptors[d] = nil }
            return true
        }
    }

    // MARK: Schemas

    func cachedSchema(_ name: TransactionContext.CollectionName, version: UInt64) -> CollectionSchema? {
        readState.read { $0.schemaVersion == version ? $0.schemas[name] : nil }
    }

    func cacheSchema(_ schema: CollectionSchema, for name: TransactionContext.CollectionName, version: UInt64) {
        updateReadState { state in
            if state.schemaVersion == version && state.schemas[name] == schema { return false }
            if state.schemaVersion != version { state.schemaVersion = version; state.schemas = [:] }
            state.schemas[name] = schema
            return true
        }
    }

    /// Forgets every cached schema (a transaction changed one and committed).
    func resetSchemas() {
        updateReadState { state in
            if state.schemaVersion == 0 && state.schemas.isEmpty { return false }
            state.schemaVersion = 0
            state.schemas = [:]
            return true
        }
    }

    // MARK: Unique IDs

    private var generator: UniqueIDs?

    func uniqueIDs(store: Store) -> UniqueIDs {
        lock.withLock {
            if let generator { return generator }
            let made = UniqueIDs(core: self, blockSize: 256)
            generator = made
            return made
        }
    }

    // MARK: Dates

    private var dateStrategyValue = DateStrategy.iso8601
    /// How dates look in exported JSON and seed files.
    package var dateStrategy: DateStrategy {
        get { lock.withLock { dateStrategyValue } }
        set { lock.withLock { dateStrategyValue = newValue } }
    }

    // MARK: Record transform

    /// The record transform of this store, if any.
    var recordTransform: (any RecordTransform)? { readState.read { $0.transform } }

    /// Takes the transform a store was opened with; a second handle must agree on whether there
    /// is one.
    package func adopt(_ new: (any RecordTransform)?) throws {
        try updateReadState { state in
            switch (state.transform, new) {
            case (nil, let new?):
                state.transform = new
                state.hasTransform = true
                return true
            case (_?, nil):
                throw DepotError(code: .transformRequired, message: "the store at '\(driver.location)' is already open with a record transform; open it with one too")
            default:
                return false
            }
        }
    }

    /// Whether the store has a record transform (checked on every read, without copying it).
    var hasRecordTransform: Bool { readState.read { $0.hasTransform } }

    /// `txn` seen through the record transform (itself when there is none).
    func wrap(_ txn: any StorageTransaction) -> any StorageTransaction {
        guard readState.read({ $0.hasTransform }), let transform = readState.read({ $0.transform }) else { return txn }
        return transform.wrapping(txn)
    }

    // MARK: Delete rules

    private var deleteRulesByTarget: [String: [RegisteredDeleteRule]] = [:]
    func register(_ rule: RegisteredDeleteRule) {
        lock.withLock {
            var rules = deleteRulesByTarget[rule.target, default: []]
            rules.removeAll { $0.source == rule.source && $0.field == rule.field && $0.owning == rule.owning }
            rules.append(rule)
            deleteRulesByTarget[rule.target] = rules
        }
    }
    func deleteRules(for collection: String) -> [RegisteredDeleteRule] { lock.withLock { deleteRulesByTarget[collection] ?? [] } }

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

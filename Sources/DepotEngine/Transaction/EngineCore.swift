import Foundation

/// The record engine's share of what every store handle on one storage shares: the driver, the
/// storage's key limit, what read transactions consult without a lock (collection descriptors,
/// cached schemas, the collections earlier reads resolved, the record transform), the
/// change-log lease check, the delete rules and the unique-ID generator. DepotCore's `StoreCore`
/// owns one, beside the document layer's registries (observers, seed types, fetch requests).
///
/// `@unchecked Sendable`: mutable state is guarded by `lock`; what every read transaction
/// consults is in `readState`, changed under `lock` and read without it; the driver is `Sendable`.
@usableFromInline
package final class EngineCore: @unchecked Sendable {
    /// The storage backend.
    @usableFromInline package let driver: any StorageDriver
    /// The driver's LMDB-style extras, when it has them (Depot's LMDB driver).
    package let native: (any EnvironmentBackedDriver)?
    private let lock = NSLock()
    /// Collections as committed write transactions resolved them (see ``WriteTargets``).
    let writeTargets = WriteTargets()
    /// The storage's key limit, read from its first transaction (see ``maxKeySize()``).
    private let keyLimit = Published<Int?>(nil)

    /// The engine of `driver` (call `prepareForStores()` of a native driver first).
    package init(driver: any StorageDriver) throws {
        self.driver = driver
        let native = driver as? any EnvironmentBackedDriver
        self.native = native
        do {
            try native?.prepareForStores()
        } catch let error as any StorageDriverError {
            throw DepotError.storage(error)
        }
    }

    /// A read transaction of the driver; its errors (`StorageDriverError`) come wrapped in a
    /// `DepotError` with code `storage`. Every read of the document layer begins here.
    /// `fromFirstOperation`: through `StorageDriver.readFromFirstOperation(_:)`, for a `body` of
    /// the library's own that runs no code of the app before its first operation.
    @inlinable
    package func read<R>(fromFirstOperation: Bool = false, _ body: (any StorageTransaction) throws -> R) throws -> R {
        do {
            return try fromFirstOperation ? driver.readFromFirstOperation(body) : driver.read(body)
        } catch let error as any StorageDriverError {
            throw DepotError.storage(error)
        }
    }

    /// A write transaction of the driver, its errors wrapped as ``read(_:)``'s. Every write of
    /// the document layer begins here.
    @inlinable
    package func write<R>(_ body: (any StorageTransaction) throws -> R) throws -> R {
        do {
            return try driver.write(body)
        } catch let error as any StorageDriverError {
            throw DepotError.storage(error)
        }
    }

    /// The longest key the storage accepts (`StorageTransaction.maxKeySize`), read once.
    package func maxKeySize() throws -> Int {
        if let known = keyLimit.value { return known }
        let limit = try read { $0.maxKeySize }
        lock.withLock { if keyLimit.value == nil { keyLimit.publish(limit) } }
        return limit
    }

    /// What read transactions consult, published for lock-free reads (see ``Published``).
    @usableFromInline
    struct ReadState {
        /// ID kinds of known collections, by database name.
        var descriptors: [String: IDKind] = [:]
        /// Collection schemas as last read, valid for one schema version (see ``CollectionSchema``).
        var schemaVersion: UInt64 = 0
        var schemas: [TransactionContext.CollectionName: CollectionSchema] = [:]
        @usableFromInline var transform: (any RecordTransform)?
        /// Whether ``transform`` is set (read on every transaction without copying the existential).
        @usableFromInline var hasTransform = false
        /// Whether a handle has given its transform (or none) yet: the first one decides.
        var transformAdopted = false
        /// What read transactions resolved for a document type and alias, valid in snapshots of
        /// schema version `readTargetsVersion` (every collection drop bumps the version).
        var readTargetsVersion: UInt64 = 0
        var readTargets: [ReadTargetKey: ReadTarget] = [:]
        /// Whether the store's records are sealed, as read at schema version `sealingVersion`
        /// (true stays true: the seal is never removed).
        var sealed: Bool?
        var sealingVersion: UInt64 = 0
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
    @usableFromInline let readState = Published(ReadState())

    /// Changes the read state under the lock, publishing it when `change` returns true.
    private func updateReadState(_ change: (inout ReadState) throws -> Bool) rethrows {
        try lock.withLock {
            var state = readState.value
            if try change(&state) { readState.publish(state) }
        }
    }

    // MARK: External change log

    /// Identifies this process's store core in change-log entries (so its watcher skips them).
    package let token = UUID().uuidString
    private var leaseCheck: (at: Double, live: Bool) = (0, false)

    /// Whether write transactions must log their changes for watchers in other processes:
    /// checked in `txn` at most once a second.
    package func externalWatchersActive(_ txn: any StorageTransaction) -> Bool {
        let now = Date().timeIntervalSince1970
        if let cached = lock.withLock({ now - leaseCheck.at < 1 ? leaseCheck.live : nil }) { return cached }
        let live = (try? ChangeLog.hasLiveLease(txn)) ?? false
        lock.withLock { leaseCheck = (now, live) }
        return live
    }

    /// Forgets the cached lease check (a watcher just started in this process).
    package func refreshLeaseCheck() { lock.withLock { leaseCheck = (0, false) } }

    // MARK: Collection descriptors

    func knownKind(of database: String) -> IDKind? { readState.read { $0.descriptors[database] } }

    func remember(_ kind: IDKind, for database: String) {
        updateReadState { state in
            if state.descriptors[database] == kind { return false }
            state.descriptors[database] = kind
            return true
        }
    }

    package func forget(databases: [String]) {
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
    package func resetSchemas() {
        updateReadState { state in
            if state.schemaVersion == 0 && state.schemas.isEmpty { return false }
            state.schemaVersion = 0
            state.schemas = [:]
            return true
        }
    }

    // MARK: Unique IDs

    private var generator: UniqueIDs?

    /// The store's unique-ID generator (made on first use).
    package func uniqueIDs() -> UniqueIDs {
        lock.withLock {
            if let generator { return generator }
            let made = UniqueIDs(core: self, blockSize: 256)
            generator = made
            return made
        }
    }

    // MARK: Record transform

    /// Whether the store's records are sealed, if known at schema `version`.
    func knownSealing(version: UInt64) -> Bool? {
        readState.read { $0.sealed == true || $0.sealingVersion == version ? $0.sealed : nil }
    }

    /// Remembers whether the store's records are sealed at schema `version`.
    func rememberSealing(_ sealed: Bool, version: UInt64) {
        updateReadState { state in
            if state.sealed == true || (state.sealed == sealed && state.sealingVersion == version) { return false }
            state.sealed = sealed
            state.sealingVersion = version
            return true
        }
    }

    /// The record transform of this store, if any.
    package var recordTransform: (any RecordTransform)? { readState.read { $0.transform } }

    /// Takes the transform a store was opened with. The first handle of the store in this
    /// process decides; a later one must give the same (``DepotError/Code/transformMismatch``
    /// otherwise: another key would be ignored, and a handle without one would write plain
    /// records, or find its own records sealed).
    package func adopt(_ new: (any RecordTransform)?) throws {
        try updateReadState { state in
            defer { state.transformAdopted = true }
            switch (state.transform, new) {
            case (nil, let new?) where !state.transformAdopted:
                state.transform = new
                state.hasTransform = true
                return true
            case (nil, nil):
                return !state.transformAdopted
            case (let old?, let new?) where Self.same(old, new):
                return false
            case (_?, nil):
                throw DepotError(code: .transformMismatch, message: "the store at '\(driver.location)' is already open in this process with a record transform; open it with the same one")
            case (nil, _?):
                throw DepotError(code: .transformMismatch, message: "the store at '\(driver.location)' is already open in this process without a record transform; release its other handles before opening it with one")
            case (_?, _?):
                throw DepotError(code: .transformMismatch, message: "the store at '\(driver.location)' is already open in this process with another record transform (other keys); release its other handles first, or open it with the same transform")
            }
        }
    }

    /// Whether two transforms are the same: equal values of one `Equatable` type, or one object.
    static func same(_ a: any RecordTransform, _ b: any RecordTransform) -> Bool {
        if let equatable = a as? any Equatable { return equatable.isEqual(to: b) }
        return type(of: a) is AnyClass && (a as AnyObject) === (b as AnyObject)
    }

    /// Whether the store has a record transform (checked on every read, without copying it).
    @inlinable
    package var hasRecordTransform: Bool { readState.read { $0.hasTransform } }

    /// `txn` seen through the record transform (itself when there is none).
    @inlinable
    package func wrap(_ txn: any StorageTransaction) -> any StorageTransaction {
        guard readState.read({ $0.hasTransform }) else { return txn }
        return wrapWithTransform(txn)
    }

    /// ``wrap(_:)`` of a store with a record transform.
    @usableFromInline
    func wrapWithTransform(_ txn: any StorageTransaction) -> any StorageTransaction {
        guard let transform = readState.read({ $0.transform }) else { return txn }
        return transform.wrapping(txn)
    }

    // MARK: Delete rules

    private var deleteRulesByTarget: [String: [RegisteredDeleteRule]] = [:]

    /// Registers a delete rule (replacing one for the same source, field and ownership).
    package func register(_ rule: RegisteredDeleteRule) {
        lock.withLock {
            var rules = deleteRulesByTarget[rule.target, default: []]
            rules.removeAll { $0.source == rule.source && $0.field == rule.field && $0.owning == rule.owning }
            rules.append(rule)
            deleteRulesByTarget[rule.target] = rules
        }
    }

    /// The delete rules whose target is `collection`.
    package func deleteRules(for collection: String) -> [RegisteredDeleteRule] { lock.withLock { deleteRulesByTarget[collection] ?? [] } }
}

extension Equatable {
    /// Whether `other` is a value of this type equal to this one.
    fileprivate func isEqual(to other: Any) -> Bool { (other as? Self) == self }
}

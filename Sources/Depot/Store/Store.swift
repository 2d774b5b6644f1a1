import DepotLMDB
import Foundation

/// How a ``Store`` opens its environment.
public struct StoreOptions: Sendable {
    /// The LMDB environment options (map size, readers, …). `maxDatabases` defaults to 1,024
    /// here: each collection of each alias is a named database.
    public var environment: EnvironmentOptions
    /// Whether parks and deletes made outside a transaction commit at once (the default), or
    /// collect in a unit of work that ``Store/save()`` commits (GarageStorage's autosave).
    public var autosave: Bool = true

    /// The default options.
    public init() {
        environment = EnvironmentOptions()
        environment.maxDatabases = 1024
    }
}

/// A document store in a folder: typed `Codable` documents, references between them,
/// aliases (isolated stores sharing one schema and one file), transactions and change sets.
///
/// ```swift
/// let store = try Store(path: "./data")
/// try store.write { tx in try tx.park(Employee(id: "e1", name: "Ada", salary: 100)) }
/// let ada = try store.read { tx in try tx.retrieve(Employee.self, id: "e1") }
/// let archive = try store.alias("Archive")        // same schema, separate records
/// ```
///
/// `Store` is `Sendable`: reads may run from any task; writes are serialized (one LMDB writer);
/// closures are synchronous, so a transaction never spans an `await`. Opening the same folder
/// twice in a process shares one environment (and one set of observers).
public final class Store: @unchecked Sendable {
    // @unchecked Sendable: `core` is Sendable; `autosaveValue` and `work` are guarded by `lock`.
    // The unit of work holds the caller's documents (as `Any`) until `save()`: like the closures
    // it held before, they are handed to the thread that saves or reads.
    /// The alias of a store opened with ``init(path:options:)``.
    public static let defaultAlias = "default"

    let core: StoreCore
    /// The alias this handle reads and writes.
    public let alias: String
    private let lock = NSLock()
    private var autosaveValue: Bool
    private var work = UnitOfWork()

    /// Opens (creating if needed) the store in the folder at `path` (the LMDB driver).
    public convenience init(path: String, options: StoreOptions = StoreOptions()) throws {
        let environment = try Environment.open(path: path, options: options.environment)
        try self.init(environment: environment, autosave: options.autosave)
    }

    /// A store over an environment you opened yourself (sharing it with raw key/value work).
    public convenience init(environment: Environment, autosave: Bool = true) throws {
        self.init(core: try StoreCore.core(for: environment), alias: Store.defaultAlias, autosave: autosave)
    }

    /// A store on any storage driver (see ``StorageDriver``; ``InMemoryDriver`` for tests and
    /// previews). Stores on the same driver object share observers and caches.
    public convenience init(driver: any StorageDriver, autosave: Bool = true) throws {
        self.init(core: try StoreCore.core(for: driver), alias: Store.defaultAlias, autosave: autosave)
    }

    init(core: StoreCore, alias: String, autosave: Bool) {
        self.core = core
        self.alias = alias
        self.autosaveValue = autosave
    }

    /// The LMDB environment under this store.
    ///
    /// - Throws: ``DepotError/invalidState(_:)`` when the store runs on another driver.
    public var environment: Environment {
        get throws {
            guard let environment = core.environment else {
                throw DepotError.invalidState("the store at '\(core.driver.location)' does not run on LMDB")
            }
            return environment
        }
    }

    /// The storage driver under this store.
    public var driver: any StorageDriver { core.driver }

    /// What the storage driver promises (transactions, savepoints, durability, …).
    public var capabilities: StorageCapabilities { core.driver.capabilities }

    /// Where the store's data lives (the folder, for LMDB).
    public var path: String { core.driver.location }

    // MARK: Aliases

    /// An isolated store with the same schema, kept in its own named databases in the same
    /// environment. Nothing is written until something is parked in it.
    public func alias(_ name: String) throws -> Store {
        try StoreLayout.validateAlias(name)
        return Store(core: core, alias: name, autosave: autosave)
    }

    /// The aliases that hold (or held) collections, sorted.
    public func aliases() throws -> [String] {
        try read { tx in
            let keys = try tx.context.metaEntries(prefix: Array(StoreLayout.descriptorRoot.utf8)).map { String(decoding: $0.key, as: UTF8.self) }
            return Set(keys.compactMap { $0.split(separator: "/", maxSplits: 2).dropFirst().first.map(String.init) }).sorted()
        }
    }

    /// Deletes every document of alias `name`; its collections stay known.
    @discardableResult
    public func clearAlias(_ name: String) throws -> Int {
        try StoreLayout.validateAlias(name)
        return try write { tx in try tx.alias(name).deleteEverything() }
    }

    /// Removes alias `name` entirely: its documents, collections, indexes and descriptors.
    public func dropAlias(_ name: String) throws {
        try StoreLayout.validateAlias(name)
        var dropped: [String] = []
        try write { tx in
            let view = try tx.alias(name)
            let context = tx.context
            let meta = try context.writableMeta()
            for collection in try view.collections() {
                if let target = try context.existingTarget(alias: name, collection: collection) {
                    _ = try view.clearRecords(target) // records the deletions
                    try context.txn.drop(target.keyspace)
                }
                context.forgetCollection(alias: name, collection: collection)
                _ = try context.txn.delete(forKey: Array(StoreLayout.descriptorKey(alias: name, collection: collection).utf8), in: meta)
                dropped.append(StoreLayout.documentDatabase(alias: name, collection: collection))
            }
            // Index keyspaces and definitions, sync tracking, the alias's sync-status keyspace.
            let indexPrefix = StoreLayout.indexMetaPrefix(alias: name)
            for (metaKey, value) in try context.metaEntries(prefix: Array(indexPrefix.utf8)) {
                let rest = String(decoding: metaKey.dropFirst(indexPrefix.utf8.count), as: UTF8.self)
                if let slash = rest.firstIndex(of: "/") {
                    let collection = String(rest[..<slash]), index = String(rest[rest.index(after: slash)...])
                    let unique = IndexDefinition.parse(name: index, metaValue: value)?.0.unique ?? false
                    let db = StoreLayout.indexDatabase(alias: name, collection: collection, index: index)
                    if let ks = try context.txn.keyspace(named: db, create: false, multiValue: !unique) { try context.txn.drop(ks) }
                }
                _ = try context.txn.delete(forKey: metaKey, in: meta)
            }
            for (metaKey, _) in try context.metaEntries(prefix: Array(StoreLayout.syncTrackingPrefix(alias: name).utf8)) {
                _ = try context.txn.delete(forKey: metaKey, in: meta)
            }
            if let ks = try context.txn.keyspace(named: StoreLayout.syncDatabase(alias: name), create: false, multiValue: true) {
                try context.txn.drop(ks)
            }
            try context.schemaDropped()
        }
        core.forget(databases: dropped)
    }

    // MARK: Transactions

    /// Runs `body` in a read-only snapshot.
    public func read<R>(_ body: (DocumentTransaction) throws -> R) throws -> R {
        try core.driver.read { txn in try body(view(of: txn)) }
    }

    /// Runs `body` in a write transaction: commits when it returns, rolls back when it throws.
    /// Observers get the change set after the commit. `body` may run again if the map had to
    /// grow, so keep side effects out of it.
    @discardableResult
    public func write<R>(_ body: (DocumentTransaction) throws -> R) throws -> R {
        try core.driver.write { txn in
            let tx = view(of: txn)
            let result = try body(tx)
            try tx.context.appendChangeLog()
            return result
        }
    }

    /// Runs `body` on the environment's writer thread, group-committed with other async writes;
    /// returns once the commit is durable. A closure that throws undoes only its own work.
    @discardableResult
    public func write<R: Sendable>(_ body: @escaping @Sendable (DocumentTransaction) throws -> R) async throws -> R {
        guard let environment = core.environment else {
            // Other drivers: the same closure, run off the caller's task on a thread of its own.
            return try await withCheckedThrowingContinuation { continuation in
                Thread { [self] in continuation.resume(with: Result { try write(body) }) }.start()
            }
        }
        return try await environment.write { [self] txn in
            // The writer runs this inside a child transaction of the batch's transaction.
            let tx = view(of: txn)
            let mark = tx.context.mark
            do {
                let result = try body(tx)
                try tx.context.appendChangeLog()
                tx.context.promote(toDepth: mark.depth - 1)
                return result
            } catch {
                tx.context.revert(to: mark, childDepth: mark.depth)
                throw error
            }
        }
    }

    /// Begins a transaction you end with ``DocumentTransaction/commit()`` or
    /// ``DocumentTransaction/rollback()`` (DLData's explicit flow). A write transaction must end
    /// on the thread that began it; until then other writers wait.
    public func beginTransaction(readOnly: Bool = false) throws -> DocumentTransaction {
        guard let environment = core.environment else {
            throw DepotError.invalidState("explicit transactions need the LMDB driver (this store runs on '\(core.driver.location)')")
        }
        let txn = try environment.beginTransaction(readOnly: readOnly)
        return DocumentTransaction(store: self, alias: alias, context: TransactionContext.of(txn, core: core, store: self), explicit: true)
    }

    func view(of txn: any StorageTransaction) -> DocumentTransaction {
        DocumentTransaction(store: self, alias: alias, context: TransactionContext.of(txn, core: core, store: self))
    }

    // MARK: Observation

    /// Registers `observer` (held weakly) for the change sets of every commit.
    public func addObserver(_ observer: any StoreObserver) { _ = core.add(observer) }

    /// Unregisters `observer`.
    public func removeObserver(_ observer: any StoreObserver) { core.remove(observer: observer) }

    /// Change sets of every commit, as an `AsyncSequence`; with `alias` and/or `collections`,
    /// only those parts (commits that touch none of them are skipped). The stream buffers without
    /// bound; cancel the iterating task to stop it.
    public func changes(alias: String? = nil, collections: Set<String>? = nil) -> AsyncStream<ChangeSet> {
        core.stream(alias: alias, collections: collections)
    }

    /// Change sets touching documents of type `D` in this store's alias.
    public func changes<D: Document>(of type: D.Type) -> AsyncStream<ChangeSet> {
        core.stream(alias: alias, collections: [D.collection])
    }

    // MARK: Autosave and the unit of work

    /// With autosave on (the default), ``park(_:)`` and ``delete(_:)`` called on the store commit
    /// at once. With it off they collect in a unit of work: reads through the store see them,
    /// ``save()`` commits them in one transaction, ``rollback()`` discards them.
    public var autosave: Bool {
        get { lock.withLock { autosaveValue } }
        set { lock.withLock { autosaveValue = newValue } }
    }

    /// Whether the unit of work holds unsaved changes.
    public var hasUnsavedChanges: Bool { lock.withLock { !work.isEmpty } }

    /// How many changes the unit of work holds (one per document: the last write wins).
    public var unsavedChangeCount: Int { lock.withLock { work.count } }

    /// Commits the unit of work in one transaction, in the order the changes were made. On error
    /// nothing is committed and the unit of work is kept.
    public func save() throws {
        let snapshot = lock.withLock { work }
        if snapshot.isEmpty { return }
        let steps = snapshot.operations()
        try write { tx in for step in steps { try step(tx) } }
        lock.withLock { work.removeThrough(sequence: snapshot.lastSequence) }
    }

    /// Discards the unit of work.
    public func rollback() { lock.withLock { work = UnitOfWork() } }

    /// Reads through the store: with unsaved changes, the unit of work is laid over a read
    /// snapshot (no writer is taken).
    func readThrough<R>(_ body: (DocumentTransaction) throws -> R) throws -> R {
        let snapshot = lock.withLock { work }
        if snapshot.isEmpty { return try read(body) }
        return try core.driver.read { txn in
            let tx = view(of: txn)
            tx.overlay = snapshot
            return try body(tx)
        }
    }

    /// Parks `document` now, or in the unit of work when autosave is off.
    public func park<D: Document>(_ document: D) throws {
        if autosave {
            try write { try $0.park(document) }
            return
        }
        // Check the document (key, encoding) and find the documents it references, which the
        // park will store too, so that reads see them before `save()`.
        let maxKey = core.environment?.maxKeySize ?? 511
        var seen = Set<UnitOfWork.Key>()
        var queue: [any Document] = [document]
        var shadows: [(document: any Document, key: UnitOfWork.Key)] = []
        while let next = queue.popLast() {
            let (key, found) = try Self.inspect(next, alias: alias, maxKeySize: maxKey)
            guard seen.insert(key).inserted else { continue }
            shadows.append((next, key))
            queue.append(contentsOf: found)
        }
        let own = shadows.removeFirst()
        lock.withLock {
            for shadow in shadows.reversed() {
                work.park(shadow.document, alias: shadow.key.alias, collection: shadow.key.collection, key: shadow.key.key, apply: nil)
            }
            work.park(document, alias: own.key.alias, collection: own.key.collection, key: own.key.key, apply: { try $0.park(document) })
        }
    }

    /// The unit-of-work key of `document` and the documents it references; checks its ID and
    /// that it encodes.
    private static func inspect<D: Document>(_ document: D, alias: String, maxKeySize: Int) throws -> (UnitOfWork.Key, [any Document]) {
        let key = document.id.keyBytes
        if key.isEmpty { throw DepotError.invalidKey(detail: "the ID of a \(D.collection) document is empty") }
        if key.count > maxKeySize {
            throw DepotError.invalidKey(detail: "the ID of a \(D.collection) document is \(key.count) bytes; the limit is \(maxKeySize)")
        }
        let collector = ReferenceCollector()
        var encoder = BinaryEncoder()
        encoder.referenceHook = collector
        do {
            _ = try encoder.encode(document)
        } catch let error as EncodingError {
            throw DepotError.encodingFailed(collection: D.collection, id: displayID(document.id.documentValue),
                                            fieldPath: fieldPath(of: error), detail: encodingDetail(error))
        }
        return (UnitOfWork.Key(alias: alias, collection: D.collection, key: key), collector.found)
    }

    /// Parks several documents now, or in the unit of work when autosave is off.
    public func park<D: Document>(_ documents: [D]) throws {
        if autosave {
            try write { try $0.park(documents) }
            return
        }
        for document in documents { try park(document) }
    }

    /// Deletes `document` now, or in the unit of work when autosave is off.
    public func delete<D: Document>(_ document: D) throws { try delete(D.self, id: document.id) }

    /// Deletes by ID now, or in the unit of work when autosave is off.
    public func delete<D: Document>(_ type: D.Type, id: D.ID) throws {
        if autosave {
            try write { _ = try $0.delete(D.self, id: id) }
            return
        }
        let key = id.keyBytes
        lock.withLock { work.delete(alias: alias, collection: D.collection, key: key, apply: { _ = try $0.delete(D.self, id: id) }) }
    }

    /// Deletes every document of `D` now, or in the unit of work when autosave is off.
    public func deleteAll<D: Document>(_ type: D.Type) throws {
        if autosave {
            try write { _ = try $0.deleteAll(D.self) }
            return
        }
        lock.withLock { work.clear(alias: alias, collection: D.collection, apply: { _ = try $0.deleteAll(D.self) }) }
    }

    /// Deletes every document of this alias now, or in the unit of work when autosave is off.
    public func deleteEverything() throws {
        if autosave {
            try write { _ = try $0.deleteEverything() }
            return
        }
        lock.withLock { work.clear(alias: alias, collection: nil, apply: { _ = try $0.deleteEverything() }) }
    }

    /// The document of type `D` with `id` (seeing unsaved changes).
    public func retrieve<D: Document>(_ type: D.Type, id: D.ID) throws -> D? { try readThrough { try $0.retrieve(D.self, id: id) } }
    /// Every document of type `D` in ID order (seeing unsaved changes).
    public func retrieveAll<D: Document>(_ type: D.Type) throws -> [D] { try readThrough { try $0.retrieveAll(D.self) } }
    /// How many documents of type `D` are stored (counting unsaved changes).
    public func count<D: Document>(_ type: D.Type) throws -> Int { try readThrough { try $0.count(D.self) } }
    /// Whether a document of type `D` with `id` is stored (seeing unsaved changes).
    public func exists<D: Document>(_ type: D.Type, id: D.ID) throws -> Bool { try readThrough { try $0.exists(D.self, id: id) } }
}

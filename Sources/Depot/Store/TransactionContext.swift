import DepotLMDB

/// The document layer's state for one top-level LMDB transaction, shared by every alias view
/// of it: opened collection databases, the change recorder, encode buffers, and the stacks that
/// guard reference cycles. Savepoints mark it and roll it back with the LMDB child transaction.
final class TransactionContext {
    let txn: any StorageTransaction
    let core: StoreCore
    let recorder: ChangeRecorder?
    /// Collection keyspaces checked in this transaction (no string building on the hot path).
    private var databases: [CollectionName: (db: Keyspace, kind: IDKind, depth: Int)] = [:]

    struct CollectionName: Hashable {
        var alias: String
        var collection: String
    }
    private var pendingDescriptors: [(name: String, kind: IDKind, depth: Int)] = []
    /// Index keyspaces known to be built in this transaction (name → unique), with the depth
    /// they were confirmed at.
    private var builtIndexes: [String: (unique: Bool, depth: Int)] = [:]
    private var spareBuffers: [[UInt8]] = []
    /// Documents being parked right now, outermost first: a reference back to one of them is
    /// written without parking it again. Keys are borrowed for the duration of the park.
    var parking: [InProgress] = []
    /// Documents being resolved right now, outermost first (for dangling-reference messages and
    /// cycles). Keys are borrowed for the duration of the decode.
    var resolving: [InProgress] = []

    /// The store's meta keyspace in this transaction (nil: absent, in a read transaction).
    private var metaCache: Keyspace??
    func metaKeyspace() throws -> Keyspace? {
        if let cached = metaCache { return cached }
        let found = try txn.keyspace(named: StoreLayout.metaDatabase, create: !txn.isReadOnly)
        metaCache = found
        return found
    }

    /// Meta records whose keys start with `prefix` (none when the meta keyspace is absent).
    func metaEntries(prefix: [UInt8]) throws -> [(key: [UInt8], value: [UInt8])] {
        guard let meta = try metaKeyspace() else { return [] }
        return try txn.entries(meta, prefix: prefix)
    }

    /// The meta keyspace of a write transaction.
    func writableMeta() throws -> Keyspace {
        guard let meta = try metaKeyspace() else { throw DepotError.invalidState("the store's meta data is missing") }
        return meta
    }

    struct InProgress {
        var alias: String
        var collection: String
        var key: UnsafeRawBufferPointer
        func matches(alias: String, collection: String, key other: UnsafeRawBufferPointer) -> Bool {
            self.collection == collection && self.alias == alias && key.elementsEqual(other)
        }
    }

    struct Mark {
        let recorder: Int
        let depth: Int
    }

    /// Whether this write logs its changes for watchers in other processes.
    let logsChanges: Bool
    private var loggedMark = 0

    private init(txn: any StorageTransaction, core: StoreCore, recordChanges: Bool, logChanges: Bool) {
        self.txn = txn
        self.core = core
        self.recorder = recordChanges || logChanges ? ChangeRecorder() : nil
        self.logsChanges = logChanges
    }

    /// Appends what was recorded since the last call to the change log (when watchers exist).
    /// The document layer calls it at the end of every write closure, inside the transaction.
    func appendChangeLog() throws {
        guard logsChanges, let recorder else { return }
        let changes = recorder.touched(since: loggedMark)
        loggedMark = recorder.mark
        if !changes.isEmpty { try ChangeLog.append(changes, writer: core.token, txn: txn) }
    }

    /// The context of `txn`, created (and hooked to its commit) on first use.
    static func of(_ txn: any StorageTransaction, core: StoreCore, store: Store) -> TransactionContext {
        if let existing = txn.attachment as? TransactionContext { return existing }
        let logs = !txn.isReadOnly && core.externalWatchersActive(txn)
        let context = TransactionContext(txn: txn, core: core, recordChanges: !txn.isReadOnly && core.hasObservers, logChanges: logs)
        txn.attachment = context
        if !txn.isReadOnly {
            txn.afterCommit { [context, store] in
                for d in context.pendingDescriptors { context.core.remember(d.kind, for: d.name) }
                for (name, entry) in context.builtIndexes { context.core.rememberIndex(name, unique: entry.unique) }
                if let recorder = context.recorder, !recorder.isEmpty, context.core.hasObservers {
                    context.core.publish(recorder.changeSet(transactionID: nil), from: store)
                }
            }
        }
        return context
    }

    // MARK: Savepoints

    var mark: Mark { Mark(recorder: recorder?.mark ?? 0, depth: txn.nestingDepth) }

    /// Forgets what was done after `mark`: the LMDB child transaction at `childDepth` (and any
    /// deeper) was aborted, so handles and descriptors opened there are gone too.
    func revert(to mark: Mark, childDepth: Int) {
        recorder?.revert(to: mark.recorder)
        loggedMark = min(loggedMark, mark.recorder)
        metaCache = nil // it may have been created inside the aborted child: look it up again
        databases = databases.filter { $0.value.depth < childDepth }
        pendingDescriptors.removeAll { $0.depth >= childDepth }
        builtIndexes = builtIndexes.filter { $0.value.depth < childDepth }
    }

    /// Entries made inside a committed child now belong to its parent.
    func promote(toDepth target: Int) {
        let depth = max(0, target)
        for (name, entry) in databases where entry.depth > depth { databases[name] = (entry.db, entry.kind, depth) }
        for i in pendingDescriptors.indices where pendingDescriptors[i].depth > depth { pendingDescriptors[i].depth = depth }
        for (name, entry) in builtIndexes where entry.depth > depth { builtIndexes[name] = (entry.unique, depth) }
    }

    // MARK: Buffers

    func takeBuffer() -> [UInt8] {
        if var b = spareBuffers.popLast() { b.removeAll(keepingCapacity: true); return b }
        var b = [UInt8]()
        b.reserveCapacity(256)
        return b
    }

    func giveBack(_ buffer: [UInt8]) { spareBuffers.append(buffer) }

    // MARK: Collection databases

    /// The database of `collection` in `alias`, checking (and on first write recording) the kind
    /// of its IDs. Returns nil when it does not exist and `create` is false.
    func database(alias: String, collection: String, kind: IDKind, create: Bool) throws -> Keyspace? {
        let key = CollectionName(alias: alias, collection: collection)
        if let cached = databases[key] {
            if cached.kind != kind {
                throw DepotError.idKindMismatch(alias: alias, collection: collection, stored: cached.kind, requested: kind)
            }
            return cached.db
        }
        let name = StoreLayout.documentDatabase(alias: alias, collection: collection)
        try StoreLayout.validateCollection(collection)
        let stored = try storedKind(alias: alias, collection: collection, name: name)
        if let stored, stored != kind {
            throw DepotError.idKindMismatch(alias: alias, collection: collection, stored: stored, requested: kind)
        }
        guard let db = try txn.keyspace(named: name, create: create && !txn.isReadOnly) else { return nil }
        if stored == nil && !txn.isReadOnly {
            try txn.put(Array(kind.rawValue.utf8), forKey: Array(StoreLayout.descriptorKey(alias: alias, collection: collection).utf8), in: try writableMeta())
            pendingDescriptors.append((name, kind, txn.nestingDepth))
        }
        databases[key] = (db, stored ?? kind, txn.nestingDepth)
        return db
    }

    /// The database of a collection whatever its ID kind (for export and administration).
    func existingDatabase(alias: String, collection: String) throws -> (Keyspace, IDKind)? {
        let name = StoreLayout.documentDatabase(alias: alias, collection: collection)
        let key = CollectionName(alias: alias, collection: collection)
        if let cached = databases[key] { return (cached.db, cached.kind) }
        guard let kind = try storedKind(alias: alias, collection: collection, name: name) else { return nil }
        guard let db = try txn.keyspace(named: name, create: false) else { return nil }
        databases[key] = (db, kind, txn.nestingDepth)
        return (db, kind)
    }

    func storedKind(alias: String, collection: String, name: String) throws -> IDKind? {
        if let known = core.knownKind(of: name) { return known }
        if let pending = pendingDescriptors.last(where: { $0.name == name }) { return pending.kind }
        guard let meta = try metaKeyspace() else { return nil }
        let raw = try txn.get(Array(StoreLayout.descriptorKey(alias: alias, collection: collection).utf8), in: meta)
        guard let raw else { return nil }
        guard let kind = IDKind(rawValue: String(decoding: raw, as: UTF8.self)) else {
            throw DepotError.corruptRecord(alias: alias, collection: collection, id: "(descriptor)", detail: "unknown ID kind")
        }
        return kind
    }

    // MARK: Index state

    /// Whether the index keyspace `name` is built: known to the store, confirmed in this
    /// transaction, or recorded in the meta database.
    func isIndexBuilt(_ name: String, metaKey: String) throws -> Bool {
        if core.isIndexKnown(name) || builtIndexes[name] != nil { return true }
        if let meta = try metaKeyspace(), try txn.get(Array(metaKey.utf8), in: meta) != nil {
            builtIndexes[name] = (true, 0)
            return true
        }
        return false
    }

    func markIndexBuilt(_ name: String, unique: Bool) { builtIndexes[name] = (unique, txn.nestingDepth) }

    /// Drops cached handles of databases that were dropped in this transaction.
    func forgetDatabase(_ name: String) {
        if let (alias, collection) = StoreLayout.parse(name) { databases[CollectionName(alias: alias, collection: collection)] = nil }
        pendingDescriptors.removeAll { $0.name == name }
    }
}


/// The document layer's state for one top-level transaction, shared by every alias view of it:
/// the record targets (collections) resolved so far, per-type facts, the schema in force, the
/// change recorder, encode buffers, and the stacks that guard reference cycles. Savepoints mark
/// it and roll it back with the child transaction.
///
/// Its stored variables are marked `@exclusivity(unchecked)`: a context belongs to one
/// transaction, so to one thread at a time, and no accessor overlaps another; the dynamic check
/// costs two runtime calls per access on every request (measured with the read_txn workload).
@usableFromInline
package final class TransactionContext {
    /// The transaction. Changes only for the reusable read context of a thread's read session
    /// (``rebind(to:retaining:)``, ``unbind()``), between its transactions. Not retained, so
    /// that using it costs no reference counting: ``owner`` holds it, or (a rebound read
    /// context) the driver, while it is bound here; ``unbind()`` leaves one that lives as long.
    @usableFromInline @exclusivity(unchecked) unowned(unsafe) private(set) var txn: any StorageTransaction
    /// Keeps ``txn`` alive: the transaction this context was made for, until ``unbind()``.
    @exclusivity(unchecked) private var owner: (any StorageTransaction)?
    /// `txn.maxKeySize`, read once (checked before every look-up).
    @usableFromInline let maxKeySize: Int
    let core: StoreCore
    let recorder: ChangeRecorder?
    /// Whether this write logs its changes for watchers in other processes.
    let logsChanges: Bool
    @exclusivity(unchecked) private var loggedMark = 0

    struct CollectionName: Hashable {
        var alias: String
        var collection: String
    }

    /// Collections resolved in this transaction, with the depth they were resolved at.
    @exclusivity(unchecked) private var targets: [CollectionName: RecordTarget] = [:]
    /// The key/value kit's keyspace per alias.
    @exclusivity(unchecked) private var kvTargets: [String: RecordTarget] = [:]
    /// Per-type facts, keyed by type and alias. Cleared (and ``factsGeneration`` bumped) when
    /// targets may have changed; views keep a copy keyed by type alone while the generation holds.
    var typeFacts: [TypeFactsKey: AnyTypeFacts] = [:] {
        didSet { if typeFacts.isEmpty { factsGeneration &+= 1 } }
    }
    @usableFromInline @exclusivity(unchecked) private(set) var factsGeneration = 0
    @exclusivity(unchecked) private var pendingDescriptors: [(name: String, kind: IDKind, depth: Int)] = []
    /// Collection databases dropped in this transaction (the store forgets them after commit).
    @exclusivity(unchecked) private var droppedDatabases: Set<String> = []
    /// Schemas read or changed in this transaction.
    @exclusivity(unchecked) private var schemas: [CollectionName: CollectionSchema] = [:]
    @exclusivity(unchecked) private var schemaVersionValue: UInt64?
    /// Whether this transaction changed a schema (the store's cache is reset after commit).
    @exclusivity(unchecked) private(set) var changedSchema = false
    /// The buffer records are encoded into, lent to one write at a time; a write nested in
    /// another's encoding (a referenced document parked) takes a spare. Buffers are given back
    /// in the reverse order they were taken (each in a `defer`; see `TransactionContext+Buffers`).
    @exclusivity(unchecked) var recordBuffer: [UInt8] = []
    @exclusivity(unchecked) var recordBufferLent = false
    @exclusivity(unchecked) var sparesLent = 0
    @exclusivity(unchecked) var spareBuffers: [[UInt8]] = []
    /// Records being deleted right now (delete rules that cascade back to one are ignored).
    @exclusivity(unchecked) var deleting: Set<ChangeRecorder.Key> = []
    /// Before- and after-images for the store handle's undo history (nil: not recorded).
    @exclusivity(unchecked) var undoLog: UndoLog?
    /// Referenced documents parked in this transaction, with what was written (see
    /// ``ReferenceHook``): parking the same unchanged document again is skipped.
    @exclusivity(unchecked) var parkedReferences: [ParkedReference: ParkedValue] = [:]

    /// What was parked for a referenced document: the value itself when its type is
    /// `Equatable`, else its encoded bytes (references as references).
    enum ParkedValue {
        case value(any Equatable)
        case bytes([UInt8])
    }

    /// A referenced document parked in this transaction: its collection (the target's identity,
    /// stable within the transaction) and key.
    struct ParkedReference: Hashable {
        var target: ObjectIdentifier
        var key: PackedKey
    }
    /// Documents being parked right now, outermost first: a reference back to one of them is
    /// written without parking it again. Keys are borrowed for the duration of the park.
    @exclusivity(unchecked) var parking: [RecordInProgress] = []
    /// Documents being decoded right now, outermost first (for dangling-reference messages and
    /// cycles). Keys are borrowed for the duration of the decode.
    @usableFromInline @exclusivity(unchecked) var resolving = ResolvingStack()

    struct TypeFactsKey: Hashable {
        var type: ObjectIdentifier
        var alias: String
    }

    private init(txn: any StorageTransaction, core: StoreCore, recordChanges: Bool, logChanges: Bool) {
        self.txn = txn
        owner = txn
        maxKeySize = txn.maxKeySize
        readsOnly = txn.isReadOnly
        self.core = core
        self.recorder = recordChanges || logChanges ? ChangeRecorder() : nil
        self.logsChanges = logChanges
    }

    /// The context of `txn`, created (and hooked to its commit) on first use.
    static func of(_ txn: any StorageTransaction, core: StoreCore, store: Store) -> TransactionContext {
        if let existing = txn.attachment as? TransactionContext { return existing }
        let logs = !txn.isReadOnly && core.externalWatchersActive(txn)
        let context = TransactionContext(txn: txn, core: core, recordChanges: !txn.isReadOnly && core.hasObservers, logChanges: logs)
        txn.attachment = context
        if !txn.isReadOnly {
            txn.afterCommit { [context, store] in
                context.core.forget(databases: Array(context.droppedDatabases))
                for d in context.pendingDescriptors { context.core.remember(d.kind, for: d.name) }
                if context.changedSchema { context.core.resetSchemas() }
                if let recorder = context.recorder, !recorder.isEmpty, context.core.hasObservers {
                    context.core.publish(recorder.changeSet(transactionID: nil), from: store)
                }
            }
        }
        return context
    }

    // MARK: Reuse by read sessions (see ReadSessions.swift)

    /// Whether this context was made for a read-only transaction (and so only serves those).
    let readsOnly: Bool
    /// What ``unbind()`` leaves in ``txn`` (kept here: unbinding reads no global).
    private let ended: any StorageTransaction = EndedTransaction.shared

    /// Whether this context can serve another read transaction: a read-only one that holds no
    /// state of an operation in progress. Stored flags only (no call on the transaction).
    var isReusableForReads: Bool {
        readsOnly && !sharedWithOtherViews && recorder == nil && !logsChanges && !changedSchema && undoLog == nil
            && resolving.isEmpty && parking.isEmpty && deleting.isEmpty && parkedReferences.isEmpty
            && pendingDescriptors.isEmpty && droppedDatabases.isEmpty
    }

    /// Makes this (reusable, unbound) read context the context of the read transaction
    /// `newTxn`. The caller passes a context that ``isReusableForReads`` found reusable when its
    /// last transaction ended (``Store/read(_:)`` keeps no other), and that nothing used since.
    /// What it resolved stays while the store's schema version is the one it was resolved at
    /// (every collection drop and schema change bumps the version); otherwise it is forgotten.
    /// Returns false when the context cannot serve `newTxn`. Not attached to `newTxn` (nothing
    /// looks a read's context up by its transaction); calls go to `newTxn`, the caller's
    /// reference. `retaining`: the caller holds no reference to `newTxn` (a transform's wrapper).
    func rebind(to newTxn: any StorageTransaction, retaining: Bool) throws -> Bool {
        guard readsOnly, !sharedWithOtherViews, newTxn.isReadOnly, newTxn.maxKeySize == maxKeySize else { return false }
        let resolvedAt = schemaVersionValue
        txn = newTxn
        if retaining { owner = newTxn }
        // The same snapshot as the last transaction: the same schema version (no meta read).
        let snapshot = newTxn.snapshotID
        if snapshot == nil || snapshot != lastSnapshotID {
            schemaVersionValue = nil
            if case .some(nil) = metaCache { metaCache = nil } // absent then: look again
        }
        lastSnapshotID = snapshot
        // (The same snapshot kept the version: no need to compare it.)
        if try !keptKeyspacesAreCurrent(in: newTxn) || (schemaVersionValue == nil && schemaVersion() != resolvedAt) {
            targets.removeAll(keepingCapacity: true)
            kvTargets.removeAll(keepingCapacity: true)
            schemas.removeAll(keepingCapacity: true)
            typeFacts.removeAll(keepingCapacity: false) // bumps the facts generation
            checkedHandlesVersion = nil
        }
        return true
    }

    /// Whether every keyspace handle kept from earlier transactions is still current (see
    /// `StorageTransaction.isCurrent(_:)`): a handle that an earlier read transaction opened
    /// itself is closed when it ends, and its number may be reused.
    private func keptKeyspacesAreCurrent(in txn: any StorageTransaction) -> Bool {
        // Handles unchanged since they were last checked: all still current (the usual case).
        let version = txn.keyspaceHandlesVersion
        if let version, version == checkedHandlesVersion { return true }
        if let meta = metaCache, let meta, !txn.isCurrent(meta) { metaCache = nil }
        for target in targets.values where !target.keyspacesAreCurrent(in: txn) { return false }
        for target in kvTargets.values where !target.keyspacesAreCurrent(in: txn) { return false }
        checkedHandlesVersion = version
        return true
    }

    /// The driver's `StorageTransaction.keyspaceHandlesVersion` when the kept handles were
    /// last found current.
    @exclusivity(unchecked) private var checkedHandlesVersion: Int?
    /// Set when a view other than the one it was made for uses this context (`alias(_:)`):
    /// such a context is never reused by another transaction.
    @exclusivity(unchecked) var sharedWithOtherViews = false
    /// The snapshot of the transaction this (reusable read) context served last.
    @exclusivity(unchecked) private var lastSnapshotID: UInt64?

    /// Lets go of the transaction (which has ended or is about to): the context then holds no
    /// transaction alive until the next ``rebind(to:retaining:)``.
    func unbind() {
        txn = ended
        if owner != nil { owner = nil } // (storing nil over nil still costs a release call)
    }

    /// The driver's transaction under any record transform.
    package var baseTransaction: any StorageTransaction { txn.untransformed }

    /// Appends what was recorded since the last call to the change log (when watchers exist).
    /// The document layer calls it at the end of every write closure, inside the transaction.
    func appendChangeLog() throws {
        guard logsChanges, let recorder else { return }
        let changes = recorder.touched(since: loggedMark)
        loggedMark = recorder.mark
        if !changes.isEmpty { try ChangeLog.append(changes, writer: core.token, txn: txn) }
    }

    // MARK: Meta records

    /// The store's meta keyspace in this transaction (nil: absent, in a read transaction).
    @exclusivity(unchecked) private var metaCache: Keyspace??
    func metaKeyspace() throws -> Keyspace? {
        if let cached = metaCache { return cached }
        let found = try txn.keyspace(named: StoreLayout.metaDatabase, create: !txn.isReadOnly)
        metaCache = found
        return found
    }

    /// Throws a typed error when this is a read-only transaction.
    func requireWritable(_ operation: @autoclosure () -> String) throws {
        if txn.isReadOnly { throw DepotError.readOnlyTransaction(operation: operation()) }
    }

    // MARK: Savepoints

    var mark: Mark { Mark(recorder: recorder?.mark ?? 0, depth: txn.nestingDepth, undo: undoLog?.mark ?? 0) }

    /// Forgets what was done after `mark`: the child transaction at `childDepth` (and any
    /// deeper) was aborted, so handles, descriptors and schemas changed there are gone too.
    func revert(to mark: Mark, childDepth: Int) {
        recorder?.revert(to: mark.recorder)
        undoLog?.revert(to: mark.undo)
        loggedMark = min(loggedMark, mark.recorder)
        metaCache = nil // it may have been created inside the aborted child: look it up again
        targets = targets.filter { $0.value.depth < childDepth }
        kvTargets = kvTargets.filter { $0.value.depth < childDepth }
        typeFacts.removeAll()
        pendingDescriptors.removeAll { $0.depth >= childDepth }
        schemas.removeAll()
        schemaVersionValue = nil
        for target in targets.values { target.schemaLoaded = false }
        parkedReferences.removeAll()
    }

    /// Entries made inside a committed child now belong to its parent.
    func promote(toDepth target: Int) {
        let depth = max(0, target)
        for entry in targets.values where entry.depth > depth { entry.depth = depth }
        for entry in kvTargets.values where entry.depth > depth { entry.depth = depth }
        for i in pendingDescriptors.indices where pendingDescriptors[i].depth > depth { pendingDescriptors[i].depth = depth }
    }

    // MARK: Collections

    /// The collection `collection` of `alias` as the record pipeline writes it, checking (and
    /// on first write recording) the kind of its IDs. Returns nil when it does not exist and
    /// `create` is false; `create` in a read-only transaction is a typed error.
    package func target(alias: String, collection: String, kind: IDKind, create: Bool) throws -> RecordTarget? {
        let key = CollectionName(alias: alias, collection: collection)
        if let cached = targets[key] {
            if cached.kind != kind {
                throw DepotError.idKindMismatch(alias: alias, collection: collection, stored: cached.kind, requested: kind)
            }
            return cached
        }
        if create { try requireWritable("write to collection '\(collection)'") }
        let name = StoreLayout.documentDatabase(alias: alias, collection: collection)
        try StoreLayout.validateCollection(collection)
        let stored = try storedKind(alias: alias, collection: collection, name: name)
        if let stored, stored != kind {
            throw DepotError.idKindMismatch(alias: alias, collection: collection, stored: stored, requested: kind)
        }
        guard let db = try txn.keyspace(named: name, create: create) else { return nil }
        if stored == nil && create {
            try txn.put(Array(kind.rawValue.utf8), forKey: Array(StoreLayout.descriptorKey(alias: alias, collection: collection).utf8), in: try writableMeta())
            pendingDescriptors.append((name, kind, txn.nestingDepth))
        }
        return remember(key, keyspace: db, kind: stored ?? kind)
    }

    /// The collection of a document type as an earlier read transaction of the same schema
    /// version resolved it (see ``StoreCore/ReadTarget``), remembered in this transaction; nil
    /// when none did. Read transactions only.
    func cachedReadTarget(type: ObjectIdentifier, alias: String, kind: IDKind, typeVersion: Int,
                          typeName: () -> String) throws -> RecordTarget? {
        let version = try schemaVersion()
        guard let cached = core.readTarget(.init(type: type, alias: alias), version: version), cached.kind == kind,
              txn.isCurrent(cached.keyspace) else { return nil }
        if cached.typeVersion > typeVersion {
            throw DepotError.newerVersion(collection: cached.collection, stored: cached.typeVersion, declared: typeVersion, typeName: typeName())
        }
        let key = CollectionName(alias: alias, collection: cached.collection)
        if let known = targets[key] { return known }
        return remember(key, keyspace: cached.keyspace, kind: cached.kind)
    }

    /// Offers a collection resolved in this read transaction to later ones (same schema version).
    func rememberReadTarget(_ target: RecordTarget, type: ObjectIdentifier, typeVersion: Int) throws {
        guard txn.isReadOnly else { return }
        core.rememberReadTarget(.init(collection: target.collection, keyspace: target.keyspace, kind: target.kind, typeVersion: typeVersion),
                                for: .init(type: type, alias: target.alias), version: try schemaVersion())
    }

    /// A collection whatever its ID kind (for export, schemaless reads and administration).
    func existingTarget(alias: String, collection: String) throws -> RecordTarget? {
        let key = CollectionName(alias: alias, collection: collection)
        if let cached = targets[key] { return cached }
        let name = StoreLayout.documentDatabase(alias: alias, collection: collection)
        guard let kind = try storedKind(alias: alias, collection: collection, name: name) else { return nil }
        guard let db = try txn.keyspace(named: name, create: false) else { return nil }
        return remember(key, keyspace: db, kind: kind)
    }

    /// The key/value kit's records of `alias` (reported as collection `$kv`, string keys).
    package func keyValueTarget(alias: String, create: Bool) throws -> RecordTarget? {
        if let cached = kvTargets[alias] { return cached }
        if create { try requireWritable("write key/value entries") }
        guard let ks = try txn.keyspace(named: StoreLayout.keyValueDatabase(alias: alias), create: create) else { return nil }
        let target = RecordTarget(alias: alias, collection: StoreLayout.keyValueCollection, keyspace: ks, kind: .string,
                                  depth: txn.nestingDepth, slot: recorder?.slot(alias: alias, collection: StoreLayout.keyValueCollection, kind: .string),
                                  isKeyValue: true)
        target.schemaLoaded = true // no indexes, no sync index
        kvTargets[alias] = target
        return target
    }

    private func remember(_ key: CollectionName, keyspace: Keyspace, kind: IDKind) -> RecordTarget {
        let target = RecordTarget(alias: key.alias, collection: key.collection, keyspace: keyspace, kind: kind, depth: txn.nestingDepth,
                                  slot: recorder?.slot(alias: key.alias, collection: key.collection, kind: kind))
        targets[key] = target
        return target
    }

    func storedKind(alias: String, collection: String, name: String) throws -> IDKind? {
        if let pending = pendingDescriptors.last(where: { $0.name == name }) { return pending.kind }
        if !droppedDatabases.contains(name), let known = core.knownKind(of: name) { return known }
        guard let meta = try metaKeyspace() else { return nil }
        let raw = try txn.get(Array(StoreLayout.descriptorKey(alias: alias, collection: collection).utf8), in: meta)
        guard let raw else { return nil }
        guard let kind = IDKind(rawValue: String(decoding: raw, as: UTF8.self)) else {
            throw DepotError.corruptRecord(alias: alias, collection: collection, id: "(descriptor)", detail: "unknown ID kind")
        }
        return kind
    }

    /// Drops cached handles of a collection whose database was dropped in this transaction.
    func forgetCollection(alias: String, collection: String) {
        targets[CollectionName(alias: alias, collection: collection)] = nil
        typeFacts.removeAll()
        let name = StoreLayout.documentDatabase(alias: alias, collection: collection)
        pendingDescriptors.removeAll { $0.name == name }
        droppedDatabases.insert(name)
    }

    // MARK: Schema

    /// The store's schema version as this transaction sees it (read once per transaction).
    func schemaVersion() throws -> UInt64 {
        if let schemaVersionValue { return schemaVersionValue }
        let version = try CollectionSchema.currentVersion(meta: try metaKeyspace(), txn: txn)
        schemaVersionValue = version
        return version
    }

    /// The schema of a collection: from this transaction, the store's cache (same version), or
    /// the meta records.
    func schema(alias: String, collection: String) throws -> CollectionSchema {
        let key = CollectionName(alias: alias, collection: collection)
        if let local = schemas[key] { return local }
        let version = try schemaVersion()
        if !changedSchema, let cached = core.cachedSchema(key, version: version) {
            schemas[key] = cached
            return cached
        }
        let loaded = try CollectionSchema.load(alias: alias, collection: collection, meta: try metaKeyspace(), txn: txn)
        schemas[key] = loaded
        if !changedSchema { core.cacheSchema(loaded, for: key, version: version) }
        return loaded
    }

    /// Records that schemas were removed in this transaction (an alias dropped).
    func schemaDropped() throws {
        if !changedSchema {
            schemaVersionValue = try CollectionSchema.bumpVersion(meta: try writableMeta(), txn: txn)
            changedSchema = true
        }
        schemas.removeAll()
        for target in targets.values { target.schemaLoaded = false }
        typeFacts.removeAll()
    }

    /// Records a schema change made in this transaction (meta records already written).
    func schemaChanged(alias: String, collection: String, to schema: CollectionSchema) throws {
        if !changedSchema {
            schemaVersionValue = try CollectionSchema.bumpVersion(meta: try writableMeta(), txn: txn)
            changedSchema = true
        }
        let key = CollectionName(alias: alias, collection: collection)
        schemas[key] = schema
        if let target = targets[key] { target.schemaLoaded = false }
    }
}

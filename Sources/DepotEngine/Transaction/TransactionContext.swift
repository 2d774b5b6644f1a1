/// The record engine's state for one top-level transaction, shared by every view of it that the
/// document layer hands out (one per alias): the record targets (collections) resolved so far,
/// the schema in force, the change recorder, encode buffers, the undo log and the stacks that
/// guard reference cycles, and, kept for the layer above without knowing their type, its
/// per-type facts. Savepoints mark it and roll it back with the child transaction. The record
/// pipeline, schema reconciliation, delete rules and meta records are its methods (see the
/// extensions in Pipeline/, Schema/ and Transaction/).
///
/// Its stored variables are `@exclusivity(unchecked)`: a context belongs to one transaction, so
/// to one thread at a time, and no accessor overlaps another; the dynamic check costs two
/// runtime calls per access on every request (measured with the read_txn workload). The
/// attribute does not cross modules, so what DepotCore reads or changes on a hot path goes
/// through an inlinable `package` accessor whose body, compiled here, accesses the variable
/// unchecked (as `RecordTarget`'s). `@usableFromInline`: the `package` members of a type that
/// is not are not inlined into another module, even `@inlinable` ones (Swift 6.3).
@usableFromInline
package final class TransactionContext {
    /// The transaction. Changes only for the reusable read context of a thread's read session
    /// (``rebind(to:retaining:)``, ``unbind()``), between its transactions. Not retained, so
    /// that using it costs no reference counting: ``owner`` holds it, or (a rebound read
    /// context) the driver, while it is bound here; ``unbind()`` leaves one that lives as long.
    @inlinable package var txn: any StorageTransaction { _txn }
    @usableFromInline @exclusivity(unchecked) unowned(unsafe) var _txn: any StorageTransaction
    /// Keeps ``txn`` alive: the transaction this context was made for, until ``unbind()``.
    @usableFromInline @exclusivity(unchecked) var owner: (any StorageTransaction)?
    /// `txn.maxKeySize`, read once (checked before every look-up).
    @usableFromInline package let maxKeySize: Int
    /// The engine state of the store (descriptors, schemas, transform, delete rules).
    package let engine: EngineCore
    /// Records the changes of this transaction (nil: nobody observes them).
    @usableFromInline package let recorder: ChangeRecorder?
    /// Whether this write logs its changes for watchers in other processes.
    @usableFromInline package let logsChanges: Bool
    @exclusivity(unchecked) var loggedMark = 0

    /// A collection of an alias.
    package struct CollectionName: Hashable {
        package var alias: String
        package var collection: String
    }

    /// Collections resolved in this transaction, with the depth they were resolved at.
    @exclusivity(unchecked) var targets = FirstEntryMap<CollectionName, RecordTarget>()
    /// The key/value kit's keyspace per alias.
    @exclusivity(unchecked) var kvTargets: [String: RecordTarget] = [:]
    /// The document layer's per-type facts, keyed by type and alias (the engine keeps them
    /// without knowing their type). Cleared (and ``factsGeneration`` bumped) when targets may
    /// have changed; views keep a copy keyed by type alone while the generation holds.
    @exclusivity(unchecked) var typeFacts = FirstEntryMap<TypeFactsKey, AnyObject>() {
        didSet { if typeFacts.isEmpty { _factsGeneration &+= 1 } }
    }
    /// Bumped whenever ``typeFacts`` is emptied.
    @inlinable package var factsGeneration: Int { _factsGeneration }
    @usableFromInline @exclusivity(unchecked) var _factsGeneration = 0
    @usableFromInline @exclusivity(unchecked) var pendingDescriptors: [(name: String, kind: IDKind, depth: Int)] = []
    /// Collection databases dropped in this transaction (the store forgets them after commit).
    @usableFromInline @exclusivity(unchecked) var droppedDatabases: Set<String> = []
    /// Schemas read or changed in this transaction.
    @exclusivity(unchecked) var schemas: [CollectionName: CollectionSchema] = [:]
    @exclusivity(unchecked) var schemaVersionValue: UInt64?
    /// Whether this transaction changed a schema (the store's cache is reset after commit).
    @usableFromInline @exclusivity(unchecked) var changedSchema = false
    /// Whether this transaction checked the store's seal (``checkSealingOnce()``).
    @usableFromInline @exclusivity(unchecked) var sealingChecked = false
    /// The buffer records are encoded into, lent to one write at a time; a write nested in
    /// another's encoding (a referenced document parked) takes a spare. Buffers are given back
    /// in the reverse order they were taken (each in a `defer`; see `TransactionContext+Buffers`).
    @exclusivity(unchecked) var recordBuffer: [UInt8] = []
    @exclusivity(unchecked) var recordBufferLent = false
    @exclusivity(unchecked) var sparesLent = 0
    @exclusivity(unchecked) var spareBuffers: [[UInt8]] = []
    /// Records being deleted right now (delete rules that cascade back to one are ignored).
    @usableFromInline @exclusivity(unchecked) var deleting: Set<ChangeRecorder.Key> = []
    /// Before- and after-images for the store handle's undo history (nil: not recorded).
    @inlinable package var undoLog: UndoLog? {
        get { _undoLog }
        set { _undoLog = newValue }
    }
    @usableFromInline @exclusivity(unchecked) var _undoLog: UndoLog?
    /// The key/value records written or deleted in this transaction, by alias and key, each
    /// with the ``keyValueWriter`` in force when it was last written. Noted by the record
    /// pipeline (every path: the key/value kit, undo and redo, clears), and kept when a savepoint
    /// rolls back (a cache then only reads the key again); after the commit the document layer
    /// drops those keys from the process's key/value caches, except each key's writer's.
    package var keyValueWrites: [String: [[UInt8]: ObjectIdentifier?]] { _keyValueWrites }
    @exclusivity(unchecked) var _keyValueWrites: [String: [[UInt8]: ObjectIdentifier?]] = [:]
    /// The document layer's key/value cache writing now, which holds what it writes (nil: no
    /// cache, as for undo and redo); set around its writes.
    @exclusivity(unchecked) package var keyValueWriter: ObjectIdentifier?
    /// Referenced documents parked in this transaction, with what was written (see DepotCore's
    /// `ReferenceHook`): parking the same unchanged document again is skipped.
    @inlinable package var parkedReferences: [ParkedReference: ParkedValue] {
        _read { yield _parkedReferences }
        _modify { yield &_parkedReferences }
    }
    @usableFromInline @exclusivity(unchecked) var _parkedReferences: [ParkedReference: ParkedValue] = [:]

    /// What was parked for a referenced document: the value itself when its type is
    /// `Equatable`, else its encoded bytes (references as references).
    @usableFromInline
    package enum ParkedValue {
        case value(any Equatable)
        case bytes([UInt8])
    }

    /// A referenced document parked in this transaction: its collection (the target's identity,
    /// stable within the transaction) and key.
    @usableFromInline
    package struct ParkedReference: Hashable {
        package var target: ObjectIdentifier
        package var key: PackedKey

        package init(target: ObjectIdentifier, key: PackedKey) {
            self.target = target
            self.key = key
        }
    }
    /// Documents being parked right now, outermost first: a reference back to one of them is
    /// written without parking it again. Keys are borrowed for the duration of the park.
    @inlinable package var parking: [RecordInProgress] {
        _read { yield _parking }
        _modify { yield &_parking }
    }
    @usableFromInline @exclusivity(unchecked) var _parking: [RecordInProgress] = []
    /// Documents being decoded right now, outermost first (for dangling-reference messages and
    /// cycles). Keys are borrowed for the duration of the decode.
    @inlinable package var resolving: ResolvingStack {
        _read { yield _resolving }
        _modify { yield &_resolving }
    }
    @usableFromInline @exclusivity(unchecked) var _resolving = ResolvingStack()

    /// The document layer's facts of a type in an alias.
    package struct TypeFactsKey: Hashable {
        package var type: ObjectIdentifier
        package var alias: String

        package init(type: ObjectIdentifier, alias: String) {
            self.type = type
            self.alias = alias
        }
    }

    /// A context for `txn` (see DepotCore's `TransactionContext.of(_:core:store:)`, which
    /// attaches it and hooks it to the commit).
    package init(txn: any StorageTransaction, engine: EngineCore, recordChanges: Bool, logChanges: Bool) {
        self._txn = txn
        owner = txn
        maxKeySize = txn.maxKeySize
        readsOnly = txn.isReadOnly
        self.engine = engine
        self.recorder = recordChanges || logChanges ? ChangeRecorder() : nil
        self.logsChanges = logChanges
    }

    /// What the store learns from this transaction once it committed: the collections it
    /// dropped and created, and whether cached schemas are stale.
    package func committed() {
        engine.forget(databases: Array(droppedDatabases))
        for d in pendingDescriptors { engine.remember(d.kind, for: d.name) }
        if changedSchema { engine.resetSchemas() }
        publishWriteTargets()
    }

    /// The document layer's facts of a type in an alias, if this transaction has them. Not
    /// gated by ``confirmPendingVersion()``: its caller (DepotCore's `anyFacts`) confirms first.
    package func typeFacts(for key: TypeFactsKey) -> AnyObject? { typeFacts[key] }

    /// Keeps the document layer's facts of a type in an alias for this transaction.
    package func setTypeFacts(_ facts: AnyObject, for key: TypeFactsKey) { typeFacts[key] = facts }

    // MARK: Reuse by read sessions (see DepotCore's ReadSessions)

    /// Whether this context was made for a read-only transaction (and so only serves those).
    @usableFromInline let readsOnly: Bool
    /// What ``unbind()`` leaves in ``txn`` (kept here: unbinding reads no global).
    @usableFromInline let ended: any StorageTransaction = EndedTransaction.shared

    /// Whether this context can serve another read transaction: a read-only one that holds no
    /// state of an operation in progress. Stored flags only (no call on the transaction).
    @inlinable
    package var isReusableForReads: Bool {
        readsOnly && !_sharedWithOtherViews && recorder == nil && !logsChanges && !changedSchema && _undoLog == nil
            && _resolving.isEmpty && _parking.isEmpty && deleting.isEmpty && _parkedReferences.isEmpty
            && pendingDescriptors.isEmpty && droppedDatabases.isEmpty
    }

    /// Makes this (reusable, unbound) read context the context of the read transaction
    /// `newTxn`. The caller passes a context that ``isReusableForReads`` found reusable when its
    /// last transaction ended (DepotCore's `Store.read(_:)` keeps no other), and that nothing
    /// used since. What it resolved stays while the store's schema version is the one it was
    /// resolved at (every collection drop and schema change bumps the version); otherwise it is
    /// forgotten. Returns false when the context cannot serve `newTxn`. Not attached to `newTxn`
    /// (nothing looks a read's context up by its transaction); calls go to `newTxn`, the
    /// caller's reference. `retaining`: the caller holds no reference to `newTxn` (a transform's
    /// wrapper).
    ///
    /// `confirmingVersionLater`: the schema version is not read now. The look-ups of what the
    /// context resolved confirm it first (``confirmPendingVersion()``: ``target(alias:collection:kind:create:)``,
    /// ``existingTarget(alias:collection:)``, ``keyValueTarget(alias:create:)``,
    /// ``schema(alias:collection:)``, and DepotCore's `anyFacts`, the only caller of
    /// ``typeFacts(for:)``), and so does reading the version; a point read may read
    /// with what was resolved and call ``confirmVersion()`` before it hands out what it read
    /// (DepotCore's `retrieve` on a driver with ``StorageCapabilities/pipelinedReads``: the
    /// document read and the version read then come back in one wait).
    package func rebind(to newTxn: any StorageTransaction, retaining: Bool, confirmingVersionLater: Bool = false) throws -> Bool {
        guard readsOnly, !_sharedWithOtherViews, newTxn.isReadOnly, newTxn.maxKeySize == maxKeySize else { return false }
        // What this context resolved holds for the version read last, or for the one still to
        // be confirmed when the last transaction left its check for later and never read it.
        let resolvedAt = versionToConfirm ?? schemaVersionValue
        _txn = newTxn
        if retaining { owner = newTxn }
        versionToConfirm = nil
        // The same snapshot as the last transaction: the same schema version (no meta read).
        let snapshot = newTxn.snapshotID
        if snapshot == nil || snapshot != lastSnapshotID {
            schemaVersionValue = nil
            if case .some(nil) = metaCache { metaCache = nil } // absent then: look again
        }
        lastSnapshotID = snapshot
        // (The same snapshot kept the version: no need to compare it.)
        if !keptKeyspacesAreCurrent(in: newTxn) {
            forgetResolved()
        } else if schemaVersionValue == nil {
            if confirmingVersionLater, let resolvedAt {
                versionToConfirm = resolvedAt
            } else if try schemaVersion() != resolvedAt {
                forgetResolved()
            }
        }
        return true
    }

    /// After a ``rebind(to:retaining:confirmingVersionLater:)`` that left the schema version
    /// for later: whether what this context resolved still holds (the version is the one it was
    /// resolved at). When it does not, it is forgotten and false is returned: whatever was read
    /// with it must be read again. True when nothing was left to confirm.
    @usableFromInline package func confirmVersion() throws -> Bool {
        guard let expected = versionToConfirm else { return true }
        // Reading the version settles the check (see schemaVersion()).
        return try schemaVersion() == expected
    }

    /// Whether a rebind left the schema version check for later and nothing confirmed it yet.
    @inlinable package var hasVersionToConfirm: Bool { versionToConfirm != nil }

    /// Confirms a check a rebind left for later (``confirmVersion()``) before what this context
    /// resolved is used: the look-ups of collections and schemas here and DepotCore's look-up of
    /// a type's facts call it first (see ``rebind(to:retaining:confirmingVersionLater:)``), so
    /// that a read closure of the app relies on nothing resolved at another schema version. A
    /// no-op without such a check.
    @inlinable @inline(__always)
    package func confirmPendingVersion() throws {
        if _slowPath(versionToConfirm != nil) { _ = try confirmVersion() }
    }

    /// Forgets the collections, schemas and type facts resolved (the schema changed).
    func forgetResolved() {
        targets.removeAll(keepingCapacity: true)
        kvTargets.removeAll(keepingCapacity: true)
        schemas.removeAll(keepingCapacity: true)
        typeFacts.removeAll(keepingCapacity: false) // bumps the facts generation
        checkedHandlesVersion = nil
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
    /// Set when a view other than the one it was made for uses this context (an alias view):
    /// such a context is never reused by another transaction.
    @inlinable package var sharedWithOtherViews: Bool {
        get { _sharedWithOtherViews }
        set { _sharedWithOtherViews = newValue }
    }
    @usableFromInline @exclusivity(unchecked) var _sharedWithOtherViews = false
    /// The snapshot of the transaction this (reusable read) context served last.
    @exclusivity(unchecked) private var lastSnapshotID: UInt64?
    /// The schema version that what this context resolved holds for, while a rebind left its
    /// check for later (see ``confirmVersion()``); cleared when the version is read.
    @usableFromInline @exclusivity(unchecked) var versionToConfirm: UInt64?

    /// Lets go of the transaction (which has ended or is about to): the context then holds no
    /// transaction alive until the next ``rebind(to:retaining:)``.
    @inlinable
    package func unbind() {
        _txn = ended
        writeBegins()
        if owner != nil { owner = nil } // (storing nil over nil still costs a release call)
    }

    /// The driver's transaction under any record transform.
    package var baseTransaction: any StorageTransaction { txn.untransformed }

    /// Appends what was recorded since the last call to the change log (when watchers exist).
    /// The document layer calls it at the end of every write closure, inside the transaction.
    package func appendChangeLog() throws {
        guard logsChanges, let recorder else { return }
        let changes = recorder.touched(since: loggedMark)
        loggedMark = recorder.mark
        if !changes.isEmpty { try ChangeLog.append(changes, writer: engine.token, txn: txn) }
    }

    // MARK: Meta records

    /// The store's meta keyspace in this transaction (nil: absent, in a read transaction).
    @exclusivity(unchecked) var metaCache: Keyspace??
    func metaKeyspace() throws -> Keyspace? {
        if let cached = metaCache { return cached }
        let found = try txn.keyspace(named: StoreLayout.metaDatabase, create: !txn.isReadOnly)
        metaCache = found
        return found
    }

    /// Throws a typed error when this is a read-only transaction. Write paths call it before
    /// changing meta records, collections or schemas: it also moves ``writeEpoch`` on (as every
    /// write of the record pipeline does).
    package func requireWritable(_ operation: @autoclosure () -> String) throws {
        writeBegins()
        if txn.isReadOnly { throw DepotError.readOnlyTransaction(operation: operation()) }
    }

    /// Moves on with every write begun in this transaction (``requireWritable(_:)``, the record
    /// pipeline's writes) and when the transaction ends or is let go:
    /// bytes read from the storage before it moved may have been moved or freed by LMDB (which
    /// keeps them valid only until the next update in a write transaction), so a view into them
    /// (DepotCore's document views) checks it before each read.
    @inlinable package var writeEpoch: Int { _writeEpoch }
    /// Moves ``writeEpoch`` on: the transaction is about to end (an explicit commit or rollback).
    package func transactionEnding() { writeBegins() }
    /// Moves ``writeEpoch`` on: bytes read before may move.
    @inlinable @inline(__always) func writeBegins() { _writeEpoch &+= 1 }
    @usableFromInline @exclusivity(unchecked) var _writeEpoch = 0
}

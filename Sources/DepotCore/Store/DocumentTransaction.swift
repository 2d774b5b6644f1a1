import Foundation

/// A transaction of the document layer, seen through one alias.
///
/// Get one from ``Store/read(_:)``, `Store.write(_:)` or ``Store/beginTransaction(readOnly:)``.
/// ``alias(_:)`` gives a view of the *same* transaction on another alias, so one commit can
/// span several aliases atomically. Like LMDB transactions it belongs to one thread and never
/// lives across an `await`.
public final class DocumentTransaction {
    /// The alias this view reads and writes.
    public let alias: String
    /// The store this transaction was begun on.
    public var store: Store { unownedStore }
    /// The store, not retained: a thread's reusable read view is kept by the store itself
    /// (`ReadSessions`), and must not keep the store alive. `keepStore` holds it for every
    /// other view, and for a reusable one once its caller kept it past its closure.
    unowned(unsafe) let unownedStore: Store
    var keepStore: Store?
    @usableFromInline package let context: TransactionContext
    /// For a transaction from ``Store/beginTransaction(readOnly:)``: what rolls it back when its
    /// last view goes away unended (shared by the views of ``alias(_:)``); nil for the others.
    let explicitEnding: ExplicitTransactionEnding?
    var isExplicit: Bool { explicitEnding != nil }
    /// The store's unsaved changes, laid over this (read) view by ``Store``'s reads.
    @exclusivity(unchecked) var overlay: UnitOfWork?
    /// Whether reads go through a unit of work (see ``overlay``).
    @usableFromInline var hasOverlay: Bool { overlay != nil }
    /// This view's copy of the context's type facts (keyed by type only: the alias is fixed),
    /// valid while the context's facts generation is `viewFactsGeneration`.
    /// Hot fields of a thread-confined object, never accessed overlapping: no run-time
    /// exclusivity checks.
    @exclusivity(unchecked) var viewFacts: [ObjectIdentifier: AnyTypeFacts] = [:]
    @usableFromInline @exclusivity(unchecked) var viewFactsGeneration = -1
    /// The facts used last (most calls in a row are for one type): found without hashing.
    @usableFromInline @exclusivity(unchecked) var lastFacts: AnyTypeFacts?
    @usableFromInline @exclusivity(unchecked) var lastFactsType: ObjectIdentifier?
    /// Parks identified sub-documents and resolves references for this view (its owner is set in `init`).
    let referenceHook = ReferenceHook()
    /// ``referenceHook`` as the resolver the decoder takes (for inlined reads).
    @usableFromInline let referenceResolver: any BinaryReferenceDecoding
    /// ``referenceHook`` as the hook the encoder takes (for inlined parks).
    @usableFromInline let referenceEncoder: any BinaryReferenceEncoding
    /// Reused for every park of this view (the codec keeps its working state between calls);
    /// ``referenceHook`` is passed to each call. A `let`, so that calls borrow it (no copy).
    @usableFromInline let encoder = BinaryEncoder(keepingHook: true)
    /// Reused for every read of this view, with ``referenceHook`` as resolver.
    @usableFromInline let decoder = BinaryDecoder(keepingResolver: true)

    init(store: Store, alias: String, context: TransactionContext, explicit: ExplicitTransactionEnding? = nil, keptByStore: Bool = false) {
        self.unownedStore = store
        self.keepStore = keptByStore ? nil : store
        self.alias = alias
        self.context = context
        self.explicitEnding = explicit
        referenceResolver = referenceHook
        referenceEncoder = referenceHook
        referenceHook.owner = self
    }

    /// Whether this is a read-only transaction.
    public var isReadOnly: Bool { context.txn.isReadOnly }

    /// A view of this same transaction on another alias.
    public func alias(_ name: String) throws -> DocumentTransaction {
        try StoreLayout.validateAlias(name)
        let view = DocumentTransaction(store: store, alias: name, context: context, explicit: explicitEnding)
        view.overlay = overlay
        // The view shares the context: a thread's reusable read view must not serve another
        // transaction while this one may still be in use (see `ReadSessions`).
        context.sharedWithOtherViews = true
        return view
    }

    // MARK: Savepoints

    /// Runs `body` in a savepoint (an LMDB child transaction): when it throws, its changes (and
    /// its entries in the change set) are undone and the error rethrown; the rest of the
    /// transaction goes on.
    @discardableResult
    public func savepoint<R>(_ body: () throws -> R) throws -> R {
        try context.savepoint(body)
    }

    // MARK: Explicit transactions

    /// Commits a transaction from ``Store/beginTransaction(readOnly:)``; observers are told afterwards.
    public func commit() throws {
        guard isExplicit else {
            throw DepotError.transactionMisuse("commit() is for transactions from beginTransaction(); a closure-scoped transaction commits when its closure returns")
        }
        guard let txn = context.baseTransaction as? any ExplicitStorageTransaction else { throw DepotError.transactionMisuse("no explicit transaction to commit") }
        if explicitEnding?.ended == true {
            throw DepotError.transactionMisuse("commit(): this transaction has already ended (committed or rolled back); begin a new one")
        }
        guard txn.canEndOnCallingThread else {
            throw DepotError.transactionMisuse("commit(): a write transaction ends on the thread that began it (the storage's writer lock belongs to that thread); it is still open: commit or roll it back there")
        }
        context.transactionEnding()
        try store.finishUndoLog(self)
        try context.appendChangeLog()
        // Ended from here on, committed or not (a failed commit aborts); a step above that
        // failed left it open, to be rolled back (by `rollback()`, or when it is released).
        explicitEnding?.ended = true
        do {
            try txn.commit()
        } catch {
            throw DepotError.storage(wrapping: error)
        }
    }

    /// Rolls back a transaction from ``Store/beginTransaction(readOnly:)``: nothing of it is kept.
    /// A write transaction rolls back only on the thread that began it: called on another
    /// thread, this does nothing (the transaction stays open there; ``commit()`` says so).
    public func rollback() {
        guard let explicitEnding, explicitEnding.transaction.canEndOnCallingThread else { return }
        explicitEnding.ended = true
        context.transactionEnding()
        (context.baseTransaction as? any ExplicitStorageTransaction)?.abort()
    }

    // MARK: Parking (upsert)

    /// Stores `document` (insert or replace) and every identified document it references.
    /// Returns the new revision of the record (1 for a new document).
    @discardableResult
    public func park<D: Document>(_ document: D) throws -> UInt64 {
        try park(document, ifRevision: nil)
    }

    /// Stores several documents.
    public func park<S: Sequence>(_ documents: S) throws where S.Element: Document {
        for d in documents { try park(d, ifRevision: nil) }
    }

    /// Stores `document` only if its stored revision is `expected` (0: only if absent) —
    /// optimistic concurrency. Throws `DepotError` with code `DepotError.Code/revisionConflict`.
    ///
    /// Inlinable, so that it is specialized for `D` where it is called: the document's ID and
    /// codec are reached without generic metadata; the record is written by the non-generic
    /// record pipeline (`parkRecord(_:key:flags:expected:displayID:encode:)`).
    @inlinable @discardableResult
    public func park<D: Document>(_ document: D, ifRevision expected: UInt64?) throws -> UInt64 {
        guard let facts = try anyFacts(D.self, create: true) else { throw Self.collectionNotCreated(D.collection) }
        if !facts.fieldsChecked { try checkIndexFields(of: document, facts: facts) }
        let flags = facts.isSyncable ? Self.parkFlags(of: document) : Self.notSyncedFlags
        return try document.id.withKeyBytes { key in
            try parkRecord(facts, key: key, flags: flags, expected: expected,
                           displayID: { document.id.documentValue }) { buffer in
                if facts.generated != nil {
                    try encoder.encodeDocument(document, into: &buffer, hook: referenceEncoder)
                } else {
                    try encoder.encode(document, into: &buffer, hook: referenceEncoder)
                }
            }
        }
    }

    /// Writes the record of a document being parked (noted as being parked while it is encoded,
    /// so that a reference cycle back to it is only referenced).
    @usableFromInline
    func parkRecord(_ facts: AnyTypeFacts, key: UnsafeRawBufferPointer, flags: UInt8, expected: UInt64?,
                    displayID id: () -> DocumentValue, encode: (inout [UInt8]) throws -> Void) throws -> UInt64 {
        let target = facts.target
        context.parking.append(.init(alias: alias, collection: target.collection, key: key))
        defer { context.parking.removeLast() }
        return try context.writeRecord(target, key: key, flags: flags, expected: expected, displayID: { displayID(id()) }, encode: encode)
    }

    @usableFromInline
    static func collectionNotCreated(_ collection: String) -> DepotError {
        DepotError.storageInconsistent("the collection '\(collection)' could not be created")
    }

    /// The record flags of a park of a document of a type that is not ``Syncable``.
    @usableFromInline
    static var notSyncedFlags: UInt8 { SyncStatus.notSynced.recordFlags }

    /// The record flags a park stores: a ``Syncable``'s own status, as given (GarageStorage's
    /// rule); `.notSynced` for other types.
    @usableFromInline
    static func parkFlags<D: Document>(of document: D) -> UInt8 {
        ((document as? any Syncable)?.syncStatus ?? .notSynced).recordFlags
    }

    // MARK: Deleting

    /// Deletes `document` (by its ID). Returns whether it was stored. Referenced documents stay.
    @discardableResult
    public func delete<D: Document>(_ document: D) throws -> Bool {
        try delete(D.self, id: document.id)
    }

    /// Deletes the document of type `D` with `id`. Returns whether it was stored.
    @discardableResult
    public func delete<D: Document>(_ type: D.Type, id: D.ID) throws -> Bool {
        try context.requireWritable("delete a \(D.collection) document")
        guard let facts = try facts(D.self, create: false) else { return false }
        return try id.withKeyBytes { key in try context.deleteRecord(facts.target, key: key) }
    }

    /// Deletes every document of type `D` in this alias. Returns how many were deleted.
    @discardableResult
    public func deleteAll<D: Document>(_ type: D.Type) throws -> Int {
        try context.requireWritable("delete \(D.collection) documents")
        guard let facts = try facts(D.self, create: false) else { return 0 }
        return try context.clearRecords(facts.target)
    }

    /// Deletes every document of `collection` in this alias (the collection stays known).
    @discardableResult
    public func deleteCollection(_ collection: String) throws -> Int {
        try context.requireWritable("delete \(collection) documents")
        guard let target = try context.existingTarget(alias: alias, collection: collection) else { return 0 }
        return try context.clearRecords(target)
    }

    /// Deletes every document of every collection in this alias. Returns how many were deleted.
    @discardableResult
    public func deleteEverything() throws -> Int {
        var total = 0
        for collection in try collections() { total += try deleteCollection(collection) }
        return total
    }

    /// The collections this alias has held documents in.
    public func collections() throws -> [String] {
        let prefix = StoreLayout.descriptorPrefix(alias: alias)
        return try context.metaEntries(prefix: Array(prefix.utf8))
            .map { String(decoding: $0.key.dropFirst(prefix.utf8.count), as: UTF8.self) }
    }
}

/// Rolls back a transaction from ``Store/beginTransaction(readOnly:)`` that was neither committed
/// nor rolled back when its last view is released (an error thrown between begin and commit, a
/// view dropped): as in GRDB or Core Data, an abandoned transaction keeps nothing — and no longer
/// holds the store's one writer, which every other write would wait for. Released on another
/// thread than the one that began it (LMDB's writer lock belongs to that thread), it cannot be
/// rolled back: it stays open, and other writers wait, until the process ends.
///
/// Not `Sendable`: like the transaction, it belongs to the thread that began it.
final class ExplicitTransactionEnding {
    let context: TransactionContext
    let transaction: any ExplicitStorageTransaction
    /// Set by ``DocumentTransaction/commit()`` and ``DocumentTransaction/rollback()``.
    var ended = false

    init(context: TransactionContext, transaction: any ExplicitStorageTransaction) {
        self.context = context
        self.transaction = transaction
    }

    deinit {
        guard !ended else { return }
        context.transactionEnding()
        transaction.abort()
        transaction.abandon() // still open: released on another thread than its own
        // The transaction and its context refer to each other: the cycle ends with it.
        transaction.attachment = nil
    }
}

import Foundation
import DepotSupport

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
    /// The alias of a store opened with `init(path:options:)` (module `Depot`).
    public static let defaultAlias = "default"

    /// Whether `name` is one of the named databases the store keeps for itself (documents,
    /// indexes, meta records, change log: names beginning `depot.`). Raw writes there bypass
    /// indexes, checksums and change sets, so tools refuse them.
    package static func isReservedDatabaseName(_ name: String) -> Bool {
        name.hasPrefix(StoreLayout.reservedPrefix)
    }

    /// Checks that `name` can name an alias (1 to 100 bytes, no '/', no control characters).
    /// - Throws: `DepotError` `.invalidAliasName` saying what is wrong.
    public static func validateAliasName(_ name: String) throws { try StoreLayout.validateAlias(name) }

    /// Checks that `name` can name a collection (1 to 300 bytes, no '/', no control characters).
    /// - Throws: `DepotError` `.invalidCollectionName` saying what is wrong.
    public static func validateCollectionName(_ name: String) throws { try StoreLayout.validateCollection(name) }

    package let core: StoreCore
    /// The alias this handle reads and writes.
    public let alias: String
    let lock = NSLock()
    /// Each thread's reusable read view (see `ReadSessions`).
    let readSessions = ReadSessions<DocumentTransaction>()
    /// Whether the driver has `StorageCapabilities.pipelinedReads` (see ``retrieve(_:id:)``).
    let pipelinedReads: Bool
    private var autosaveValue: Bool
    /// The unit of work (guarded by `lock`); see `Store+UnitOfWork.swift`.
    var work = UnitOfWork()
    /// The undo history, when recorded (guarded by `lock`); see `UndoHistory.swift`.
    var undoHistoryValue: UndoHistory?

    /// A store on any storage driver (see `StorageDriver`; `InMemoryDriver` for tests and
    /// previews). Stores on the same driver object share observers and caches.
    /// - Parameters:
    ///   - driver: Where the records are kept.
    ///   - autosave: Whether parks and deletes made outside a transaction commit at once
    ///     (`StoreOptions/autosave`).
    ///   - recordTransform: A transform every document and key/value record passes through
    ///     (encryption: see `RecordTransform`); stores on the same driver object share one: a
    ///     second handle must give the same (`DepotError.Code.transformMismatch` otherwise).
    public convenience init(driver: any StorageDriver, autosave: Bool = true, recordTransform: (any RecordTransform)? = nil) throws {
        let core = try StoreCore.core(for: driver)
        try core.adopt(recordTransform)
        self.init(core: core, alias: Store.defaultAlias, autosave: autosave)
    }

    package init(core: StoreCore, alias: String, autosave: Bool) {
        self.core = core
        self.alias = alias
        self.autosaveValue = autosave
        pipelinedReads = core.driver.capabilities.contains(.pipelinedReads)
    }

    /// How dates look in exported JSON and seed files for this store (`StoreOptions/dateStrategy`).
    public var dateStrategy: DateStrategy {
        get { core.dateStrategy }
        set { core.dateStrategy = newValue }
    }

    /// The storage driver under this store.
    public var driver: any StorageDriver { core.driver }

    /// What the storage driver promises (transactions, savepoints, durability, …).
    public var capabilities: StorageCapabilities { core.driver.capabilities }

    /// Where the store's data lives (the folder, for LMDB).
    public var path: String { core.driver.location }

    // MARK: Transactions

    /// Runs `body` in a read-only snapshot.
    ///
    /// Cheap enough to run per request: each thread reuses its read view of this store handle
    /// from one `read` to the next (what it resolved stays valid while the schema is unchanged),
    /// and nothing is locked or shared between threads reading at once.
    public func read<R>(_ body: (DocumentTransaction) throws -> R) throws -> R {
        // On a driver that pipelines reads, a reused view checks the schema version at its first
        // look-up of what it resolved, with a point read's own read when that comes first (one
        // wait for both): see `TransactionContext.rebind(to:retaining:confirmingVersionLater:)`.
        try read(confirmingVersionLater: pipelinedReads, fromFirstOperation: false, body)
    }

    /// ``read(_:)``; `confirmingVersionLater`: a reused view does not check the schema version
    /// when the read begins (see `TransactionContext.rebind(to:retaining:confirmingVersionLater:)`);
    /// `fromFirstOperation`: the driver's `readFromFirstOperation(_:)`, which may run `body`
    /// twice (the library's own bodies only, never the app's).
    @inline(__always)
    func read<R>(confirmingVersionLater: Bool, fromFirstOperation: Bool, _ body: (DocumentTransaction) throws -> R) throws -> R {
        let slot = readSessions.slot()
        // The slot's reference to the view, now this read's: used unretained meanwhile.
        guard let taken = readSessions.take(slot) else { return try readInNewView(slot, body) }
        var reusable = true
        defer { finishRead(taken.takeRetainedValue(), in: slot, reusable: reusable) }
        return try core.read(fromFirstOperation: fromFirstOperation) { txn in
            try taken._withUnsafeGuaranteedRef { session in
                let rebound: Bool
                do {
                    rebound = try core.hasRecordTransform
                        ? session.context.rebind(to: core.wrap(txn), retaining: true, confirmingVersionLater: confirmingVersionLater)
                        : session.context.rebind(to: txn, retaining: false, confirmingVersionLater: confirmingVersionLater)
                } catch {
                    // Not reusable after a failed rebind: dropped, never given back.
                    session.context.unbind()
                    reusable = false
                    throw error
                }
                guard _fastPath(rebound) else {
                    // The view cannot serve this transaction (it is dropped): a new one does.
                    reusable = false
                    return try readInView(newReadView(of: txn, keptByStore: false), txn, body)
                }
                // Before the driver ends the transaction: the context holds no transaction (so
                // the driver's transaction object is not kept alive past its closure).
                defer { session.context.unbind() }
                return try body(session)
            }
        }
    }

    /// ``read(_:)`` on a thread with no view to reuse: a new one, kept for the thread's next read.
    private func readInNewView<R>(_ slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                                  _ body: (DocumentTransaction) throws -> R) throws -> R {
        var made: DocumentTransaction?
        defer {
            if let view = made {
                made = nil
                finishRead(view, in: slot, reusable: true)
            }
        }
        return try core.read { txn in
            let view = newReadView(of: txn, keptByStore: true)
            made = view
            return try readInView(view, txn, body)
        }
    }

    /// A new read view of `txn`, whose context is attached to `txn` until ``readInView(_:_:_:)``
    /// ends; `keptByStore`: for a thread's read session (it then does not keep the store).
    private func newReadView(of txn: any StorageTransaction, keptByStore: Bool) -> DocumentTransaction {
        DocumentTransaction(store: self, alias: alias, context: TransactionContext.of(core.wrap(txn), core: core, store: self),
                            keptByStore: keptByStore)
    }

    /// Runs `body` in a new read view; before the driver ends the transaction, breaks
    /// transaction ↔ context (for any driver) and lets the context hold no transaction.
    private func readInView<R>(_ view: DocumentTransaction, _ txn: any StorageTransaction,
                               _ body: (DocumentTransaction) throws -> R) throws -> R {
        defer {
            txn.attachment = nil
            view.context.unbind()
        }
        return try body(view)
    }

    /// After a read: puts the thread's view back in its slot, unless it cannot serve another
    /// read or its caller kept it past the closure (left to the caller then, with the store).
    @inline(__always)
    private func finishRead(_ view: consuming DocumentTransaction, in slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                            reusable: Bool) {
        if reusable, isKnownUniquelyReferenced(&view), view.overlay == nil, view.context.isReusableForReads {
            readSessions.give(consume view, to: slot)
        } else {
            view.keepStore = self
        }
    }

    /// Runs `body` in a write transaction: commits when it returns, rolls back when it throws.
    /// Observers get the change set after the commit. `body` may run again if the map had to
    /// grow, so keep side effects out of it.
    @discardableResult
    public func write<R>(_ body: (DocumentTransaction) throws -> R) throws -> R {
        var used: (any StorageTransaction)?
        defer { used?.attachment = nil } // breaks transaction ↔ context (for any driver)
        return try core.write { txn in
            used = txn
            let tx = view(of: txn)
            beginUndoLog(tx)
            let result = try body(tx)
            try finishUndoLog(tx)
            try tx.context.appendChangeLog()
            return result
        }
    }

    /// Runs `body` on the environment's writer thread, group-committed with other async writes;
    /// returns once the commit is durable. A closure that throws undoes only its own work.
    @discardableResult
    public func write<R: Sendable>(_ body: @escaping @Sendable (DocumentTransaction) throws -> R) async throws -> R {
        guard let native = core.native else {
            // Other drivers: the same closure, run off the caller's task (see BlockingCalls).
            return try await BlockingCalls.shared.run { [self] in try write(body) }
        }
        do {
            return try await groupWrite(native, body)
        } catch let error as any StorageDriverError {
            throw DepotError.storage(error)
        }
    }

    /// The group-committed write of ``write(_:)-async``, on an LMDB-style driver.
    private func groupWrite<R: Sendable>(_ native: any EnvironmentBackedDriver,
                                         _ body: @escaping @Sendable (DocumentTransaction) throws -> R) async throws -> R {
        try await native.groupWrite { [self] txn in
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
    /// on the thread that began it; until then other writers wait. One released without either
    /// (for instance when an error is thrown between begin and commit) is rolled back then.
    public func beginTransaction(readOnly: Bool = false) throws -> DocumentTransaction {
        guard let native = core.native else {
            throw DepotError.unsupported("explicit transactions need the LMDB driver (this store runs on '\(core.driver.location)')")
        }
        let txn: any ExplicitStorageTransaction
        do {
            txn = try native.beginExplicitTransaction(readOnly: readOnly)
        } catch {
            throw DepotError.storage(wrapping: error)
        }
        let context = TransactionContext.of(core.wrap(txn), core: core, store: self, recordingAlways: true)
        let tx = DocumentTransaction(store: self, alias: alias, context: context,
                                     explicit: ExplicitTransactionEnding(context: context, transaction: txn))
        beginUndoLog(tx)
        return tx
    }

    func view(of txn: any StorageTransaction) -> DocumentTransaction {
        DocumentTransaction(store: self, alias: alias, context: TransactionContext.of(core.wrap(txn), core: core, store: self))
    }

    // MARK: Observation

    /// Registers `observer` (held weakly) for the change sets of every commit.
    public func addObserver(_ observer: any StoreObserver) { _ = core.add(observer) }

    /// Unregisters `observer`.
    public func removeObserver(_ observer: any StoreObserver) { core.remove(observer: observer) }

    /// Change sets of every commit, as an `AsyncSequence`; with `alias` and/or `collections`,
    /// only those parts (commits that touch none of them are skipped). The stream buffers without
    /// bound; cancel the iterating task to stop it. It finishes when the last handle of the store
    /// (every `Store` on its storage, and what keeps one: watchers, key/value stores) is released.
    public func changes(alias: String? = nil, collections: Set<String>? = nil) -> AsyncStream<ChangeSet> {
        core.stream(alias: alias, collections: collections)
    }

    /// Change sets touching documents of type `D` in this store's alias.
    public func changes<D: Document>(of type: D.Type) -> AsyncStream<ChangeSet> {
        core.stream(alias: alias, collections: [D.collection])
    }

    // MARK: Autosave

    /// With autosave on (the default), `park(_:)` and ``delete(_:)`` called on the store commit
    /// at once. With it off they collect in a unit of work: reads through the store see them,
    /// ``save()`` commits them in one transaction, ``rollback()`` discards them.
    public var autosave: Bool {
        get { lock.withLock { autosaveValue } }
        set { lock.withLock { autosaveValue = newValue } }
    }

}

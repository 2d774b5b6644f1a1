import CDepotAtomic
import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A read or write transaction.
///
/// Get one from ``Environment/read(_:)`` or ``Environment/write(_:)`` (the transaction ends when
/// the closure returns: commit on return, abort on throw), or from
/// ``Environment/beginTransaction(readOnly:)`` for the explicit form. A transaction is not
/// `Sendable`: it belongs to the thread that runs its closure, and must not live across an `await`.
/// Any use after it ended throws ``LMDBError/badTransaction`` naming the mistake.
public final class Transaction {
    /// The environment this transaction belongs to.
    public var environment: Environment { unownedEnvironment }
    /// The environment, not retained: a scoped read must not touch the environment's reference
    /// count, which every reading thread would share (one cache line bouncing between cores).
    /// Safe because `keepAlive` holds it whenever the transaction can outlive its caller's
    /// reference: explicit transactions, writes, and a scoped read whose closure kept it.
    @usableFromInline unowned(unsafe) let unownedEnvironment: Environment
    /// The environment, retained, unless this is a scoped read still inside its closure.
    @usableFromInline @exclusivity(unchecked) var keepAlive: Environment?
    /// The environment's `handleGenerations` and their count, kept here so that checking a
    /// handle touches no reference-counted object (see ``liveHandle(_:for:)``).
    @usableFromInline let handleGenerations: UnsafeMutablePointer<Int>
    @usableFromInline let handleGenerationCount: Int
    /// The largest key the environment accepts (its ``Environment/maxKeySize``), kept here so that
    /// operations do not touch the shared environment object.
    public let maxKeySize: Int
    /// The reader gate's stripe this read transaction registered on (nil for writes).
    @usableFromInline let readerStripe: UnsafeMutableRawPointer?
    /// The current `MDB_txn*` (the innermost child while ``nested(_:)`` runs).
    // Unchecked exclusivity (here and on the other stored variables): the transaction is
    // confined to one thread, no accessor overlaps another, and the check costs two runtime
    // calls on every access of the hot paths (measured on the scan and read_txn workloads).
    @exclusivity(unchecked) @usableFromInline var handle: OpaquePointer?
    /// A reset read `MDB_txn*` kept while this (ended, scoped read) transaction object waits in
    /// its reader stripe's cache, to be renewed by the thread's next read (see `TransactionGate`).
    @exclusivity(unchecked) @usableFromInline var pooledHandle: OpaquePointer?
    /// Whether this is a read-only transaction.
    public let isReadOnly: Bool
    /// The process that opened the environment (checked on every operation: never after `fork()`).
    @usableFromInline let ownerPID: Int32
    /// Set when an operation hit `MDB_MAP_FULL`: the scoped write then grows the map and re-runs.
    @usableFromInline @exclusivity(unchecked) var hitMapFull = false
    /// Scoped transactions are ended by their closure's return, not by `commit()`/`abort()`.
    let isScoped: Bool
    /// Depth of ``nested(_:)`` children currently open.
    @exclusivity(unchecked) var childDepth = 0
    /// Databases opened (created) by this write transaction, published to the environment at commit.
    var openedDatabases: [(depth: Int, name: String, record: Environment.DatabaseRecord)] = []
    /// Databases this write transaction dropped, to delete when it commits (see ``drop(_:)``).
    var pendingDrops: [PendingDrop] = []
    /// Names of databases whose handle this transaction closed in the environment (deleted them).
    var closedByDrop: Set<String> = []
    /// Whether this transaction holds the environment's database-open lock until it ends.
    @exclusivity(unchecked) var holdsDatabaseLock = false
    /// Whether this write transaction dropped a database and so holds new readers back until it
    /// ends (see `TransactionGate.holdNewReaders()`).
    @exclusivity(unchecked) var holdsNewReaders = false
    /// Work to run after this (top-level) write transaction committed.
    @exclusivity(unchecked) var commitHandlers: [() -> Void] = []

    /// Set by a layer above that lends this transaction out for raw work beside its own (Depot's
    /// `unsafeLMDBTransaction`): the databases whose names start with it are that layer's, and
    /// the public open and write methods refuse them; the layer's own access runs in
    /// ``ownDatabases(_:)``. Cleared when the transaction object is reused.
    @exclusivity(unchecked) @usableFromInline package var refusedDatabasePrefix: String?

    /// Runs `body` with the refusal lifted (the layer that set ``refusedDatabasePrefix``, on its
    /// own databases).
    @inlinable
    package func ownDatabases<R>(_ body: () throws -> R) rethrows -> R {
        guard let prefix = refusedDatabasePrefix else { return try body() }
        refusedDatabasePrefix = nil
        defer { refusedDatabasePrefix = prefix }
        return try body()
    }

    /// Throws when `name` is refused (see ``refusedDatabasePrefix``).
    @usableFromInline
    func refuse(_ name: String?, _ operation: StaticString) throws(LMDBError) {
        guard let prefix = refusedDatabasePrefix, let name, name.hasPrefix(prefix) else { return }
        throw LMDBError(code: LMDBError.permissionDenied.code, operation: "\(operation)", database: name,
                        detail: "databases named '\(prefix)…' belong to the document layer, which lent this transaction out: write them through its API")
    }

    /// An object that upper layers attach to the transaction (Depot's document layer keeps its
    /// per-transaction state here). Released when the transaction object is.
    // Unchecked exclusivity, as for `handle`: one thread, no overlapping access.
    @exclusivity(unchecked) public var attachment: AnyObject?

    /// Runs `handler` right after this write transaction commits successfully (never on abort).
    /// Handlers run on the committing thread, after the commit is durable, in registration order.
    public func afterCommit(_ handler: @escaping () -> Void) {
        commitHandlers.append(handler)
    }

    /// How many ``nested(_:)`` child transactions are open right now (0 at the top level).
    public var nestingDepth: Int { childDepth }

    init(environment: Environment, handle: OpaquePointer, readOnly: Bool, scoped: Bool,
         readerStripe: UnsafeMutableRawPointer? = nil) {
        self.unownedEnvironment = environment
        self.keepAlive = readOnly && scoped ? nil : environment
        self.readerStripe = readerStripe
        self.maxKeySize = environment.maxKeySize
        self.handleGenerations = environment.handleGenerations
        self.handleGenerationCount = environment.handleGenerationCount
        self.handle = handle
        self.isReadOnly = readOnly
        self.isScoped = scoped
        ownerPID = environment.gate.ownerPID
    }

    deinit {
        // Only an explicit transaction can reach here unfinished (scoped ones are always ended).
        guard handle != nil else { return }
        if !canEndOnCallingThread {
            abandon()
            return
        }
        try? environment.endExplicit(self, commit: false)
    }

    /// Lets an open write transaction go on another thread than the one that began it (e.g.
    /// across an `await`): LMDB's writer lock, which belongs to that thread, can never be
    /// released, so every writer waiting or to come fails at once (with an error that says so)
    /// instead of waiting forever. Nothing for a transaction that ended or can end here.
    public func abandon() {
        guard handle != nil, !canEndOnCallingThread else { return }
        environment.gate.abandonWriter()
    }

    /// Whether the transaction is still usable.
    public var isActive: Bool { handle != nil }

    /// The live `MDB_txn*`, or a clear error when the transaction has ended.
    @inlinable @inline(__always)
    func liveHandle(_ operation: StaticString) throws(LMDBError) -> OpaquePointer {
        guard let handle else { throw endedError(operation) }
        // The gate's check, with the owner's ID kept here: no reference to the gate per operation.
        if _slowPath(ProcessIdentity.current != ownerPID) { throw environment.gate.forkedError("\(operation)") }
        return handle
    }

    /// ``liveHandle(_:)`` for an operation on `db`, checking that `db`'s handle still names its
    /// database (see ``Database/generation``).
    @inlinable @inline(__always)
    func liveHandle<K, V>(_ operation: StaticString, for db: Database<K, V>) throws(LMDBError) -> OpaquePointer {
        let txn = try liveHandle(operation)
        // (A number LMDB never gives has no generation: such a handle fails.)
        let current = Int(db.dbi) < handleGenerationCount ? UInt32(truncatingIfNeeded: cdepot_atomic_load(handleGenerations + Int(db.dbi))) : .max - 1
        if _slowPath(db.generation != current) && db.generation != Database<K, V>.uncheckedGeneration {
            throw staleHandleError(operation, db.name)
        }
        return txn
    }

    @usableFromInline
    func staleHandleError(_ operation: StaticString, _ database: String?) -> LMDBError {
        LMDBError(code: MDB_BAD_DBI, operation: "\(operation)", database: database,
                  detail: "this handle no longer names the database: it was dropped, or the transaction that opened it did not commit; open the database again")
    }

    /// Whether the calling thread may end this transaction: a read-only one anywhere, a write
    /// transaction only on the thread that began it (LMDB's writer lock belongs to that thread).
    public var canEndOnCallingThread: Bool {
        // A forked child never touches the gate's lock (another thread may have held it at the
        // fork): ending there is the fork's error, which `commit()` reports.
        isReadOnly || handle == nil || !environment.gate.isOwnerProcess || environment.gate.callerHoldsWriter
    }

    static func otherThreadError(_ operation: StaticString) -> LMDBError {
        LMDBError(code: LMDBError.badTransaction.code, operation: "\(operation)",
                  detail: "a write transaction ends on the thread that began it (LMDB's writer lock belongs to that thread); it is still open: end it there")
    }

    @usableFromInline
    func endedError(_ operation: StaticString) -> LMDBError {
        LMDBError(code: LMDBError.badTransaction.code, operation: "\(operation)",
                  detail: "the transaction has already ended (committed or aborted); values and cursors from it are no longer valid")
    }

    @usableFromInline
    func readOnlyError(_ operation: StaticString, _ database: String?) -> LMDBError {
        LMDBError(code: LMDBError.permissionDenied.code, operation: "\(operation)", database: database,
                  detail: "a read-only transaction cannot write")
    }

    /// Records `MDB_MAP_FULL` and converts a return code into an error.
    @usableFromInline
    func failure(_ rc: Int32, _ operation: StaticString, _ database: String?) -> LMDBError {
        if rc == MDB_MAP_FULL { hitMapFull = true }
        if rc == EIO || rc == ENOSPC {
            return LMDBError.writeFailure(code: rc, operation: "\(operation)", database: database, folder: environment.path)
        }
        return LMDBError(code: rc, operation: "\(operation)", database: database)
    }

    /// The ID of this transaction's snapshot (`mdb_txn_id`).
    public var id: Int {
        guard let handle else { return 0 }
        // Clamped: it comes from the file's meta page unchecked.
        return Int(clamping: mdb_txn_id(handle))
    }

    // MARK: Child transactions

    /// Runs `body` in a child transaction (a savepoint): its changes join the parent when `body`
    /// returns, and are undone alone when it throws. The same `Transaction` object is used
    /// inside, so code that captured the parent works unchanged.
    @discardableResult
    public func nested<R>(_ body: (Transaction) throws -> R) throws -> R {
        let parent = try liveHandle("begin child transaction")
        if isReadOnly {
            throw LMDBError(code: LMDBError.invalidArgument.code, operation: "begin child transaction",
                            detail: "read-only transactions cannot have children")
        }
        var child: OpaquePointer?
        let rc = mdb_txn_begin(environment.handle, parent, 0, &child)
        if rc != 0 { throw failure(rc, "begin child transaction", nil) }
        handle = child
        childDepth += 1
        let depth = childDepth
        let dropsBefore = pendingDrops
        func finish() {
            childDepth -= 1
            handle = parent
        }
        do {
            let result = try body(self)
            let rc = mdb_txn_commit(child)
            finish()
            if rc != 0 {
                dropDatabases(openedAbove: depth - 1)
                restoreDrops(dropsBefore, in: parent)
                throw failure(rc, "commit child transaction", nil)
            }
            for i in openedDatabases.indices where openedDatabases[i].depth == depth {
                openedDatabases[i].depth = depth - 1
            }
            return result
        } catch {
            if handle == child { mdb_txn_abort(child); finish() }
            dropDatabases(openedAbove: depth - 1)
            restoreDrops(dropsBefore, in: parent)
            throw error
        }
    }

    /// After a child transaction failed: its drops are undone with it.
    private func restoreDrops(_ before: [PendingDrop], in parent: OpaquePointer) {
        pendingDrops = before
        if !closedByDrop.isEmpty { reopenDropsClosedByChild(in: parent) }
    }

    /// A child transaction failed: LMDB closed the handles it opened (the caller holds the
    /// database-open lock, as any transaction that opened one does).
    func dropDatabases(openedAbove depth: Int) {
        for entry in openedDatabases where entry.depth > depth { unownedEnvironment.retireHandle(entry.record.dbi) }
        openedDatabases.removeAll { $0.depth > depth }
    }

    // MARK: Explicit form

    /// Commits an explicit transaction (from ``Environment/beginTransaction(readOnly:)``).
    ///
    /// - Throws: ``LMDBError/badTransaction`` if it already ended or is closure-scoped, or is a
    ///   write transaction and this is not the thread that began it (it stays open);
    ///   any error of `mdb_txn_commit` (the transaction is then aborted).
    public func commit() throws {
        try checkExplicit("commit")
        try environment.endExplicit(self, commit: true)
    }

    /// Aborts an explicit transaction. Aborting one that already ended does nothing, and so
    /// does aborting a write transaction on another thread than the one that began it (see
    /// ``canEndOnCallingThread``).
    public func abort() {
        guard handle != nil, !isScoped, childDepth == 0 else { return }
        try? environment.endExplicit(self, commit: false)
    }

    private func checkExplicit(_ operation: StaticString) throws(LMDBError) {
        _ = try liveHandle(operation)
        if isScoped {
            throw LMDBError(code: LMDBError.badTransaction.code, operation: "\(operation)",
                            detail: "a closure-scoped transaction ends when its closure returns (commit) or throws (abort)")
        }
        if childDepth > 0 {
            throw LMDBError(code: LMDBError.badTransaction.code, operation: "\(operation)",
                            detail: "a child transaction is still open")
        }
    }
}

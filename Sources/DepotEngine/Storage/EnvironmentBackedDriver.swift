/// What Depot's own LMDB driver (`LMDBDriver`, module `Depot`) adds to ``StorageDriver``. The
/// document layer uses it where a driver has it; package access, because no other driver needs
/// it (each feature below has a fallback or a clear error without it).
package protocol EnvironmentBackedDriver: StorageDriver {
    /// Stores on drivers with the same identity (for LMDB: the environment, one per folder in a
    /// process) share one store core: observers, caches, the unit of work's registrations.
    var storeIdentity: ObjectIdentifier { get }
    /// Opens what read transactions must find already open (LMDB: Depot's named databases, so
    /// that a read never opens a handle while others read); called once, by the first store.
    func prepareForStores() throws
    /// The ID of the last committed transaction, a cheap read (the change watcher reads its log
    /// only when it moved); nil when unknown.
    func lastCommitID() -> Int?
    /// Runs `body` on the driver's writer, group-committed with other asynchronous writes, in a
    /// child transaction of the batch's transaction; returns once the commit is durable.
    func groupWrite<R: Sendable>(_ body: @escaping @Sendable (any StorageTransaction) throws -> R) async throws -> R
    /// A transaction the caller ends with `commit()` or `abort()`.
    func beginExplicitTransaction(readOnly: Bool) throws -> any ExplicitStorageTransaction
}

/// A storage transaction that its caller ends (``Store/beginTransaction(readOnly:)``).
package protocol ExplicitStorageTransaction: StorageTransaction {
    /// Commits; throws when the commit failed (nothing was kept).
    func commit() throws
    /// Rolls back; harmless after the transaction ended.
    func abort()
    /// Whether the calling thread may end the transaction (a write transaction of LMDB ends
    /// only on the thread that began it).
    var canEndOnCallingThread: Bool { get }
    /// The transaction's owner lets it go, still open, on a thread that cannot end it: the
    /// writer it holds can never be released, so later writers fail at once instead of
    /// waiting forever (nothing for a transaction that ended or can end here).
    func abandon()
}

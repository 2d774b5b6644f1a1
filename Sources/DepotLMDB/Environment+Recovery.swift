import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Recovery from `MDB_PANIC`.
///
/// LMDB sets a fatal flag on its `MDB_env` when it cannot write a meta page (the last step of a
/// commit); from then on it refuses every transaction with `MDB_PANIC`, although the file is
/// consistent (the old meta page still names the last good commit). Depot marks the
/// environment as panicked, reports the failed commit as failed, and before the next
/// transaction of this process (a write, or a read that meets `MDB_PANIC`) closes the `MDB_env`
/// and opens the folder again, while no transaction of this process is alive.
extension Environment {
    /// Test hook: the next commit fails as LMDB's does when it cannot write the meta page. The
    /// transaction is aborted (nothing reaches the file) and `MDB_PANIC` is reported, which puts
    /// the environment into the same recovery as a real meta-page failure.
    func simulateMetaWriteFailureOnNextCommit() {
        databaseLock.withLock { simulateMetaWriteFailure = true }
    }

    /// Consumes the test hook; true when this commit must fail.
    func takeSimulatedMetaWriteFailure() -> Bool {
        databaseLock.withLock {
            defer { simulateMetaWriteFailure = false }
            return simulateMetaWriteFailure
        }
    }

    /// The error for a commit that failed with `MDB_PANIC`; marks the environment for recovery.
    func panicError(_ operation: String) -> LMDBError {
        gate.markPanicked()
        return LMDBError.panic.with(operation: operation,
                                    detail: "LMDB could not write the meta page: this commit failed and nothing of it is on disk; the environment is reopened before the next transaction")
    }

    /// Reopens the environment if it panicked. The caller holds the writer and has no write
    /// transaction open.
    func recoverFromPanicIfNeeded() throws(LMDBError) {
        guard gate.isPanicked else { return }
        do {
            // databaseLock first: elsewhere it is taken before the gate's lock.
            try databaseLock.withLock {
                try gate.withExclusiveAccess(timeout: 10) { try reopenHoldingExclusiveAccess() }
            }
        } catch let error as LMDBError {
            throw error
        } catch {
            throw LMDBError.panic.with(operation: "recover from panic")
        }
    }

    /// Recovery from a reader that met `MDB_PANIC` (takes the writer first).
    func recoverFromPanicAsReader() throws(LMDBError) {
        gate.markPanicked()
        if gate.callerHoldsWriter { throw LMDBError.panic.with(operation: "begin read transaction", detail: "the environment panicked inside a write; it is reopened once the write ends") }
        try gate.acquireWriter()
        defer { gate.releaseWriter() }
        try recoverFromPanicIfNeeded()
    }

    /// Closes the panicked `MDB_env` and opens the folder again, keeping every cached database
    /// handle's number where LMDB gives it again (it gives the lowest free number: a database
    /// dropped earlier leaves a gap, and the databases above it move down). A database whose
    /// number changed gets a new handle (its old `Database` values fail with `badDatabase`;
    /// layers that keep handles see ``databaseHandlesVersion`` change). Runs under the gate's
    /// exclusive access (its lock held, no transaction of this process alive) and
    /// `databaseLock`.
    private func reopenHoldingExclusiveAccess() throws(LMDBError) {
        guard gate.panicked else { return } // another thread recovered meanwhile
        for txn in gate.drainCachedTransactions() { mdb_txn_abort(txn) }
        let mapSize = infoHoldingHandle().mapSize
        mdb_env_close(handle)
        do {
            let (reopened, numbers) = try Self.reopenedHandle(path: path, options: options, mapSize: mapSize, databases: databaseCache)
            handle = reopened
            // Retire every number that changed first, then make the new records (a new number
            // may be one just retired: its records take the bumped generation).
            var kept = databaseCache
            for (name, old) in databaseCache where numbers[name] != old.dbi {
                retireHandle(old.dbi)
                kept[name] = nil
            }
            if kept.count != databaseCache.count {
                for (name, dbi) in numbers where kept[name] == nil {
                    kept[name] = record(dbi: dbi, flags: databaseCache[name]?.flags ?? [])
                }
                databaseCache = kept
            }
        } catch {
            // Nothing is open any more: the environment is closed for good.
            gate.markClosedHoldingExclusive()
            gate.panicked = false
            EnvironmentRegistry.shared.remove(registryKey) {}
            throw error.with(detail: "reopening '\(path)' after MDB_PANIC failed; the environment is closed: open the folder again")
        }
        gate.panicked = false
        panicRecoveryCount += 1
    }

    /// A new `MDB_env` for `path` with the same options and map size, and the databases of
    /// `databases` opened again, in the order of their old numbers; with the number each got.
    private static func reopenedHandle(path: String, options: EnvironmentOptions, mapSize: Int,
                                       databases: [String: DatabaseRecord]) throws(LMDBError) -> (OpaquePointer, [String: MDB_dbi]) {
        var created: OpaquePointer?
        try check(mdb_env_create(&created), "recover from panic")
        guard let env = created else { throw LMDBError.outOfMemory }
        if let hook = assertionHook { _ = mdb_env_set_assert(env, hook) }
        func fail(_ rc: Int32, _ detail: String? = nil) -> LMDBError {
            mdb_env_close(env)
            return LMDBError(code: rc, operation: "recover from panic", detail: detail)
        }
        var rc = mdb_env_set_maxdbs(env, MDB_dbi(clamping: options.maxDatabases))
        if rc == 0 { rc = mdb_env_set_maxreaders(env, UInt32(clamping: options.maxReaders)) }
        if rc == 0 { rc = mdb_env_set_mapsize(env, max(mapSize, 4096)) }
        if rc == 0 { rc = mdb_env_open(env, path, options.environmentFlags, mdb_mode_t(options.fileMode)) }
        if rc != 0 { throw fail(rc) }
        // LMDB numbers database handles in the order they are opened (first free slot): open
        // them again in the order of their numbers, so that each gets its old number unless a
        // dropped database left a gap below it.
        var txn: OpaquePointer?
        rc = mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn)
        guard rc == 0, let txn else { throw fail(rc) }
        var numbers: [String: MDB_dbi] = [:]
        for (name, record) in databases.sorted(by: { $0.value.dbi < $1.value.dbi }) {
            var dbi: MDB_dbi = 0
            rc = mdb_dbi_open(txn, name.isEmpty ? nil : name, record.flags.rawValue, &dbi)
            if rc == MDB_NOTFOUND { continue } // gone from the file: nothing to reopen
            if rc != 0 {
                mdb_txn_abort(txn)
                throw fail(rc, "database '\(name)' could not be opened again")
            }
            numbers[name] = dbi
        }
        rc = mdb_txn_commit(txn)
        if rc != 0 { throw fail(rc) }
        return (env, numbers)
    }
}

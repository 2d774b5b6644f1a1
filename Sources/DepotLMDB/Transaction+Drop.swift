import CLMDB

/// A database that a write transaction dropped: emptied at once, deleted when the transaction
/// commits (see ``Transaction/drop(_:)``).
struct PendingDrop {
    let name: String
    var dbi: MDB_dbi
    /// Its persistent flags (`DatabaseFlags` masked by ``Transaction/persistentFlagsMask``).
    let flags: DatabaseFlags
}

extension Transaction {
    /// The bits of `DatabaseFlags` that LMDB stores with a database.
    static let persistentFlagsMask: UInt32 = 0x7E

    /// How long a drop waits, when its transaction commits, for the read transactions begun
    /// before it.
    static let dropWaitSeconds: Double = 10

    /// Deletes every entry of `db`, keeping the database.
    public func clear<K, V>(_ db: Database<K, V>) throws {
        let txn = try liveHandle("mdb_drop", for: db)
        if isReadOnly { throw readOnlyError("mdb_drop", db.name) }
        try refuse(db.name, "mdb_drop")
        let rc = mdb_drop(txn, MDB_dbi(db.dbi), 0)
        if rc != 0 { throw failure(rc, "clear database", db.name) }
    }

    /// Deletes `db` itself from the environment. Its handle must not be used afterwards.
    ///
    /// The database is emptied at once; in this transaction it no longer exists (opening it
    /// without `create` fails; creating it again with the same flags gives it back, empty). Its
    /// name goes when the transaction commits: LMDB forgets a dropped name in the whole
    /// environment at once, which an abort would not undo, and read transactions that began
    /// earlier may still look the database up by that name. So the commit first waits until
    /// the read transactions of this process that began before it have ended (new ones wait
    /// for the commit), as PostgreSQL's `DROP TABLE` waits for the transactions using the
    /// table: each reader keeps reading its snapshot. The commit throws ``LMDBError/busy``
    /// (and commits nothing) when one stays open for 10 seconds, for example a read
    /// transaction open on the committing thread.
    public func drop<K, V>(_ db: Database<K, V>) throws {
        let txn = try liveHandle("mdb_drop", for: db)
        if isReadOnly { throw readOnlyError("mdb_drop", db.name) }
        try refuse(db.name, "mdb_drop")
        guard let name = db.name else {
            throw LMDBError(code: LMDBError.invalidArgument.code, operation: "drop database", detail: "the main database cannot be dropped; use clear")
        }
        if pendingDrops.contains(where: { $0.name == name }) { return }
        let rc = mdb_drop(txn, MDB_dbi(db.dbi), 0)
        if rc != 0 { throw failure(rc, "drop database", name) }
        pendingDrops.append(PendingDrop(name: name, dbi: MDB_dbi(db.dbi),
                                        flags: DatabaseFlags(rawValue: db.flags.rawValue & Self.persistentFlagsMask)))
    }

    /// `openDatabase` of a name this transaction dropped (at `index` in ``pendingDrops``):
    /// without `create` it no longer exists; with the flags it had it is the same, emptied
    /// database again (its record); with other flags it is deleted now and nil is returned, for
    /// the caller to create it anew.
    func reopenDropped(at index: Int, flags: DatabaseFlags, create: Bool, in txn: OpaquePointer) throws -> Environment.DatabaseRecord? {
        let dropped = pendingDrops[index]
        guard create, !isReadOnly else {
            throw LMDBError(code: MDB_NOTFOUND, operation: "open database", database: dropped.name,
                            detail: "this transaction dropped it")
        }
        if DatabaseFlags(rawValue: flags.rawValue & Self.persistentFlagsMask) == dropped.flags {
            pendingDrops.remove(at: index)
            return environment.record(dbi: dropped.dbi, flags: dropped.flags)
        }
        try dropNow(dropped, in: txn)
        pendingDrops.remove(at: index)
        return nil
    }

    /// Deletes a dropped database (`mdb_drop` with `del`), which closes its handle in the whole
    /// environment at once: first lets the read transactions begun earlier end (new ones wait
    /// until this transaction ends), and takes the database-open lock (LMDB: no handle opened
    /// meanwhile). The handle leaves the environment's cache at once, committed or not: after
    /// an abort the database is found again by name.
    func dropNow(_ dropped: PendingDrop, in txn: OpaquePointer) throws(LMDBError) {
        let env = environment
        if !holdsNewReaders { env.gate.holdNewReaders(); holdsNewReaders = true }
        try env.gate.waitForEarlierReaders(timeout: Self.dropWaitSeconds, operation: "drop database '\(dropped.name)'")
        if !holdsDatabaseLock { env.databaseLock.lock(); holdsDatabaseLock = true }
        let rc = mdb_drop(txn, dropped.dbi, 1)
        if rc != 0 { throw failure(rc, "drop database", dropped.name) }
        env.retireHandle(dropped.dbi)
        closedByDrop.insert(dropped.name)
        if env.databaseCache[dropped.name] != nil { env.databaseCache[dropped.name] = nil }
        openedDatabases.removeAll { $0.name == dropped.name }
    }

    /// At commit: deletes the databases this transaction dropped (see ``dropNow(_:in:)``).
    func deletePendingDrops(in txn: OpaquePointer) throws(LMDBError) {
        while let dropped = pendingDrops.first {
            try dropNow(dropped, in: txn)
            pendingDrops.removeFirst()
        }
    }

    /// After a child transaction aborted and ``pendingDrops`` was put back as it was before
    /// the child: a database deleted inside the child (its handle closed in the environment)
    /// is back in the parent's snapshot, still to be dropped; open it again by name.
    func reopenDropsClosedByChild(in txn: OpaquePointer) {
        for index in pendingDrops.indices where closedByDrop.contains(pendingDrops[index].name) {
            var dbi: MDB_dbi = 0
            guard mdb_dbi_open(txn, pendingDrops[index].name, 0, &dbi) == 0 else { continue }
            pendingDrops[index].dbi = dbi
            let record = environment.record(dbi: dbi, flags: pendingDrops[index].flags)
            openedDatabases.append((childDepth, pendingDrops[index].name, record))
        }
    }
}

import CLMDB

extension Environment {
    // MARK: Closure-scoped transactions

    /// Runs `body` in a read-only snapshot and returns its result.
    ///
    /// Reads are cheap and scale with cores: each reading thread renews a reset transaction it
    /// keeps instead of beginning one anew, and takes no lock (see ``EnvironmentOptions/readTransactionPoolSize``).
    /// Any number of reads may run at once, from any threads, alongside one writer. The closure is
    /// synchronous; bytes and cursors obtained inside must not escape it.
    @inlinable
    public func read<R>(_ body: (Transaction) throws -> R) throws -> R {
        // A constant passed to `body`, moved to `endScopedRead` after (no copy to count).
        let txn = try beginRead(scoped: true)
        let result: R
        do {
            result = try body(txn)
        } catch {
            endScopedRead(consume txn)
            throw error
        }
        endScopedRead(consume txn)
        return result
    }

    /// Ends a read of ``read(_:)``. Nothing else holds the object: the thread's next read
    /// reuses it. A closure that kept the transaction: from now on it must keep the environment.
    @inlinable
    func endScopedRead(_ txn: consuming Transaction) {
        var txn = txn
        let unique = isKnownUniquelyReferenced(&txn)
        endRead(txn, reusable: unique)
        if _slowPath(!unique) { txn.keepAlive = self }
    }

    /// Runs `body` in a write transaction: commits when it returns, aborts when it throws.
    ///
    /// Only one write transaction runs at a time in the process (others wait). When the map is
    /// full (`MDB_MAP_FULL`) and ``EnvironmentOptions/automaticGrowth`` is on, the transaction is
    /// aborted, the map doubled (up to ``EnvironmentOptions/maxMapSize``) and `body` run again, so
    /// `body` must not have effects outside the transaction that cannot be repeated.
    ///
    /// - Throws: what `body` throws, or an ``LMDBError``. A write inside a write on the same
    ///   thread throws ``LMDBError/deadlock``: use ``Transaction/nested(_:)`` instead.
    @discardableResult
    public func write<R>(_ body: (Transaction) throws -> R) throws -> R {
        try gate.acquireWriter()
        var handlers: [() -> Void] = []
        let result: R
        do {
            defer { gate.releaseWriter() }
            result = try writeHoldingWriter(body, afterCommit: &handlers)
        }
        for handler in handlers { handler() }
        return result
    }

    /// The body of ``write(_:)``; the caller holds the writer, and runs the transaction's
    /// after-commit handlers (returned in `afterCommit`) once it released the writer.
    func writeHoldingWriter<R>(_ body: (Transaction) throws -> R, afterCommit: inout [() -> Void]) throws -> R {
        while true {
            let txn = try beginWriteHoldingWriter(scoped: true)
            do {
                let result = try body(txn)
                if txn.hitMapFull { throw LMDBError.mapFull.with(operation: "write") }
                afterCommit = try finishWrite(txn, commit: true)
                return result
            } catch {
                let mapFull = txn.hitMapFull || LMDBError.mapFull ~= error
                if txn.handle != nil { _ = try? finishWrite(txn, commit: false) }
                if mapFull && options.automaticGrowth && !options.readOnly {
                    try growMap()
                    continue
                }
                throw error
            }
        }
    }

    // MARK: Explicit transactions

    /// Begins a transaction that you end yourself with ``Transaction/commit()`` or
    /// ``Transaction/abort()``. A write transaction must end on the thread that began it and
    /// blocks other writers until then; one dropped without ending is aborted. Explicit writes do
    /// not grow the map: they throw ``LMDBError/mapFull`` instead.
    public func beginTransaction(readOnly: Bool = false) throws -> Transaction {
        if readOnly { return try beginRead(scoped: false) }
        try gate.acquireWriter()
        do {
            return try beginWriteHoldingWriter(scoped: false)
        } catch {
            gate.releaseWriter()
            throw error
        }
    }

    func endExplicit(_ txn: Transaction, commit: Bool) throws {
        if !gate.isOwnerProcess {
            // A transaction of the parent, ended in a forked child: never touch LMDB there.
            txn.handle = nil
            if commit { try gate.checkProcess("commit") }
            return
        }
        if txn.isReadOnly {
            endRead(txn, reusable: false)
        } else {
            // LMDB's writer lock belongs to the thread that began the transaction: ended from
            // another thread, the unlock fails unseen and every later writer waits forever.
            guard gate.callerHoldsWriter else { throw Transaction.otherThreadError(commit ? "commit" : "abort") }
            let handlers: [() -> Void]
            do {
                defer { gate.releaseWriter() }
                handlers = try finishWrite(txn, commit: commit)
            }
            for handler in handlers { handler() }
        }
    }

    // MARK: Internals

    @usableFromInline
    func beginRead(scoped: Bool) throws(LMDBError) -> Transaction {
        var attempt = 0
        while true {
            attempt += 1
            let (stripe, cached, seen) = try gate.enterReader()
            var txn = cached?.pooledHandle
            cached?.pooledHandle = nil
            var rc: Int32 = 0
            if let pooled = txn {
                rc = mdb_txn_renew(pooled)
                if rc != 0 { mdb_txn_abort(pooled); txn = nil }
            }
            if txn == nil {
                rc = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
            }
            if rc == 0, let txn, _slowPath(!gate.readerBeganCleanly(seen)) {
                // A writer started holding new readers back meanwhile: this snapshot may hold a
                // database whose handle is not usable in it yet. Begin again (the next attempt
                // waits for that writer to finish).
                mdb_txn_abort(txn)
                _ = gate.exitReader(stripe, returning: nil)
                attempt -= 1
                continue
            }
            if rc == 0, let txn {
                // The stripe's cached object, for a scoped read (it was ended, and held by no one).
                if scoped, let cached {
                    cached.handle = txn
                    return cached
                }
                return Transaction(environment: self, handle: txn, readOnly: true, scoped: scoped, readerStripe: stripe)
            }
            _ = gate.exitReader(stripe, returning: nil)
            if attempt < 3 && rc == MDB_MAP_RESIZED {
                try adoptMapSize()
                continue
            }
            if attempt < 3 && rc == MDB_READERS_FULL {
                if let dead = try? readerCheck(), dead > 0 { continue }
            }
            if attempt < 3 && rc == MDB_PANIC {
                try recoverFromPanicAsReader()
                continue
            }
            throw LMDBError(code: rc, operation: "begin read transaction",
                            detail: rc == MDB_READERS_FULL ? "all \(options.maxReaders) reader slots are in use; end other read transactions or raise maxReaders" : nil)
        }
    }

    /// Ends a read transaction: resets its `MDB_txn*` and keeps it in the stripe's cache, in
    /// `txn` itself when `reusable` (a scoped read no one else holds), else in a new object.
    @usableFromInline
    func endRead(_ txn: Transaction, reusable: Bool) {
        guard let h = txn.handle, let stripe = txn.readerStripe else { return }
        txn.handle = nil
        // Upper layers' state often points back at the transaction. (Tested first, here and
        // below: storing nil over nil still costs a release call on every read.)
        if _slowPath(txn.attachment != nil) { txn.attachment = nil }
        mdb_txn_reset(h)
        if _slowPath(txn.holdsDatabaseLock) { publishDatabasesOpened(by: txn) }
        if reusable && txn.isScoped && txn.childDepth == 0 {
            if _slowPath(!txn.commitHandlers.isEmpty) { txn.commitHandlers.removeAll() }
            if _slowPath(txn.refusedDatabasePrefix != nil) { txn.refusedDatabasePrefix = nil }
            keepReset(h, in: txn, stripe: stripe)
        } else {
            let carrier = Transaction(environment: self, handle: h, readOnly: true, scoped: true, readerStripe: stripe)
            carrier.handle = nil
            keepReset(h, in: carrier, stripe: stripe)
        }
    }

    /// Unregisters the reader, keeping the reset `h` in `carrier` in the stripe's cache (or
    /// aborting it when the cache is taken).
    @usableFromInline @inline(__always)
    func keepReset(_ h: OpaquePointer, in carrier: Transaction, stripe: UnsafeMutableRawPointer) {
        carrier.pooledHandle = h
        if !gate.exitReader(stripe, keeping: carrier) {
            carrier.pooledHandle = nil
            mdb_txn_abort(h)
        }
    }

    /// A read transaction that opened databases: LMDB closed those handles at reset, so open
    /// them in a short transaction that commits (making them usable everywhere), then let other
    /// transactions open databases again. A database that gets its number back (LMDB gives the
    /// lowest free one: usually the same) keeps the handles made in the read valid; one that
    /// gets another number makes them stale (see ``retireHandle(_:)``).
    @usableFromInline
    func publishDatabasesOpened(by txn: Transaction) {
        let opened = txn.openedDatabases
        txn.openedDatabases.removeAll()
        txn.holdsDatabaseLock = false
        for entry in opened {
            let reopened = try? openDatabaseInOwnReadTransaction(entry.name.isEmpty ? nil : entry.name, flags: entry.record.flags)
            if reopened?.dbi != entry.record.dbi { retireHandle(entry.record.dbi) }
        }
        databaseLock.unlock()
    }

    /// A transaction that opened databases ended without a commit (or was reset): LMDB closed
    /// those handles, so `Database` values made from them no longer name a database. The
    /// caller holds `databaseLock` (as the transaction did).
    func retireHandles(openedBy txn: Transaction) {
        for opened in txn.openedDatabases { retireHandle(opened.record.dbi) }
        txn.openedDatabases.removeAll()
    }

    func beginWriteHoldingWriter(scoped: Bool) throws(LMDBError) -> Transaction {
        if options.readOnly {
            throw LMDBError(code: LMDBError.permissionDenied.code, operation: "begin write transaction",
                            detail: "the environment at '\(path)' is open read-only")
        }
        var attempt = 0
        while true {
            attempt += 1
            try recoverFromPanicIfNeeded()
            var txn: OpaquePointer?
            let rc = mdb_txn_begin(handle, nil, 0, &txn)
            if rc == 0, let txn { return Transaction(environment: self, handle: txn, readOnly: false, scoped: scoped) }
            if rc == MDB_MAP_RESIZED && attempt < 3 {
                try adoptMapSizeHoldingWriter()
                continue
            }
            if rc == MDB_PANIC && attempt < 3 {
                gate.markPanicked()
                continue
            }
            throw LMDBError(code: rc, operation: "begin write transaction")
        }
    }

    /// Commits or aborts; returns the after-commit handlers to run once the writer is released.
    @discardableResult
    func finishWrite(_ txn: Transaction, commit: Bool) throws(LMDBError) -> [() -> Void] {
        guard let h = txn.handle else { throw txn.endedError("commit") }
        txn.handle = nil
        txn.attachment = nil // upper layers' state often points back at the transaction
        defer {
            if txn.holdsDatabaseLock {
                txn.holdsDatabaseLock = false
                databaseLock.unlock()
            }
            if txn.holdsNewReaders {
                txn.holdsNewReaders = false
                gate.releaseNewReaders()
            }
        }
        if commit {
            // LMDB makes the handles of databases this transaction created (or opened) usable
            // only after the commit has written the new snapshot: readers that begin meanwhile
            // wait (see `TransactionGate.holdNewReaders()`), as they do after a drop.
            if !txn.openedDatabases.isEmpty && !txn.holdsNewReaders {
                gate.holdNewReaders()
                txn.holdsNewReaders = true
            }
            if _slowPath(!txn.pendingDrops.isEmpty) {
                do { try txn.deletePendingDrops(in: h) } catch {
                    mdb_txn_abort(h)
                    retireHandles(openedBy: txn)
                    txn.commitHandlers.removeAll()
                    txn.pendingDrops.removeAll()
                    throw error
                }
            }
            let rc: Int32
            if _slowPath(takeSimulatedMetaWriteFailure()) {
                mdb_txn_abort(h)
                rc = MDB_PANIC
            } else {
                rc = mdb_txn_commit(h)
            }
            if rc != 0 {
                if rc == MDB_MAP_FULL { txn.hitMapFull = true }
                retireHandles(openedBy: txn)
                txn.commitHandlers.removeAll()
                if rc == MDB_PANIC { throw panicError("commit") }
                throw LMDBError.writeFailure(code: rc, operation: "commit", database: nil, folder: path)
            }
            if !txn.openedDatabases.isEmpty { // one published copy per commit
                var cache = databaseCache
                for opened in txn.openedDatabases { cache[opened.name] = opened.record }
                databaseCache = cache
            }
            txn.openedDatabases.removeAll()
            let handlers = txn.commitHandlers
            txn.commitHandlers.removeAll()
            return handlers
        } else {
            mdb_txn_abort(h)
            retireHandles(openedBy: txn)
            txn.commitHandlers.removeAll()
            txn.pendingDrops.removeAll()
            return []
        }
    }

    /// Doubles the map (up to `maxMapSize`). The caller holds the writer and has no open write transaction.
    func growMap() throws {
        let current = try info().mapSize
        guard current < options.maxMapSize else {
            throw LMDBError.mapFull.with(operation: "grow map", detail: "the map reached maxMapSize (\(options.maxMapSize) bytes)")
        }
        let target = min(max(current * 2, current + (1 << 20)), options.maxMapSize)
        try gate.withExclusiveAccess(timeout: 10) {
            try check(mdb_env_set_mapsize(handle, target), "grow map")
        }
        options.logger.log(.info, "map grown", metadata: ["path": path, "from": "\(current)", "to": "\(target)"])
    }

    /// Adopts a map grown by another process, from a reader (takes the writer first).
    func adoptMapSize() throws(LMDBError) {
        if gate.callerHoldsWriter { throw LMDBError.mapResized.with(operation: "begin read transaction") }
        try gate.acquireWriter()
        defer { gate.releaseWriter() }
        try adoptMapSizeHoldingWriter()
    }

    func adoptMapSizeHoldingWriter() throws(LMDBError) {
        do {
            try gate.withExclusiveAccess(timeout: 10) {
                try check(mdb_env_set_mapsize(handle, 0), "adopt map size")
            }
        } catch let error as LMDBError {
            throw error
        } catch {
            throw LMDBError.mapResized.with(operation: "adopt map size")
        }
    }
}

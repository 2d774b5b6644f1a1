import CLMDB

extension Transaction {
    // MARK: Reading

    /// Calls `body` with the bytes stored under `key`, straight from the memory map (no copy),
    /// and returns its result; returns nil when the key is absent. The bytes are valid only
    /// during the call: copy what you keep.
    @inlinable
    public func withValue<K, V, R>(forKey key: K.Value, in db: Database<K, V>,
                                   _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        let txn = try liveHandle("mdb_get", for: db)
        return try K.withBytes(of: key) { keyBytes -> R? in
            try db.validateKey(keyBytes.count, operation: "mdb_get")
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            var v = MDB_val()
            let rc = mdb_get(txn, MDB_dbi(db.dbi), &k, &v)
            if rc == MDB_NOTFOUND { return nil }
            if _slowPath(rc != 0) { throw failure(rc, "mdb_get", db.name) }
            return try body(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
        }
    }

    /// Calls `body` with the bytes stored under the raw `key` in the database with handle `dbi`,
    /// straight from the memory map, and returns true; returns false when the key is absent.
    /// The bytes are valid only during the call. For layers that keep their own database
    /// handles over raw keys (Depot's storage driver); `database` names the database in errors.
    /// (The same look-up as ``withValue(forKey:in:_:)`` over a raw key and handle, without a
    /// typed `Database` value to build per call.)
    @inlinable
    package func withRawValue(forKey key: UnsafeRawBufferPointer, dbi: UInt32, database: String?,
                             _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        let txn = try liveHandle("mdb_get")
        let limit = maxKeySize
        if _slowPath(key.count == 0 || key.count > limit) {
            throw Database<RawBytesCodec, RawBytesCodec>.keySizeError(key.count, limit: limit, operation: "mdb_get", database: database)
        }
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let rc = mdb_get(txn, MDB_dbi(dbi), &k, &v)
        if rc == MDB_NOTFOUND { return false }
        if _slowPath(rc != 0) { throw failure(rc, "mdb_get", database) }
        try body(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
        return true
    }

    /// The value stored under `key`, decoded by the database's value codec, or nil.
    @inlinable
    public func get<K, V>(_ key: K.Value, in db: Database<K, V>) throws -> V.Value? {
        try withValue(forKey: key, in: db) { try V.decode($0) }
    }

    /// Whether `key` is present.
    @inlinable
    public func contains<K, V>(_ key: K.Value, in db: Database<K, V>) throws -> Bool {
        try withValue(forKey: key, in: db) { _ in true } ?? false
    }

    // MARK: Writing

    /// Stores `value` under `key`.
    ///
    /// - Throws: ``LMDBError/keyExists`` with `.noOverwrite` (or `.noDupData`) when present;
    ///   ``LMDBError/badValueSize`` for an empty or over-long key (checked before LMDB sees it);
    ///   ``LMDBError/mapFull`` when the map is full (a scoped write then grows it and re-runs).
    @inlinable
    public func put<K, V>(_ value: V.Value, forKey key: K.Value, in db: Database<K, V>, flags: WriteFlags = []) throws {
        let txn = try liveHandle("mdb_put", for: db)
        if _slowPath(isReadOnly) { throw readOnlyError("mdb_put", db.name) }
        if _slowPath(refusedDatabasePrefix != nil) { try refuse(db.name, "mdb_put") }
        try K.withBytes(of: key) { keyBytes throws in
            try db.validateKey(keyBytes.count, operation: "mdb_put")
            try V.withBytes(of: value) { valueBytes throws in
                var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
                var v = MDB_val(mv_size: valueBytes.count, mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
                if _slowPath(db.flags.rawValue & Self.fixedValueFlags != 0) { try checkFixedValue(txn, db, &k, valueBytes.count, "mdb_put") }
                let rc = mdb_put(txn, MDB_dbi(db.dbi), &k, &v, flags.rawValue)
                if _slowPath(rc != 0) { throw failure(rc, "mdb_put", db.name) }
            }
        }
    }

    /// Stores `value` under `key` only when the key is absent (`MDB_NOOVERWRITE`: one B-tree
    /// descent either way). When it is present nothing is stored, `existing` is called with the
    /// stored value (valid only during the call) and the result is false.
    /// - Throws: as ``put(_:forKey:in:flags:)``; what `existing` throws.
    @inlinable
    public func putIfAbsent<K, V>(_ value: V.Value, forKey key: K.Value, in db: Database<K, V>,
                                  existing: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        let txn = try liveHandle("mdb_put", for: db)
        if _slowPath(isReadOnly) { throw readOnlyError("mdb_put", db.name) }
        if _slowPath(refusedDatabasePrefix != nil) { try refuse(db.name, "mdb_put") }
        return try K.withBytes(of: key) { keyBytes throws -> Bool in
            try db.validateKey(keyBytes.count, operation: "mdb_put")
            return try V.withBytes(of: value) { valueBytes throws -> Bool in
                var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
                var v = MDB_val(mv_size: valueBytes.count, mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
                if _slowPath(db.flags.rawValue & Self.fixedValueFlags != 0) { try checkFixedValue(txn, db, &k, valueBytes.count, "mdb_put") }
                let rc = mdb_put(txn, MDB_dbi(db.dbi), &k, &v, UInt32(MDB_NOOVERWRITE))
                if rc == MDB_KEYEXIST {
                    try existing(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
                    return false
                }
                if _slowPath(rc != 0) { throw failure(rc, "mdb_put", db.name) }
                return true
            }
        }
    }

    /// The flags under which values have a fixed size (`dupFixed`, `integerDup`).
    @usableFromInline static let fixedValueFlags = UInt32(MDB_DUPFIXED | MDB_INTEGERDUP)

    /// Refuses a value of `count` bytes that a `dupFixed` or `integerDup` database cannot hold:
    /// an `integerDup` value that is no 4- or 8-byte integer, or a `dupFixed` value of another
    /// size than the values already under the key (LMDB would cut or pad it, reading beyond it).
    @usableFromInline
    func checkFixedValue<K, V>(_ txn: OpaquePointer, _ db: Database<K, V>, _ key: inout MDB_val, _ count: Int,
                               _ operation: StaticString) throws {
        if db.flags.contains(.integerDup) { try db.validateInteger(count, of: "value", operation: operation) }
        var first = MDB_val()
        let rc = mdb_get(txn, MDB_dbi(db.dbi), &key, &first)
        if rc == MDB_NOTFOUND { return }
        if rc != 0 { throw failure(rc, "mdb_get", db.name) }
        guard first.mv_size == count else {
            throw LMDBError(code: LMDBError.badValueSize.code, operation: "\(operation)", database: db.name,
                            detail: "the value is \(count) bytes; the values under this key of a dupFixed database are \(first.mv_size) bytes")
        }
    }

    /// Reserves `count` bytes under `key` and lets `body` fill them in place (`MDB_RESERVE`):
    /// no intermediate buffer for large values. Not for ``DatabaseFlags/dupSort`` databases.
    ///
    /// - Throws: ``LMDBError/invalidArgument`` when `count` is outside 0 to 4 GiB − 1 (LMDB's
    ///   largest value).
    @inlinable
    public func putReserving<K, V>(count: Int, forKey key: K.Value, in db: Database<K, V>, flags: WriteFlags = [],
                                   _ body: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        let txn = try liveHandle("mdb_put", for: db)
        if _slowPath(isReadOnly) { throw readOnlyError("mdb_put", db.name) }
        if _slowPath(refusedDatabasePrefix != nil) { try refuse(db.name, "mdb_put") }
        guard count >= 0 && count <= Int(UInt32.max) else {
            throw LMDBError(code: LMDBError.invalidArgument.code, operation: "mdb_put", database: db.name,
                            detail: "putReserving(count:) is out of range: allowed 0 to \(UInt32.max) bytes")
        }
        try K.withBytes(of: key) { keyBytes throws in
            try db.validateKey(keyBytes.count, operation: "mdb_put")
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            var v = MDB_val(mv_size: count, mv_data: nil)
            let rc = mdb_put(txn, MDB_dbi(db.dbi), &k, &v, flags.rawValue | UInt32(MDB_RESERVE))
            if _slowPath(rc != 0) { throw failure(rc, "mdb_put", db.name) }
            try body(UnsafeMutableRawBufferPointer(start: v.mv_data, count: count))
        }
    }

    /// Deletes `key` (every value of it in a dupSort database). Returns false when it was absent.
    @inlinable
    @discardableResult
    public func delete<K, V>(_ key: K.Value, in db: Database<K, V>) throws -> Bool {
        let txn = try liveHandle("mdb_del", for: db)
        if _slowPath(isReadOnly) { throw readOnlyError("mdb_del", db.name) }
        if _slowPath(refusedDatabasePrefix != nil) { try refuse(db.name, "mdb_del") }
        return try K.withBytes(of: key) { keyBytes throws -> Bool in
            try db.validateKey(keyBytes.count, operation: "mdb_del")
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            let rc = mdb_del(txn, MDB_dbi(db.dbi), &k, nil)
            if rc == MDB_NOTFOUND { return false }
            if _slowPath(rc != 0) { throw failure(rc, "mdb_del", db.name) }
            return true
        }
    }

    /// Deletes one key/value pair of a dupSort database. Returns false when it was absent.
    @discardableResult
    public func delete<K, V>(_ key: K.Value, value: V.Value, in db: Database<K, V>) throws -> Bool {
        let txn = try liveHandle("mdb_del", for: db)
        if isReadOnly { throw readOnlyError("mdb_del", db.name) }
        try refuse(db.name, "mdb_del")
        return try K.withBytes(of: key) { keyBytes throws -> Bool in
            try db.validateKey(keyBytes.count, operation: "mdb_del")
            return try V.withBytes(of: value) { valueBytes throws -> Bool in
                var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
                var v = MDB_val(mv_size: valueBytes.count, mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
                let rc = mdb_del(txn, MDB_dbi(db.dbi), &k, &v)
                if rc == MDB_NOTFOUND { return false }
                if rc != 0 { throw failure(rc, "mdb_del", db.name) }
                return true
            }
        }
    }

    // MARK: Databases

    /// Opens the database `name` (`nil` for the main database) in this transaction, creating it
    /// when `create` is true and this is a write transaction. A database created here becomes
    /// visible to other transactions when this one commits; if it aborts, the database is gone.
    public func openDatabase<K: LMDBCodec, V: LMDBCodec>(
        _ name: String?, key: K.Type, value: V.Type, flags: DatabaseFlags = [], create: Bool = true
    ) throws -> Database<K, V> {
        let txn = try liveHandle("open database")
        try refuse(name, "open database")
        try Environment.validateDatabaseName(name)
        let cacheKey = name ?? ""
        if _slowPath(!pendingDrops.isEmpty), let index = pendingDrops.firstIndex(where: { $0.name == cacheKey }),
           let record = try reopenDropped(at: index, flags: flags, create: create, in: txn) {
            return Database(record: record, name: name, maxKeySize: maxKeySize)
        }
        // Opened before: found in the published cache without taking the lock (nor retaining
        // the environment, whose reference count every reading thread would share).
        if !holdsDatabaseLock, let record = unownedEnvironment.publishedDatabase(cacheKey), isOpenHere(record.dbi, txn) {
            return Database(record: record, name: name, maxKeySize: maxKeySize)
        }
        let env = environment
        if !holdsDatabaseLock { env.databaseLock.lock() }
        var keepLock = false
        defer { if !holdsDatabaseLock && !keepLock { env.databaseLock.unlock() } }
        if let record = env.databaseCache[cacheKey] ?? openedDatabases.last(where: { $0.name == cacheKey })?.record {
            if isOpenHere(record.dbi, txn) {
                return Database(record: record, name: name, maxKeySize: env.maxKeySize)
            }
            // A handle opened after this transaction began is not usable in it (LMDB: EINVAL),
            // and opening the name again here would take over the environment's handle (LMDB
            // allows one open per name): what this snapshot holds decides the answer.
            throw databaseReplacedError(name, txn)
        }
        // Opened in this transaction (LMDB makes the handle public when it commits; a read
        // transaction is reset instead, so `endRead` opens it once more to cache it).
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(txn, name, flags.rawValue | (create && !isReadOnly ? UInt32(MDB_CREATE) : 0), &dbi)
        if rc != 0 {
            throw LMDBError(code: rc, operation: "open database", database: name,
                            detail: rc == MDB_NOTFOUND ? "no database of that name exists" :
                                rc == MDB_DBS_FULL ? "maxDatabases (\(env.options.maxDatabases)) reached" : nil)
        }
        var actual: UInt32 = 0
        if mdb_dbi_flags(txn, dbi, &actual) != 0 {
            // LMDB handed back the environment's handle for the name, opened after this
            // transaction began: the database was dropped and created again meanwhile. It is not
            // usable here; what this snapshot holds under the name decides the answer.
            throw databaseReplacedError(name, txn)
        }
        let record = env.record(dbi: dbi, flags: DatabaseFlags(rawValue: actual & 0x7E))
        openedDatabases.append((childDepth, cacheKey, record))
        // LMDB: a transaction that opened a database must end before any other may open one.
        if !holdsDatabaseLock { holdsDatabaseLock = true; keepLock = true }
        return Database(record: record, name: name, maxKeySize: env.maxKeySize)
    }

    /// The error for a database whose handle was opened, or replaced, after this transaction
    /// began: "not found" when this snapshot has no database of that name (the usual case: it
    /// was created, or dropped, after the snapshot), else a clear error asking for a new
    /// transaction (rare: stores open every database they know before their first transaction).
    private func databaseReplacedError(_ name: String?, _ txn: OpaquePointer) -> LMDBError {
        var bytes = Array((name ?? "").utf8)
        let inSnapshot = bytes.withUnsafeMutableBytes { raw -> Bool in
            var key = MDB_val(mv_size: raw.count, mv_data: raw.baseAddress)
            var value = MDB_val()
            return mdb_get(txn, MDB_dbi(1), &key, &value) == 0 // 1: LMDB's main database
        }
        if !inSnapshot {
            return LMDBError(code: MDB_NOTFOUND, operation: "open database", database: name, detail: "no database of that name exists")
        }
        return LMDBError(code: MDB_BAD_DBI, operation: "open database", database: name,
                         detail: "its handle was opened (or the database dropped and created again) after this transaction began; begin a new transaction")
    }

    /// Whether the database handle `dbi` is usable in the transaction `txn` (LMDB refuses a
    /// handle opened after the transaction began, or closed since).
    @inline(__always)
    func isOpenHere(_ dbi: MDB_dbi, _ txn: OpaquePointer) -> Bool {
        var flags: UInt32 = 0
        return mdb_dbi_flags(txn, dbi, &flags) == 0
    }

    /// Identifies the environment's table of database handles as it is now: it changes whenever
    /// a database is opened, created or dropped. While it is the same, every handle found in it
    /// earlier (and usable in an earlier transaction) is usable in this one. A counter of the
    /// changes: it only rises, and never repeats.
    package var databaseHandlesVersion: Int { unownedEnvironment.databaseHandlesVersion }

    /// Whether `dbi`, a handle of the database `name` (`nil`: the main database) obtained in an
    /// earlier transaction, still names that database in this one: the environment's handle for
    /// the name is the same and usable here. A cache of handles across transactions checks this.
    package func isCurrentDatabase(named name: String?, dbi: UInt32) -> Bool {
        guard let txn = handle, let record = unownedEnvironment.publishedDatabase(name ?? ""), record.dbi == dbi else { return false }
        return isOpenHere(dbi, txn)
    }

    /// Statistics of `db` as seen by this transaction.
    public func stat<K, V>(_ db: Database<K, V>) throws -> DatabaseStat {
        let txn = try liveHandle("mdb_stat", for: db)
        var s = MDB_stat()
        let rc = mdb_stat(txn, MDB_dbi(db.dbi), &s)
        if rc != 0 { throw failure(rc, "mdb_stat", db.name) }
        return DatabaseStat(s)
    }

    /// Number of entries in `db`.
    public func count<K, V>(_ db: Database<K, V>) throws -> Int { try stat(db).entries }
}

import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A position in a database, for ordered navigation. Get one inside a transaction with
/// ``Transaction/withCursor(_:_:)``; it is closed when that closure returns and cannot escape it.
///
/// Moves return the entry they land on, decoded, or nil when there is none.
/// `raw` variants hand out bytes that are valid only until the next move.
public final class Cursor<K: LMDBCodec, V: LMDBCodec> {
    @exclusivity(unchecked) @usableFromInline var handle: OpaquePointer?
    /// The database this cursor walks.
    public let database: Database<K, V>
    @usableFromInline let transaction: Transaction

    @usableFromInline
    init(handle: OpaquePointer, database: Database<K, V>, transaction: Transaction) {
        self.handle = handle
        self.database = database
        self.transaction = transaction
    }

    @inlinable @inline(__always)
    func live() throws(LMDBError) -> OpaquePointer {
        guard let handle, transaction.handle != nil else {
            throw LMDBError(code: LMDBError.badTransaction.code, operation: "cursor", database: database.name,
                            detail: "the cursor was used after its closure or transaction ended")
        }
        return handle
    }

    /// Moves with `op`, optionally from `key`; returns the raw entry or nil at the end.
    @inlinable
    func moveRaw(_ op: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil) throws -> (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)? {
        let c = try live()
        var k = MDB_val(mv_size: key?.count ?? 0, mv_data: UnsafeMutableRawPointer(mutating: key?.baseAddress))
        var v = MDB_val()
        var rc = mdb_cursor_get(c, &k, &v, op)
        if rc == 0 && (op == MDB_FIRST_DUP || op == MDB_LAST_DUP) {
            // LMDB leaves the key unset for these: read it back.
            rc = mdb_cursor_get(c, &k, &v, MDB_GET_CURRENT)
        }
        if rc == MDB_NOTFOUND { return nil }
        // A cursor not moved yet has no entry at it (LMDB: EINVAL).
        if _slowPath(rc == EINVAL) && op == MDB_GET_CURRENT { return nil }
        if _slowPath(rc != 0) { throw transaction.failure(rc, "mdb_cursor_get", database.name) }
        // The *_MULTIPLE operations return values only (the key is left as passed).
        if _slowPath(!Transaction.isKeySizeStored(k.mv_size, maxKeySize: database.maxKeySize)),
           op != MDB_GET_MULTIPLE, op != MDB_NEXT_MULTIPLE, op != MDB_PREV_MULTIPLE {
            throw Transaction.damagedEntry(keySize: k.mv_size, maxKeySize: database.maxKeySize, database: database.name)
        }
        return (UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size), UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    @inlinable
    func move(_ op: MDB_cursor_op) throws -> (key: K.Value, value: V.Value)? {
        guard let raw = try moveRaw(op) else { return nil }
        return (try K.decode(raw.key), try V.decode(raw.value))
    }

    @inlinable
    func move(_ op: MDB_cursor_op, to key: K.Value) throws -> (key: K.Value, value: V.Value)? {
        try K.withBytes(of: key) { bytes throws -> (key: K.Value, value: V.Value)? in
            try database.validateKey(bytes.count, operation: "mdb_cursor_get")
            guard let raw = try moveRaw(op, key: bytes) else { return nil }
            return (try K.decode(raw.key), try V.decode(raw.value))
        }
    }

    /// The first entry.
    @inlinable public func first() throws -> (key: K.Value, value: V.Value)? { try move(MDB_FIRST) }
    /// The last entry.
    @inlinable public func last() throws -> (key: K.Value, value: V.Value)? { try move(MDB_LAST) }
    /// The next entry (the next duplicate, then the next key, in a dupSort database).
    @inlinable public func next() throws -> (key: K.Value, value: V.Value)? { try move(MDB_NEXT) }
    /// The previous entry.
    @inlinable public func previous() throws -> (key: K.Value, value: V.Value)? { try move(MDB_PREV) }
    /// The entry at the cursor; nil before the cursor's first move.
    @inlinable public func current() throws -> (key: K.Value, value: V.Value)? { try move(MDB_GET_CURRENT) }
    /// Moves to exactly `key`; nil when it is absent.
    @inlinable public func seek(exactly key: K.Value) throws -> (key: K.Value, value: V.Value)? { try move(MDB_SET_KEY, to: key) }
    /// Moves to the first key that is equal to or sorts after `key`.
    @inlinable public func seek(atLeast key: K.Value) throws -> (key: K.Value, value: V.Value)? { try move(MDB_SET_RANGE, to: key) }

    // MARK: Duplicates (dupSort databases)

    /// The next value of the current key.
    /// nil in a database that is not dupSort (a key has one value there; LMDB would move to the
    /// next key).
    @inlinable public func nextDuplicate() throws -> (key: K.Value, value: V.Value)? {
        guard database.flags.contains(.dupSort) else { return nil }
        return try move(MDB_NEXT_DUP)
    }
    /// The previous value of the current key; nil in a database that is not dupSort.
    @inlinable public func previousDuplicate() throws -> (key: K.Value, value: V.Value)? {
        guard database.flags.contains(.dupSort) else { return nil }
        return try move(MDB_PREV_DUP)
    }
    /// The first value of the current key.
    @inlinable public func firstDuplicate() throws -> (key: K.Value, value: V.Value)? { try move(MDB_FIRST_DUP) }
    /// The last value of the current key.
    @inlinable public func lastDuplicate() throws -> (key: K.Value, value: V.Value)? { try move(MDB_LAST_DUP) }
    /// The first value of the next key.
    @inlinable public func nextKey() throws -> (key: K.Value, value: V.Value)? { try move(MDB_NEXT_NODUP) }
    /// The last value of the previous key.
    @inlinable public func previousKey() throws -> (key: K.Value, value: V.Value)? { try move(MDB_PREV_NODUP) }

    /// Moves to the pair `key`/`value` of a dupSort database; returns whether it exists.
    public func seek(key: K.Value, value: V.Value) throws -> Bool {
        let c = try live()
        return try K.withBytes(of: key) { kb throws -> Bool in
            try database.validateKey(kb.count, operation: "mdb_cursor_get")
            return try V.withBytes(of: value) { vb throws -> Bool in
                var k = MDB_val(mv_size: kb.count, mv_data: UnsafeMutableRawPointer(mutating: kb.baseAddress))
                var v = MDB_val(mv_size: vb.count, mv_data: UnsafeMutableRawPointer(mutating: vb.baseAddress))
                let rc = mdb_cursor_get(c, &k, &v, MDB_GET_BOTH)
                if rc == MDB_NOTFOUND { return false }
                if rc != 0 { throw transaction.failure(rc, "mdb_cursor_get", database.name) }
                return true
            }
        }
    }

    /// Number of values of the current key (1 outside dupSort databases; 0 when the cursor is
    /// on no entry).
    public func duplicateCount() throws -> Int {
        let c = try live()
        if !database.flags.contains(.dupSort) { return try moveRaw(MDB_GET_CURRENT) == nil ? 0 : 1 }
        var count: Int = 0
        let rc = mdb_cursor_count(c, &count)
        if rc == EINVAL { return 0 } // not on an entry
        if rc != 0 { throw transaction.failure(rc, "mdb_cursor_count", database.name) }
        return count
    }

    /// Deletes the entry at the cursor (with `allDuplicates`, every value of its key).
    public func delete(allDuplicates: Bool = false) throws {
        let c = try live()
        if transaction.isReadOnly { throw transaction.readOnlyError("mdb_cursor_del", database.name) }
        try transaction.refuse(database.name, "mdb_cursor_del")
        let rc = mdb_cursor_del(c, allDuplicates ? UInt32(MDB_NODUPDATA) : 0)
        if rc == EINVAL { throw notOnAnEntry("mdb_cursor_del") }
        if rc != 0 { throw transaction.failure(rc, "mdb_cursor_del", database.name) }
    }

    /// The error of an operation on the entry at the cursor when the cursor is on none (it was
    /// not moved yet, or its last move found nothing).
    func notOnAnEntry(_ operation: StaticString) -> LMDBError {
        LMDBError(code: LMDBError.invalidArgument.code, operation: "\(operation)", database: database.name,
                  detail: "the cursor is not on an entry: move it to one first (first(), seek(…))")
    }

    /// Stores `value` under `key` through the cursor, which then points at it.
    public func put(_ value: V.Value, forKey key: K.Value, flags: WriteFlags = []) throws {
        let c = try live()
        if transaction.isReadOnly { throw transaction.readOnlyError("mdb_cursor_put", database.name) }
        try transaction.refuse(database.name, "mdb_cursor_put")
        try K.withBytes(of: key) { kb throws in
            try database.validateKey(kb.count, operation: "mdb_cursor_put")
            try V.withBytes(of: value) { vb throws in
                var k = MDB_val(mv_size: kb.count, mv_data: UnsafeMutableRawPointer(mutating: kb.baseAddress))
                var v = MDB_val(mv_size: vb.count, mv_data: UnsafeMutableRawPointer(mutating: vb.baseAddress))
                if database.flags.rawValue & Transaction.fixedValueFlags != 0 {
                    try transaction.checkFixedValue(try transaction.liveHandle("mdb_cursor_put", for: database), database, &k, vb.count, "mdb_cursor_put")
                }
                let rc = mdb_cursor_put(c, &k, &v, flags.rawValue)
                if rc != 0 { throw transaction.failure(rc, "mdb_cursor_put", database.name) }
            }
        }
    }

    /// Calls `body` with the raw bytes of the entry at the cursor (valid only during the call).
    public func withCurrentRaw<R>(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> R) throws -> R? {
        guard let raw = try moveRaw(MDB_GET_CURRENT) else { return nil }
        return try body(raw.key, raw.value)
    }

    @usableFromInline
    func close() {
        if let handle { mdb_cursor_close(handle) }
        handle = nil
    }
}

extension Transaction {
    /// Runs `body` with a cursor on `db`; the cursor is closed when `body` returns.
    @inlinable
    public func withCursor<K, V, R>(_ db: Database<K, V>, _ body: (Cursor<K, V>) throws -> R) throws -> R {
        let cursor = try makeCursor(db)
        defer { cursor.close() }
        return try body(cursor)
    }

    @usableFromInline
    func makeCursor<K, V>(_ db: Database<K, V>) throws -> Cursor<K, V> {
        let txn = try liveHandle("mdb_cursor_open", for: db)
        var c: OpaquePointer?
        let rc = mdb_cursor_open(txn, MDB_dbi(db.dbi), &c)
        guard rc == 0, let c else { throw failure(rc, "mdb_cursor_open", db.name) }
        return Cursor(handle: c, database: db, transaction: self)
    }
}

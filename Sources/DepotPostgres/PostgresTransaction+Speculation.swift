#if Postgres
import DepotCore
import PostgresNIO

/// The document layer's insert of a new document in one round trip: sent with the
/// transaction's next statement (usually its `COMMIT`) without waiting for an answer.
extension PostgresTransaction {
    /// ``StorageTransaction/putExpectingAbsent(_:forKey:in:existing:)``: under key locks, in a
    /// single-value keyspace, outside savepoints and when the driver's ``Speculation`` admits
    /// it, the insert is held (not even sent: it goes out with the next statement) and taken as
    /// done. Its statement takes the key locks (as ``putIfAbsent(_:forKey:in:existing:)`` does),
    /// then inserts only when the keyspace exists and the key is absent, and otherwise **fails**
    /// (a division by zero, SQLSTATE 22012): the server aborts the transaction, so nothing after
    /// it — `COMMIT` included — can succeed, whatever the closure did with the answer. That
    /// failure is read before the transaction's next wait or its `COMMIT`'s answer; the driver
    /// then runs the write again without taking inserts on trust, and that attempt finds the
    /// stored value (or the dropped keyspace) the usual way. Elsewhere, or when not admitted:
    /// ``putIfAbsent(_:forKey:in:existing:)``.
    func putExpectingAbsent(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace,
                            existing: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        guard let speculation, let locks, nestingDepth == 0, !KeyspaceHandle(keyspace.handle).multiValue, speculation.admits() else {
            return try putIfAbsent(value, forKey: key, in: keyspace, existing: existing)
        }
        return try storageCall {
            try check(write: true, guessing: true, deferring: true)
            guard let handle = try handle(of: keyspace) else { throw droppedMeanwhile() }
            // (No value taken on trust to forget: a key that has one is present, and the insert fails.)
            let keyID = locks.id(keyspace: handle.id, key: key)
            if readShared.contains(keyID) { locks.hot.insert(keyID) }
            // When nothing went out yet, the locks go in the statement that reads the epoch
            // after `BEGIN` (with the lock of a value taken on trust): held too, ahead.
            let opening = start == nil
            let (lock, lockShape) = insertLocks(handle, locks, keyID: keyID, expectationLock: opening && expectation != nil)
            if opening { opened(holding: true, locking: (lock, lockShape)) }
            // Its snapshot is taken after the locks were granted (the statement before): the
            // keyspace check sees a drop that committed meanwhile.
            let sql = schema.texts.text(StatementTexts.shape(.speculativeInsert, 0)) { [schema] in
                "WITH k AS (SELECT count(*) AS n FROM \(schema.keyspaces) WHERE id = $1::int), "
                    + "i AS (INSERT INTO \(schema.entries) (keyspace, key, value) SELECT $1::int, $2::bytea, $3::bytea FROM k WHERE k.n > 0 "
                    + "ON CONFLICT (keyspace, key) DO NOTHING RETURNING 1) "
                    + "SELECT 1 / k.n, 1 / (SELECT count(*) FROM i) FROM k"
            }
            let insert = Statement(prepared: sql, .of(handle.id, Bytea(key), Bytea(value)))
            let pending = session.hold(opening ? [insert] : [lock, insert]) { _ in () }
            unchecked.append { [self] in
                // A handle guessed at an older epoch names the same keyspace or a dropped one
                // (IDs are never reused): in the second case the statement failed.
                do {
                    try run { try session.wait(pending) }
                } catch PostgresDriverError.server(sqlState: "22012", message: _) {
                    throw missedSpeculation()
                }
            }
            speculated = true
            return true
        }
    }

    /// The error for an insert taken on trust whose key was present (or whose keyspace was
    /// gone): the transaction is aborted, and the driver runs the write again without trust.
    func missedSpeculation() -> PostgresDriverError {
        speculationMissed = true
        return .server(sqlState: "22012", message: "a document taken as new was already stored; the write runs again")
    }
}
#endif

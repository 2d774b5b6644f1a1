#if Postgres
import DepotCore

/// Statements that do two things: the document layer's insert path
/// (``StorageTransaction/putIfAbsent(_:forKey:in:existing:)``) in one round trip and two
/// statements under key locks, and a transaction's first point read, which reads the keyspace
/// epoch too.
extension PostgresTransaction {
    /// The transaction's first statement as a point read: sent after `statements` (the opening
    /// `BEGIN`, key locks), `sql` (a select of one `value` column, parameters keyspace and key)
    /// joined to the epoch row (and `txid_current()` when ``prefetchesStamp``; in a read, the
    /// value of the key its connection's last read asked for first, see ``ReadHint``). Waits
    /// for it; the epoch, the value found, the transaction ID and the hinted key's value.
    func firstRead(_ sql: String, handle: KeyspaceHandle, key: UnsafeRawBufferPointer,
                   after statements: [Statement]) -> Result<(value: [UInt8]?, opening: Opening), any Error> {
        let stamp = prefetchesStamp
        let hint = isReadOnly && !guessedWrong ? session.readHint : nil
        var parameters = Parameters.of(handle.id, Bytea(key))
        var columns = "e.value, x.value\(stamp ? ", txid_current()" : "")"
        if let hint {
            hint.keyspace.bind(into: &parameters)
            Bytea(hint.key).bind(into: &parameters)
            columns += ", (SELECT value FROM \(schema.entries) WHERE keyspace = $3::int AND key = $4::bytea)"
        }
        sentHint = hint
        let query = Statement(prepared: "SELECT \(columns) FROM \(schema.epoch) e LEFT JOIN (\(sql)) x ON true", parameters)
        let pending = session.submit(statements + [query]) { rows -> (value: [UInt8]?, opening: Opening) in
            guard let row = rows.first else { throw PostgresDriverError.server(sqlState: "XX000", message: "the keyspace epoch row is missing") }
            let opening = Opening(epoch: try row.binary(Int64.self, at: 0), stamp: stamp ? try row.binary(Int64.self, at: 2) : nil,
                                  hinted: hint == nil ? nil : try row.bytes(at: stamp ? 3 : 2))
            return (try row.bytes(at: 1), opening)
        }
        return Result { try run { try session.wait(pending) } }
    }

    /// Under key locks in a single-value keyspace: the key's lock, exclusive (and the keyspace's,
    /// shared, the first time), in one statement; then, in the next one (whose snapshot is taken
    /// after the locks were granted), a check that the keyspace still exists, the insert when
    /// the key is absent, and the stored value when it is present. Elsewhere: a read, then a
    /// put.
    func putIfAbsent(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace,
                     existing: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        return try storageCall {
            guard let locks, !KeyspaceHandle(keyspace.handle).multiValue else {
                if try readValue(forKey: key, in: keyspace, existing) { return false }
                try put(value, forKey: key, in: keyspace)
                return true
            }
            // Not waiting for `BEGIN` and the epoch read when they went out already; when nothing
            // went out yet (a value taken on trust defers them), they go out with the locks and
            // the insert, which reads the epoch: one statement less. `BEGIN` fails only with its
            // connection, and then nothing after it runs.
            try check(write: true, guessing: true)
            let combining = start == nil
            guard let handle = try handle(of: keyspace) else { throw droppedMeanwhile() }
            // A value this write read under the key's lock is still the stored one: no statement.
            if !lockedValues.isEmpty, let known = lockedValues[LockedValue(handle.id, key)] {
                try known.withUnsafeBytes { try existing($0) }
                return false
            }
            let keyID = locks.id(keyspace: handle.id, key: key)
            if readShared.contains(keyID) { locks.hot.insert(keyID) }
            forgetLockedValue(handle, key)
            // The lock of the key whose value was taken on trust (see stableValue(forKey:in:)).
            let lock = insertLocks(handle, locks, keyID: keyID, expectationLock: combining && expectation != nil).statement
            var insertBinds = Parameters.of(handle.id, Bytea(key), Bytea(value))
            // With the check of a value taken on trust, when it is still to be sent.
            let check = expectationCheck(first: 4, binds: &insertBinds)
            let stamp = combining && prefetchesStamp
            let insertShape = StatementTexts.shape(.putIfAbsentInsert, (check != nil ? 4 : 0) | (combining ? 2 : 0) | (stamp ? 1 : 0))
            let sql = schema.texts.text(insertShape) { [schema] in
                let epochColumns = combining ? ", (SELECT value FROM \(schema.epoch))\(stamp ? ", txid_current()" : "")" : ""
                return "WITH k AS (SELECT count(*) AS n FROM \(schema.keyspaces) WHERE id = $1::int), \(check.map { "\($0.text), " } ?? "")"
                    + "i AS (INSERT INTO \(schema.entries) (keyspace, key, value) SELECT $1::int, $2::bytea, $3::bytea FROM k WHERE k.n > 0 "
                    + "ON CONFLICT (keyspace, key) DO NOTHING RETURNING 1) "
                    + "SELECT 1 / \(check == nil ? "k.n" : "(k.n * c.ok)"), (SELECT count(*) FROM i), "
                    + "(SELECT value FROM \(schema.entries) WHERE keyspace = $1::int AND key = $2::bytea)\(epochColumns) FROM k\(check == nil ? "" : ", c")"
            }
            let statements = (combining ? opening ?? [] : []) + [lock, Statement(prepared: sql, insertBinds)]
            if combining { opening = nil }
            let pending = session.submit(statements) { rows -> (inserted: Bool, stored: [UInt8]?, opening: Opening?) in
                guard let row = rows.first else { return (false, nil, nil) }
                let opening = combining ? Opening(epoch: try row.binary(Int64.self, at: 3), stamp: stamp ? try row.binary(Int64.self, at: 4) : nil) : nil
                return (try row.binary(Int64.self, at: 1) > 0, try row.bytes(at: 2), opening)
            }
            let answer = Result { try checkingDrop { try run { try session.wait(pending) } } }
            if combining {
                // The transaction's opening answered with the insert (its failure is the insert's).
                start = Pending(answer.flatMap { answer in
                    answer.opening.map { .success($0) } ?? .failure(PostgresDriverError.server(sqlState: "XX000", message: "the keyspace epoch row is missing"))
                })
            }
            // `BEGIN`'s and the epoch read's failure first. A handle guessed at an older epoch (a
            // keyspace was dropped meanwhile, maybe another) is looked up again, which also brings
            // the shared cache to the new epoch: the same ID is the same keyspace (IDs are never
            // reused), so the insert stands; otherwise the write runs again.
            if try !guessHeld() {
                guard let current = try self.handle(of: keyspace), current.id == handle.id else { throw droppedMeanwhile() }
            }
            let (inserted, stored, _) = try answer.get()
            if inserted { return true }
            // Not inserted and nothing stored can only be a writer that ignored the key's lock:
            // retried rather than guessed.
            guard let stored else {
                retryableState = "40001"
                throw PostgresDriverError.server(sqlState: "40001", message: "a key changed under its lock")
            }
            try stored.withUnsafeBytes { try existing($0) }
            return false
        }
    }

    /// The statement that takes the locks of an insert under key locks in a single-value
    /// keyspace: the key's lock, exclusive, after (the first time) the keyspace's, shared, and
    /// the keyspaces the connection's last write locked (see ``WriteHint``); with
    /// `expectationLock`, first the lock of the key whose value was taken on trust (see
    /// ``stableValue(forKey:in:)``).
    func insertLocks(_ handle: KeyspaceHandle, _ locks: KeyLocks, keyID: Int64, expectationLock: Bool) -> (statement: Statement, shape: UInt32) {
        var binds = Parameters.forLocks()
        if expectationLock, let expectation { expectation.lock.bind(into: &binds) }
        let hinted = hintedKeyspaceLocks(binds: &binds)
        heldKeyspaces.use(handle.id)
        let keyspaceLock = heldKeyspaces.lock(handle.id) == nil
        if keyspaceLock {
            // The keyspace's lock, shared, first (as every writer of the keyspace takes it).
            heldKeyspaces.setLock(handle.id, exclusive: false)
            let (space, id) = locks.keyspaceLockKey(handle.id)
            space.bind(into: &binds)
            id.bind(into: &binds)
        }
        keyID.bind(into: &binds)
        let bits = UInt32(hinted) << 2 | (expectationLock ? 2 : 0) | (keyspaceLock ? 1 : 0)
        let shape = StatementTexts.shape(.putIfAbsentLocks, bits)
        let sql = schema.texts.text(shape) { "SELECT " + Self.insertLockCalls(bits, first: 1).joined(separator: ", ") }
        return (Statement(prepared: sql, binds), shape)
    }

    /// The lock calls of ``insertLocks(_:_:keyID:expectationLock:)`` for its shape's `bits`
    /// (below the kind), their parameters numbered from `first`.
    static func insertLockCalls(_ bits: UInt32, first: Int) -> [String] {
        var calls: [String] = []
        var n = first - 1
        if bits & 2 != 0 {
            n += 1
            calls.append("pg_advisory_xact_lock_shared($\(n)::bigint)")
        }
        for _ in 0..<Int(bits >> 2) + Int(bits & 1) {
            n += 2
            calls.append("pg_advisory_xact_lock_shared($\(n - 1)::int, $\(n)::int)")
        }
        calls.append("pg_advisory_xact_lock($\(n + 1)::bigint)")
        return calls
    }
}
#endif

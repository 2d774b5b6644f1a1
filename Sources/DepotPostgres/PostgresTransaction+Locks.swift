#if Postgres
import DepotCore

/// The key locks of ``PostgresTransaction`` (see ``KeyLocks``) and the checks of writes sent
/// without waiting.
extension PostgresTransaction {
    /// The key lock statements for an operation on `key` (and `value`) of `handle`'s keyspace
    /// (none without key locks): a read locks the key shared (exclusively in a multi-value
    /// keyspace, where writers of its pairs hold it shared), a write exclusively (a pair of a
    /// multi-value keyspace: the key shared and the pair exclusively).
    func keyLocks(_ handle: KeyspaceHandle, _ key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer? = nil,
                          write: Bool) -> [Statement] {
        keyLockIDs(handle, key, value: value, write: write).map { KeyLocks.key($0.id, exclusive: $0.exclusive) }
    }

    /// The key locks of ``keyLocks(_:_:value:write:)``, as lock IDs in the order they are taken.
    func keyLockIDs(_ handle: KeyspaceHandle, _ key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer? = nil,
                    write: Bool) -> [(id: Int64, exclusive: Bool)] {
        guard let locks else { return [] }
        let keyID = locks.id(keyspace: handle.id, key: key)
        guard handle.multiValue else {
            if write {
                if readShared.contains(keyID) { locks.hot.insert(keyID) }
                return [(keyID, true)]
            }
            // A key this driver's writes read and then write: exclusive at once (no upgrade).
            return [(keyID, locks.hot.contains(keyID))]
        }
        guard write, let value else { return [(keyID, true)] }
        return [(keyID, false), (locks.id(keyspace: handle.id, key: key, value: value), true)]
    }

    /// Takes the lock of `handle`'s keyspace (shared for a write, exclusive for a scan) when
    /// not yet held, without waiting; returns the check to run on its answer (nil when nothing
    /// was sent). The first time, a check that the keyspace still exists goes out with the lock
    /// (a transaction that dropped it may have committed before the lock was granted: then this
    /// transaction's handle is stale and it is retried with a fresh one).
    /// With `checkExists` false the caller checks that the keyspace exists in a statement of
    /// its own sent after the lock (a put does, in its own statement).
    func lockKeyspace(_ handle: KeyspaceHandle, exclusive: Bool, checkExists: Bool = true) -> (() throws -> Void)? {
        guard let locks else { return nil }
        heldKeyspaces.use(handle.id)
        let held = heldKeyspaces.lock(handle.id)
        let needsLock = held == nil || (exclusive && held == false)
        // A keyspace locked ahead of use (see WriteHint) was not checked yet.
        let needsCheck = checkExists && (held == nil || heldKeyspaces.isUnverified(handle.id))
        guard needsLock || needsCheck else { return nil }
        if needsLock { heldKeyspaces.setLock(handle.id, exclusive: exclusive || held == true) }
        if needsCheck { heldKeyspaces.setUnverified(handle.id, false) }
        let lock = needsLock ? [locks.keyspace(handle.id, exclusive: exclusive)] : []
        let check: Pending<[Int64]>
        if needsCheck {
            let exists = Statement(prepared: "SELECT count(*) FROM \(schema.keyspaces) WHERE id = $1::int", .of(handle.id))
            check = session.submit(lock + [exists], decode: PostgresSession.integers)
        } else {
            // An upgrade: the lock's own row (void) is not decoded.
            check = session.submit(lock) { _ in [1] }
        }
        return { [self] in
            let found = try run { try session.wait(check) }
            if needsCheck && found.first == 0 { throw droppedMeanwhile() }
        }
    }

    /// The keyspaces this write used under a shared lock, for the connection's next write
    /// (see ``WriteHint``), in ID order (the order its first lock statement takes them in).
    func lockedKeyspaces() -> WriteHint? {
        guard locks != nil else { return nil }
        let shared = heldKeyspaces.usedShared()
        return shared.isEmpty ? nil : WriteHint(keyspaces: Array(shared.prefix(WriteHint.limit)))
    }

    /// The shared locks of the keyspaces the connection's last write locked (see
    /// ``WriteHint``) and this transaction does not hold yet, for the transaction's first lock
    /// statement: their parameters (two each) are appended to `binds`, and their number is
    /// returned (the caller writes one `pg_advisory_xact_lock_shared(int, int)` call for each); sent once.
    func hintedKeyspaceLocks(binds: inout Parameters) -> Int {
        guard let locks, !hintedLocksSent else { return 0 }
        hintedLocksSent = true
        var count = 0
        for id in session.writeHint?.keyspaces ?? [] where heldKeyspaces.lock(id) == nil {
            heldKeyspaces.setLock(id, exclusive: false)
            heldKeyspaces.setUnverified(id, true)
            let (space, key) = locks.keyspaceLockKey(id)
            space.bind(into: &binds)
            key.bind(into: &binds)
            count += 1
        }
        return count
    }

    /// A put under key locks as one statement: the key lock(s) (exclusive; in a multi-value
    /// keyspace the key shared and the pair exclusive), a check that the keyspace still exists
    /// (its snapshot is taken after the keyspace lock, sent before), and the insert, which only
    /// runs when it does. When the keyspace was dropped meanwhile the statement fails (division
    /// by its count of keyspace rows, 0: SQLSTATE 22012, see ``checkingDrop(_:)``), which aborts
    /// the transaction: `COMMIT`, sent before this answer is read, then rolls back. The key
    /// lock may be taken inside the statement because an `INSERT … ON CONFLICT` does not
    /// depend on the statement's snapshot (it acts on the latest row version).
    func lockedPut(_ handle: KeyspaceHandle, _ locks: KeyLocks, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Statement {
        let keyID = locks.id(keyspace: handle.id, key: key)
        let lock: String
        var binds = Parameters.of(handle.id, Bytea(key), Bytea(value), keyID)
        if handle.multiValue {
            lock = "SELECT pg_advisory_xact_lock_shared($4::bigint), pg_advisory_xact_lock($5::bigint)"
            locks.id(keyspace: handle.id, key: key, value: value).bind(into: &binds)
        } else {
            if readShared.contains(keyID) { locks.hot.insert(keyID) }
            lock = "SELECT pg_advisory_xact_lock($4::bigint)"
        }
        // With the check of a value taken on trust, when it is still to be sent.
        let check = expectationCheck(first: binds.count + 1, binds: &binds)
        let shape = StatementTexts.shape(.lockedPut, (handle.multiValue ? 2 : 0) | (check != nil ? 1 : 0))
        let sql = schema.texts.text(shape) { [schema] in
            let insert = handle.multiValue
                ? "INSERT INTO \(schema.multi) (keyspace, key, value) SELECT $1::int, $2::bytea, $3::bytea FROM k WHERE k.n > 0 ON CONFLICT DO NOTHING"
                : "INSERT INTO \(schema.entries) (keyspace, key, value) SELECT $1::int, $2::bytea, $3::bytea FROM k WHERE k.n > 0 ON CONFLICT (keyspace, key) DO UPDATE SET value = EXCLUDED.value"
            return "WITH l AS (\(lock)), k AS (SELECT count(*) AS n FROM \(schema.keyspaces), l WHERE id = $1::int), i AS (\(insert))"
                + (check.map { ", \($0.text) SELECT 1 / (n * ok) FROM k, c" } ?? " SELECT 1 / n FROM k")
        }
        return Statement(prepared: sql, binds)
    }

    /// The locks a transaction's first read takes before it, in one statement (none when there
    /// are none): the lock of a value taken on trust (`trusted`, shared; see
    /// ``stableValue(forKey:in:)``), in a write the keyspaces its connection's last write
    /// locked (shared, see ``WriteHint``: its puts then need no lock statement of their own),
    /// and the read's key locks (`keys`).
    func firstLocks(trusted: Int64?, keys: [(id: Int64, exclusive: Bool)]) -> [Statement] {
        var binds = Parameters.forLocks()
        trusted?.bind(into: &binds)
        let hinted = hintedKeyspaceLocks(binds: &binds)
        for key in keys { key.id.bind(into: &binds) }
        guard !binds.isEmpty else { return [] }
        // The text's shape: the trusted lock, how many keyspaces, and each key lock's kind (a
        // read takes one or two).
        var bits = UInt32(trusted != nil ? 1 : 0) | UInt32(hinted) << 1 | UInt32(keys.count) << 6
        for (n, key) in keys.enumerated() where key.exclusive { bits |= 1 << UInt32(8 + n) }
        let make = {
            var calls: [String] = []
            if trusted != nil { calls.append("pg_advisory_xact_lock_shared($1::bigint)") }
            let before = calls.count
            for pair in 0..<hinted {
                calls.append("pg_advisory_xact_lock_shared($\(before + 2 * pair + 1)::int, $\(before + 2 * pair + 2)::int)")
            }
            var n = before + 2 * hinted
            for key in keys {
                n += 1
                calls.append("\(key.exclusive ? "pg_advisory_xact_lock" : "pg_advisory_xact_lock_shared")($\(n)::bigint)")
            }
            return "SELECT " + calls.joined(separator: ", ")
        }
        // (A read takes one key lock; a text for more is made, not kept.)
        let sql = keys.count <= 3 ? schema.texts.text(StatementTexts.shape(.firstLocks, bits), make) : make()
        return [Statement(prepared: sql, binds)]
    }

    /// Forgets the value of `key` read under its lock (see ``PostgresTransaction/lockedValues``):
    /// this write is changing it.
    func forgetLockedValue(_ handle: KeyspaceHandle, _ key: UnsafeRawBufferPointer) {
        if !lockedValues.isEmpty, !handle.multiValue { lockedValues[LockedValue(handle.id, key)] = nil }
    }

    /// A delete under key locks in two statements sent together (one wait): the locks in the
    /// first — the keyspace's, shared, when this transaction does not hold it yet, then the
    /// key's (as ``keyLocks(_:_:value:write:)`` takes them for a write) —, and the delete in the
    /// second, whose snapshot is taken after they were granted (a row a writer committed while
    /// this one waited for the key's lock is seen and deleted), with a check that the keyspace
    /// still exists when this transaction has not checked it yet (locked for the first time, or
    /// ahead of use, see ``WriteHint``). A keyspace dropped meanwhile is retried (see
    /// ``droppedMeanwhile()``). Whether a row was deleted.
    ///
    /// `known`: the answer when it is known without asking — nil for the server's answer (a
    /// wait); true when this write read the key's value under its lock and did not change it
    /// since (``PostgresTransaction/lockedValues``), false when the caller needs no answer
    /// (``deleteIfPresent(forKey:in:)``). With an answer known the statements are held, not
    /// waited for: they go out with the next statement, and the delete checks itself on the
    /// server (a keyspace dropped meanwhile, or a row that was not there after all, fails it, so
    /// the transaction's `COMMIT` answers `ROLLBACK` and the write runs again: a committed write
    /// never acted on a wrong answer).
    func lockedDelete(_ handle: KeyspaceHandle, _ locks: KeyLocks, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?,
                      known: Bool? = nil) throws -> Bool {
        heldKeyspaces.use(handle.id)
        let held = heldKeyspaces.lock(handle.id)
        let keyspaceLock = held == nil
        let checkExists = held == nil || heldKeyspaces.isUnverified(handle.id)
        if keyspaceLock { heldKeyspaces.setLock(handle.id, exclusive: false) }
        heldKeyspaces.setUnverified(handle.id, false)
        var lockBinds = Parameters.forLocks()
        if keyspaceLock {
            let (space, id) = locks.keyspaceLockKey(handle.id)
            space.bind(into: &lockBinds)
            id.bind(into: &lockBinds)
        }
        // The key locks a write takes: a value's key exclusive; an index entry's key shared and
        // its pair exclusive; all the values of a multi-value key: the key exclusive.
        let keyLocks = keyLockIDs(handle, key, value: value, write: true)
        for lock in keyLocks { lock.id.bind(into: &lockBinds) }
        let pairLock = keyLocks.count == 2
        let lockSQL = schema.texts.text(StatementTexts.shape(.deleteLocks, (keyspaceLock ? 1 : 0) | (pairLock ? 2 : 0))) {
            var calls = keyspaceLock ? ["pg_advisory_xact_lock_shared($1::int, $2::int)"] : []
            let first = keyspaceLock ? 3 : 1
            calls.append(pairLock ? "pg_advisory_xact_lock_shared($\(first)::bigint)" : "pg_advisory_xact_lock($\(first)::bigint)")
            if pairLock { calls.append("pg_advisory_xact_lock($\(first + 1)::bigint)") }
            return "SELECT " + calls.joined(separator: ", ")
        }
        var binds = Parameters.of(handle.id, Bytea(key))
        if let value { Bytea(value).bind(into: &binds) }
        // Held (an answer known or not needed), the statement checks itself on the server: it
        // divides by the keyspace's row count and, when the row must be there, by the rows it
        // deleted, so that a surprise fails the transaction there and its `COMMIT` answers
        // `ROLLBACK` (the check's answer is only read after `COMMIT` went out).
        let heldBits = known.map { $0 ? 8 : 16 } ?? 0
        let deleteShape = (handle.multiValue ? 1 : 0) | (value != nil ? 2 : 0) | (checkExists ? 4 : 0) | heldBits
        let sql = schema.texts.text(StatementTexts.shape(.lockedDelete, UInt32(deleteShape))) { [schema] in
            let delete = "DELETE FROM \(schema.table(multiValue: handle.multiValue)) WHERE keyspace = $1::int AND key = $2::bytea"
                + (value != nil ? " AND value = $3::bytea" : "") + " RETURNING 1"
            let keyspace = "k AS (SELECT count(*) AS n FROM \(schema.keyspaces) WHERE id = $1::int)"
            switch (known, checkExists) {
            case (nil, true): return "WITH \(keyspace), d AS (\(delete)) SELECT k.n, (SELECT count(*) FROM d) FROM k"
            case (nil, false): return "WITH d AS (\(delete)) SELECT 1::bigint, count(*) FROM d"
            case (true?, true): return "WITH \(keyspace), d AS (\(delete)) SELECT 1 / (k.n * (SELECT count(*) FROM d)) FROM k"
            case (true?, false): return "WITH d AS (\(delete)) SELECT 1 / count(*) FROM d"
            case (false?, true): return "WITH \(keyspace), d AS (\(delete)) SELECT 1 / k.n FROM k"
            case (false?, false): return "WITH d AS (\(delete)) SELECT 1::bigint"
            }
        }
        let statements = [Statement(prepared: lockSQL, lockBinds), Statement(prepared: sql, binds)]
        guard let known else {
            let pending = session.submit(statements) { rows -> (exists: Bool, deleted: Bool) in
                guard let row = rows.first else { throw UnexpectedRow() }
                return (try row.binary(Int64.self, at: 0) > 0, try row.binary(Int64.self, at: 1) > 0)
            }
            let (exists, deleted) = try run { try session.wait(pending) }
            if !exists { throw droppedMeanwhile() }
            return deleted
        }
        let pending = session.hold(statements) { _ in () }
        unchecked.append { [self] in
            do {
                _ = try run { try session.wait(pending) }
            } catch PostgresDriverError.server(sqlState: "22012", message: _) {
                // Its keyspace dropped meanwhile or, with an answer known, its row gone (never
                // expected: the key's lock was held since its value was read). Retried.
                throw droppedMeanwhile()
            }
        }
        return known
    }

    /// Runs `body` holding the lock of `handle`'s keyspace (see ``lockKeyspace(_:exclusive:)``);
    /// the lock's answer arrives with `body`'s, so it costs no extra round trip.
    func holdingKeyspace<T>(_ handle: KeyspaceHandle, exclusive: Bool, _ body: () throws -> T) throws -> T {
        let verify = lockKeyspace(handle, exclusive: exclusive)
        let result = Result { try body() }
        // The check (or the lock) failing comes first: a failed lock aborts the transaction and
        // makes `body`'s statement fail with a less telling error.
        try verify?()
        return try result.get()
    }

    /// Checks the answers of the puts sent without waiting, in order; throws the first failure.
    /// Called before any other wait of the transaction and before `COMMIT`.
    func flushWrites() throws {
        closeOpenInsert()
        guard !unchecked.isEmpty else { return }
        // An opening held with them (`BEGIN`, the epoch read and maybe the first key locks)
        // answers first: its failure (a deadlock on those locks, retryable) is the one that
        // counts, not the "transaction aborted" of the statements behind it. A guessed epoch is
        // checked with it (a wrong one moves the shared cache on, so a retry looks up again).
        if start != nil { _ = try guessHeld() }
        let checks = unchecked
        unchecked = []
        for check in checks { try check() }
    }

    /// Runs `body`, a wait for a statement that divides by its count of keyspace rows (see
    /// ``lockedPut(_:_:key:value:)``): its division by zero is a keyspace dropped meanwhile or,
    /// when the statement carried it, a failed check of a value taken on trust (see
    /// ``stableValue(forKey:in:)``; the value is forgotten).
    func checkingDrop<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch PostgresDriverError.server(sqlState: "22012", message: _) {
            forgetExpectedValue()
            throw droppedMeanwhile()
        }
    }

    /// The error for a write whose `COMMIT` rolled back (an earlier statement failed, and the
    /// closure caught its error): that statement's error, retryable when it was.
    func rolledBack() -> PostgresDriverError {
        firstServerError ?? .server(sqlState: "25P02", message: "the transaction was aborted by an earlier failure and rolled back")
    }

    /// The error for a keyspace that another transaction dropped meanwhile: retryable (the
    /// write runs again with fresh handles).
    func droppedMeanwhile() -> PostgresDriverError {
        retryableState = "40001"
        return .server(sqlState: "40001", message: "a keyspace was dropped by a concurrent transaction")
    }
}
#endif

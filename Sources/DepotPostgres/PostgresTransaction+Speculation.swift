#if Postgres
import DepotCore

/// The document layer's insert of a new document in one round trip: sent with the
/// transaction's next statement (usually its `COMMIT`) without waiting for an answer.
extension PostgresTransaction {
    /// ``StorageTransaction/putExpectingAbsent(_:forKey:in:existing:)``: under key locks, in a
    /// single-value keyspace, outside savepoints and when the driver's ``Speculation`` admits
    /// it, the insert is held (not even sent: it goes out with the next statement) and taken as
    /// done. Its statement takes the key locks (as ``putIfAbsent(_:forKey:in:existing:)`` does),
    /// then inserts only when the keyspace exists and the key is absent, and otherwise **fails**
    /// (see ``OpenInsert``): the server aborts the transaction, so nothing after
    /// it — `COMMIT` included — can succeed, whatever the closure did with the answer. That
    /// failure is read before the transaction's next wait or its `COMMIT`'s answer; the driver
    /// then runs the write again without taking inserts on trust, and that attempt finds the
    /// stored value (or the dropped keyspace) the usual way. Elsewhere, when not admitted, or for
    /// a key this transaction read and found: ``putIfAbsent(_:forKey:in:existing:)``.
    func putExpectingAbsent(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace,
                            existing: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        let guess = KeyspaceHandle(keyspace.handle)
        // A key this transaction read and found (a document retrieved, then parked: an update)
        // is present, and stays so under its lock: never taken as new, which would fail and run
        // the write again.
        guard let speculation, let locks, nestingDepth == 0, !guess.multiValue,
              !readShared.contains(locks.id(keyspace: guess.id, key: key)), speculation.admits() else {
            return try putIfAbsent(value, forKey: key, in: keyspace, existing: existing)
        }
        return try storageCall {
            // The open insert of the document before stays open: this one's key locks go last in
            // its statement (see closeOpenInsert(trailing:)).
            try check(write: true, guessing: true, deferring: true, joining: true)
            guard let handle = try handle(of: keyspace) else {
                closeOpenInsert()
                throw droppedMeanwhile()
            }
            // (No value taken on trust to forget: a key that has one is present, and the insert fails.)
            let keyID = locks.id(keyspace: handle.id, key: key)
            if readShared.contains(keyID) { locks.hot.insert(keyID) }
            // When nothing went out yet, the locks go in the statement that reads the epoch
            // after `BEGIN` (with the lock of a value taken on trust): held too, ahead.
            let opening = start == nil
            let (lock, lockShape) = insertLocks(handle, locks, keyID: keyID, expectationLock: opening && expectation != nil)
            var before = [lock]
            if opening {
                // (Nothing went out yet: no insert is open.)
                opened(holding: true, locking: (lock, lockShape))
                before = []
            } else if openInsert != nil {
                closeOpenInsert(trailing: (lock, lockShape))
                before = []
            }
            // Open until an operation that sends a statement: the document's index entries and
            // its change log entry, put next, join it.
            // Room for the entries that join it (index entries and a change log entry: short
            // keys and values, and their locks), the next insert's locks and a trusted value's
            // check, so that they are appended without the parameters growing each time.
            var parameters = Parameters(capacity: 32, byteCount: key.count + value.count + 512)
            handle.id.bind(into: &parameters)
            Bytea(key).bind(into: &parameters)
            Bytea(value).bind(into: &parameters)
            openInsert = OpenInsert(before: before, parameters: parameters, keyspace: handle.id)
            speculated = true
            return true
        }
    }

    /// What must go out before `COMMIT` (held, so that `COMMIT` takes it along): the open
    /// insert, `BEGIN` and the epoch read when nothing was sent yet (so that a transaction
    /// that sent nothing still ends one it opened), and the check of a value taken on trust.
    func beforeCommit() {
        closeOpenInsert()
        opened(holding: true)
        sendExpectationCheck()
    }

    /// Hands the open insert (and the index entries that joined it) to the session as one
    /// statement, held: it goes out with the next statement. Its snapshot is taken after the
    /// key locks were granted (the statement before): the keyspace check sees a drop that
    /// committed meanwhile. A handle guessed at an older epoch names the same keyspace or a
    /// dropped one (IDs are never reused): in the second case the statement fails.
    ///
    /// `trailing`: the key locks of the next document's insert taken on trust (a statement of
    /// ``insertLocks(_:_:keyID:expectationLock:)`` and its shape), taken last in this statement
    /// (after its own locks and checks) instead of in a statement of their own before the next
    /// one: a write of several new documents then costs one statement each. They are granted
    /// before the next statement's snapshot, as the statement of their own was.
    func closeOpenInsert(trailing: (statement: Statement, shape: UInt32)? = nil) {
        guard var open = openInsert else { return }
        openInsert = nil
        var trailingLocks: (bits: UInt32, first: Int)?
        if let trailing {
            trailingLocks = (trailing.shape & 0xFF_FFFF, open.parameters.count + 1)
            open.parameters += trailing.statement.parameters
        }
        // With the check of a value taken on trust, when it is still to be sent.
        let check = expectationCheck(first: open.parameters.count + 1, binds: &open.parameters)
        let sql = schema.texts.text(open.shape(checking: check != nil, trailing: trailingLocks?.bits)) { [schema] in
            OpenInsert.text(schema, entries: open.entries, singles: open.singles, check: check?.text,
                            trailing: trailingLocks.map { PostgresTransaction.insertLockCalls($0.bits, first: $0.first) } ?? [])
        }
        let pending = session.hold(open.before + [Statement(prepared: sql, open.parameters)]) { _ in () }
        unchecked.append { [self] in
            do {
                // A keyspace dropped meanwhile or a value taken on trust that changed: retried
                // as a put's failure is (see checkingDrop(_:)).
                try checkingDrop { try run { try session.wait(pending) } }
            } catch PostgresDriverError.server(sqlState: OpenInsert.presentState, message: _) {
                throw missedSpeculation()
            }
        }
    }

    /// Joins the put of `key` and `value` to the open insert when its keyspace's lock is held
    /// (as the put's own statement would find it: the statement's snapshot, taken after that
    /// lock was granted, sees a drop committed before) and the insert has room: an index entry
    /// (a multi-value keyspace), or a value in a single-value keyspace other than the
    /// document's and than any other joined one (a change log entry), so that no two parts of
    /// the statement touch one row. False otherwise.
    ///
    /// A nil `key` is this transaction's change-log entry (single-value only): its key is left
    /// to the server, a null parameter that the statement replaces by
    /// `int8send(txid_current())`, and it takes no key lock (no other transaction writes that
    /// key; `pg_advisory_xact_lock(NULL)` is null and locks nothing).
    func join(_ handle: KeyspaceHandle, _ locks: KeyLocks, key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer) -> Bool {
        guard var open = openInsert, open.entries < OpenInsert.limit, heldKeyspaces.lock(handle.id) != nil else { return false }
        if !handle.multiValue {
            guard handle.id != open.keyspace, !open.singleKeyspaces.contains(handle.id) else { return false }
        } else if key == nil {
            return false
        }
        // `open` holds the only copy from here: its parameters are appended to in place, not
        // copied first.
        openInsert = nil
        let keyID = key.map { locks.id(keyspace: handle.id, key: $0) }
        if !handle.multiValue {
            if let keyID, readShared.contains(keyID) { locks.hot.insert(keyID) }
            open.singleKeyspaces.append(handle.id)
            open.singles |= 1 << UInt32(open.entries)
        }
        heldKeyspaces.use(handle.id)
        handle.id.bind(into: &open.parameters)
        if let key { Bytea(key).bind(into: &open.parameters) } else { open.parameters.appendNull(type: 17) }
        Bytea(value).bind(into: &open.parameters)
        // As ``lockedPut(_:_:key:value:)`` takes them: a value's key exclusive; an index
        // entry's key shared and its pair exclusive.
        if let keyID { keyID.bind(into: &open.parameters) } else { open.parameters.appendNull(type: 20) }
        if let key, handle.multiValue { locks.id(keyspace: handle.id, key: key, value: value).bind(into: &open.parameters) }
        open.entries += 1
        openInsert = open
        return true
    }

    /// An insert taken on trust and the index entries that joined it, sent as one statement:
    /// a document with its index entries is then one statement (and one round trip on the
    /// wire) instead of one per entry. When the document's key was present the statement fails
    /// with ``presentState`` and the write runs again without trust; when a keyspace is gone or
    /// a value taken on trust changed, with 22012, and the write is retried (as for a put).
    struct OpenInsert {
        /// What goes before it: the key locks, when they did not go with the transaction's opening.
        let before: [Statement]
        /// The insert's (keyspace, key, value), then each entry's (keyspace, key, value, key
        /// lock, and for an index entry its pair lock).
        var parameters: Parameters
        /// The document's keyspace.
        let keyspace: Int32
        /// How many entries joined.
        var entries = 0
        /// Which joined entries (bit `n` for the `n`th, from 0) are values of single-value
        /// keyspaces; the others are index entries.
        var singles: UInt32 = 0
        /// The keyspaces of the joined single-value entries (one entry each).
        var singleKeyspaces: [Int32] = []

        init(before: [Statement], parameters: Parameters, keyspace: Int32) {
            self.before = before
            self.parameters = parameters
            self.keyspace = keyspace
        }

        static let limit = 8
        /// What the statement fails with when the document's key was present.
        static let presentState = "22008"

        /// The statement's shape (see ``StatementTexts``), with or without the check of a value
        /// taken on trust and with the trailing key locks of that shape (see
        /// ``PostgresTransaction/closeOpenInsert(trailing:)``), if any.
        func shape(checking: Bool, trailing: UInt32?) -> UInt32 {
            StatementTexts.shape(.speculativeInsert, UInt32(entries) | singles << 4 | (checking ? 1 << 12 : 0) | (trailing.map { ($0 + 1) << 13 } ?? 0))
        }

        /// The statement for an insert with `entries` joined entries, those in `singles`
        /// values of single-value keyspaces: the insert as before, and per entry its locks, a
        /// check that its keyspace exists and its insert, as
        /// ``PostgresTransaction/lockedPut(_:_:key:value:)`` writes them, and `check` (the
        /// check of a value taken on trust, a part named `c`); it fails when any check does or
        /// the document's key was present. Data-modifying `WITH` parts all run,
        /// with one snapshot; none touches another's rows (a table each, or distinct keys).
        /// `trailing`: lock calls evaluated last, in the result's columns after the checks
        /// (which the parts they read, locks included, precede).
        static func text(_ schema: PostgresSchema, entries: Int, singles: UInt32, check: String?, trailing: [String]) -> String {
            var parts = [
                "k AS (SELECT count(*) AS n FROM \(schema.keyspaces) WHERE id = $1::int)",
                "i AS (INSERT INTO \(schema.entries) (keyspace, key, value) SELECT $1::int, $2::bytea, $3::bytea FROM k WHERE k.n > 0 "
                    + "ON CONFLICT (keyspace, key) DO NOTHING RETURNING 1)",
            ]
            // A present key fails with its own SQLSTATE (22008: year 0 is no date), a missing
            // keyspace or a failed check by division by zero (22012), as elsewhere.
            var checks = ["1 / k.n", "make_date((SELECT count(*) FROM i)::int, 1, 1)"]
            var from = ["k"]
            var p = 3
            for entry in stride(from: 1, through: entries, by: 1) {
                if singles & 1 << UInt32(entry - 1) != 0 {
                    parts.append("l\(entry) AS (SELECT pg_advisory_xact_lock($\(p + 4)::bigint))")
                    parts.append("k\(entry) AS (SELECT count(*) AS n FROM \(schema.keyspaces), l\(entry) WHERE id = $\(p + 1)::int)")
                    // A null key is this transaction's change-log entry (see join).
                    parts.append("i\(entry) AS (INSERT INTO \(schema.entries) (keyspace, key, value) "
                                 + "SELECT $\(p + 1)::int, coalesce($\(p + 2)::bytea, int8send(txid_current())), $\(p + 3)::bytea "
                                 + "FROM k\(entry) WHERE k\(entry).n > 0 ON CONFLICT (keyspace, key) DO UPDATE SET value = EXCLUDED.value)")
                    p += 4
                } else {
                    parts.append("l\(entry) AS (SELECT pg_advisory_xact_lock_shared($\(p + 4)::bigint), pg_advisory_xact_lock($\(p + 5)::bigint))")
                    parts.append("k\(entry) AS (SELECT count(*) AS n FROM \(schema.keyspaces), l\(entry) WHERE id = $\(p + 1)::int)")
                    parts.append("i\(entry) AS (INSERT INTO \(schema.multi) (keyspace, key, value) SELECT $\(p + 1)::int, $\(p + 2)::bytea, $\(p + 3)::bytea "
                                 + "FROM k\(entry) WHERE k\(entry).n > 0 ON CONFLICT DO NOTHING)")
                    p += 5
                }
                checks.append("1 / k\(entry).n")
                from.append("k\(entry)")
            }
            if let check {
                parts.append(check)
                checks.append("1 / c.ok")
                from.append("c")
            }
            checks += trailing
            return "WITH " + parts.joined(separator: ", ") + " SELECT " + checks.joined(separator: ", ") + " FROM " + from.joined(separator: ", ")
        }
    }

    /// The error for an insert taken on trust whose key was present: the transaction is
    /// aborted, and the driver runs the write again without trust.
    func missedSpeculation() -> PostgresDriverError {
        speculationMissed = true
        return .server(sqlState: OpenInsert.presentState, message: "a document taken as new was already stored; the write runs again")
    }
}
#endif

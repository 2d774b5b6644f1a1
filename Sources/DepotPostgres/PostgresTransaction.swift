#if Postgres
import DepotCore

/// A transaction of ``PostgresDriver`` on one leased connection. Every operation is one
/// statement; keys and values are bound as `bytea` parameters. A transaction sends `BEGIN` and
/// the keyspace epoch read (see ``opened()``) with its first statement (a `SERIALIZABLE` or
/// `REPEATABLE READ` write when it starts): a point read then reads the epoch in the same
/// statement (a read also its hinted key, see ``ReadHint``), any other operation sends `BEGIN`
/// and the epoch read first. The first operation that waits for an answer waits for them too
/// (so nothing it reads comes from outside the transaction when `BEGIN` failed); a document
/// insert taken on trust holds them, with its key locks, until `COMMIT` (see
/// ``putExpectingAbsent(_:forKey:in:existing:)``).
///
/// Its variables are `@exclusivity(unchecked)`, as ``LibPQConnection``'s: it is used by one
/// thread, and a collection it runs through (the checks not answered yet, the handlers) is
/// copied out before it runs them, never modified in place while they run.
final class PostgresTransaction: StorageTransaction {
    let session: PostgresSession
    let schema: PostgresSchema
    let isReadOnly: Bool
    let firstPage: Int
    /// Let go of when the transaction ends, and not kept when set after (see ``finish()``).
    @exclusivity(unchecked) var attachment: AnyObject? {
        didSet { if finished && attachment != nil { attachment = nil } }
    }
    @exclusivity(unchecked) private var handlers: [() -> Void] = []
    /// The SQLSTATE of a serialization failure or deadlock met by any statement, even one whose
    /// error the closure caught: the write is then retried.
    @exclusivity(unchecked) var retryableState: String?
    /// Whether a statement found the connection lost (even one whose error the closure caught):
    /// the server rolled the transaction back, and the write is retried on another connection.
    @exclusivity(unchecked) private(set) var lostConnection = false
    @exclusivity(unchecked) private var finished = false
    @exclusivity(unchecked) private var depth = 0
    /// Keyspaces looked up in this transaction (cleared when a savepoint rolls back).
    @exclusivity(unchecked) private var keyspaces: [String: Keyspace] = [:]
    /// The statements opening the transaction (`BEGIN`; none in a chained read transaction),
    /// until they are sent with the first statement.
    @exclusivity(unchecked) var opening: [Statement]?
    /// The snapshot's keyspace epoch, once the opening statements and the epoch read were sent.
    @exclusivity(unchecked) var start: Pending<Opening>?
    @exclusivity(unchecked) private var epoch: Int64?
    /// The epoch of the cached handles handed out before `start` answered (a point read then
    /// goes out with `BEGIN` and the epoch read, one round trip in all), until it is checked.
    @exclusivity(unchecked) private var assumedEpoch: Int64?
    /// Whether such a guess was wrong: handles handed out before may be stale, and each
    /// operation looks its keyspace up again by name.
    @exclusivity(unchecked) private(set) var guessedWrong = false
    private let cache: KeyspaceCache
    /// Whether this transaction dropped a keyspace: the shared cache is then left alone.
    @exclusivity(unchecked) private var droppedKeyspace = false
    /// The key locks of a `READ COMMITTED` write (see ``KeyLocks``); nil otherwise.
    let locks: KeyLocks?
    /// The keyspaces whose lock this transaction holds, those locked (shared) ahead of use
    /// because the connection's last write locked them (see ``WriteHint``) that nobody checked
    /// yet to exist, and those it locked for use.
    @exclusivity(unchecked) var heldKeyspaces = HeldKeyspaces()
    /// Whether the locks of ``WriteHint`` went out (with the transaction's first lock statement).
    @exclusivity(unchecked) var hintedLocksSent = false
    /// The key locks this transaction took shared for a read that found the key (a write of
    /// one of them makes it hot: see ``KeyLocks/Hot``; a new document's absent key does not).
    @exclusivity(unchecked) var readShared: Set<Int64> = []
    /// Values this write read and found under their key's lock (shared, held to its end: no
    /// other writer can change them), by keyspace and key, until this write changes them: a
    /// document retrieved and then parked is known present without asking again (see
    /// ``putIfAbsent(_:forKey:in:existing:)``). At most ``LockedValue/limit`` of them, each at
    /// most ``LockedValue/largest`` bytes.
    @exclusivity(unchecked) var lockedValues: [LockedValue: [UInt8]] = [:]
    /// The stamp of this write's change-log entry, once ``changeLogStamp()`` gave one: the
    /// driver sends a change notice after the commit.
    @exclusivity(unchecked) var loggedStamp: UInt64?
    /// Whether this transaction's change-log entry went out with its key left to the server
    /// (see ``appendChangeLogEntry(_:in:)``).
    @exclusivity(unchecked) var stampedByServer = false
    /// Whether the driver's recent writes logged changes (see ``StampHint``): this write then
    /// reads `txid_current()` with its first statement.
    let prefetchesStamp: Bool
    /// `txid_current()`, read with the first statement when ``prefetchesStamp``.
    @exclusivity(unchecked) var prefetchedStamp: Int64?
    /// Where this write tells the driver whether it logged changes; nil for reads.
    let stampHint: StampHint?
    /// Checks of writes sent without waiting for their answer (see ``flushWrites()``).
    @exclusivity(unchecked) var unchecked: [() throws -> Void] = []
    /// The first server error any statement met (even one the closure caught): it aborted the
    /// transaction, so `COMMIT` rolls back (see ``rolledBack()``).
    @exclusivity(unchecked) var firstServerError: PostgresDriverError?
    /// A value taken on trust by ``stableValue(forKey:in:)``, with its check.
    @exclusivity(unchecked) var expectation: Expectation?
    /// The key a read's opening statement also read (see ``ReadHint``), and what it found.
    @exclusivity(unchecked) var sentHint: ReadHint?
    @exclusivity(unchecked) var hintedValue: [UInt8]?
    let stableValues: StableValues
    /// Whether a new document's insert may be taken as done before the server answers (see
    /// ``putExpectingAbsent(_:forKey:in:existing:)``); the driver's ``Speculation`` decides per insert.
    let speculation: Speculation?
    /// Whether such an insert found its key present: the transaction is doomed (the statement
    /// failed, so `COMMIT` rolls back) and the driver runs the write again without speculating.
    @exclusivity(unchecked) var speculationMissed = false
    /// Whether an insert was taken on trust in this transaction.
    @exclusivity(unchecked) var speculated = false
    /// An insert taken on trust not handed to the session yet, which the index entries put
    /// next join (see ``OpenInsert``).
    @exclusivity(unchecked) var openInsert: OpenInsert?

    init(session: PostgresSession, schema: PostgresSchema, readOnly: Bool, firstPage: Int, opening: [Statement], cache: KeyspaceCache,
         stableValues: StableValues, locks: KeyLocks? = nil, stampHint: StampHint? = nil, speculation: Speculation? = nil) {
        self.session = session
        self.schema = schema
        self.isReadOnly = readOnly
        self.firstPage = max(1, firstPage)
        self.opening = opening
        self.cache = cache
        self.stableValues = stableValues
        self.locks = readOnly ? nil : locks
        self.stampHint = readOnly ? nil : stampHint
        self.speculation = readOnly ? nil : speculation
        prefetchesStamp = !readOnly && (stampHint?.wanted ?? false)
    }

    /// Waits for `BEGIN` and the epoch read (sending them if nothing was sent yet); throws their
    /// failure.
    @discardableResult
    func started() throws -> Int64 {
        if let epoch { return epoch }
        let value = try run { try session.wait(opened()) }
        epoch = value.epoch
        if let stamp = value.stamp { prefetchedStamp = stamp }
        hintedValue = value.hinted
        return value.epoch
    }

    /// Sends the opening statements and the epoch read unless they went out already (without
    /// waiting); the pending epoch. Before `COMMIT` (``beforeCommit()``) it makes a transaction
    /// that sent nothing still end one it opened. `holding`: not sent yet, but with the
    /// session's next submission or before its next wait (see ``PostgresSession/hold(_:decode:)``).
    /// `locking`: a write's first locks (a select of lock calls whose parameters start at `$1`,
    /// the lock of a value taken on trust included, and its shape, see
    /// ``insertLocks(_:_:keyID:expectationLock:)``), taken in the same statement.
    @discardableResult
    func opened(holding: Bool = false, locking: (statement: Statement, shape: UInt32)? = nil) -> Pending<Opening> {
        if let start { return start }
        let stamp = prefetchesStamp
        if let locking, !isReadOnly {
            let shape = StatementTexts.shape(.openingLocks, locking.shape & 0xFFFF | (stamp ? 1 << 16 : 0))
            let sql = schema.texts.text(shape) { [schema] in
                "SELECT e.value\(stamp ? ", txid_current()" : "") FROM \(schema.epoch) e, (\(locking.statement.sql)) l"
            }
            return sendOpening(holding: holding, Statement(prepared: sql, locking.statement.parameters), stamp: stamp, hint: nil)
        }
        var sql = "SELECT e.value\(stamp ? ", txid_current()" : "")"
        var parameters = Parameters()
        // A read also reads the key its connection's last read asked for first (see ReadHint).
        let hint = isReadOnly && !guessedWrong ? session.readHint : nil
        if let hint {
            sql += ", (SELECT value FROM \(schema.entries) WHERE keyspace = $1::int AND key = $2::bytea)"
            parameters = .of(hint.keyspace, Bytea(hint.key))
        }
        sql += " FROM \(schema.epoch) e"
        if let expectation {
            // The lock of the key whose value was taken on trust (see stableValue(forKey:in:)).
            expectation.lock.bind(into: &parameters)
            sql += ", (SELECT pg_advisory_xact_lock_shared($\(parameters.count)::bigint)) l"
        }
        return sendOpening(holding: holding, Statement(prepared: sql, parameters), stamp: stamp, hint: hint)
    }

    /// Sends (or holds) the opening statements and `read`, the epoch read; the pending epoch.
    private func sendOpening(holding: Bool, _ read: Statement, stamp: Bool, hint: ReadHint?) -> Pending<Opening> {
        sentHint = hint
        let statements = (opening ?? []) + [read]
        let decode: @Sendable ([Row]) throws -> Opening = { rows in
            guard let row = rows.first else { return Opening(epoch: 0, stamp: nil) }
            return Opening(epoch: try row.binary(Int64.self, at: 0), stamp: stamp ? try row.binary(Int64.self, at: 1) : nil,
                           hinted: hint == nil ? nil : try row.bytes(at: stamp ? 2 : 1))
        }
        let pending = holding ? session.hold(statements, decode: decode) : session.submit(statements, decode: decode)
        opening = nil
        start = pending
        return pending
    }

    /// After the commit of a write: shares the keyspaces it used (created ones included).
    func publishKeyspaces() {
        guard let epoch, !droppedKeyspace, !isReadOnly else { return }
        cache.store(keyspaces.mapValues(\.handle), epoch: epoch)
    }

    var nestingDepth: Int { depth }

    /// Ends the transaction: later operations fail (``PostgresDriverError/transactionEnded``).
    /// Lets go of what points back at it (the document layer's attachment and after-commit
    /// handlers capture its state, which holds the transaction: kept, each write would leak
    /// both) and returns the handlers, for a commit to run.
    @discardableResult
    func finish() -> [() -> Void] {
        finished = true
        attachment = nil
        defer { handlers = [] }
        return handlers
    }

    /// Ignored once the transaction ended: it would never run, and would keep what it captures.
    func afterCommit(_ handler: @escaping () -> Void) {
        guard !finished else { return }
        handlers.append(handler)
    }

    /// Refuses an ended transaction or a write in a read-only one; unless `guessing`, waits
    /// for `BEGIN` and the epoch read (so nothing runs outside the transaction when `BEGIN`
    /// failed) and checks any guessed epoch.
    /// Unless `deferring` (a put), first checks the answers of the puts sent without waiting.
    /// Unless `joining` (a put that may join it), hands an open insert to the session first
    /// (see ``OpenInsert``), so that statements go out in the order they were made.
    func check(write: Bool, guessing: Bool = false, deferring: Bool = false, joining: Bool = false) throws {
        if finished { throw PostgresDriverError.transactionEnded }
        if write && isReadOnly { throw PostgresDriverError.readOnlyTransaction }
        if !joining { closeOpenInsert() }
        if !guessing { _ = try guessHeld() }
        if !deferring { try flushWrites() }
    }

    /// Waits for the snapshot's epoch; false when it differs from the epoch guessed for the
    /// handles handed out before (they are forgotten then).
    func guessHeld() throws -> Bool {
        let actual = try started()
        guard let assumed = assumedEpoch else { return true }
        assumedEpoch = nil
        if actual == assumed { return true }
        keyspaces.removeAll()
        guessedWrong = true
        // Later transactions (this write's next attempt too) guess from this epoch on.
        cache.advance(to: actual)
        return false
    }

    /// The handle of `keyspace` in this snapshot: itself, unless a guess was wrong (then looked
    /// up again by name; nil when the keyspace does not exist in this snapshot).
    func handle(of keyspace: Keyspace) throws -> KeyspaceHandle? {
        let handle = KeyspaceHandle(keyspace.handle)
        guard guessedWrong else { return handle }
        return try self.keyspace(named: keyspace.name, create: false, multiValue: handle.multiValue).map { KeyspaceHandle($0.handle) }
    }

    /// Runs one statement, remembering retryable failures and the first server error.
    func run<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresDriverError {
            if case .server = error, firstServerError == nil { firstServerError = error }
            if error.isRetryable { retryableState = error.sqlState }
            if error.isConnectionLoss { lostConnection = true }
            throw error
        }
    }

    // MARK: - Keyspaces

    func keyspace(named name: String, create: Bool, multiValue: Bool) throws -> Keyspace? {
        return try storageCall {
            // Writes sent without waiting are checked (and an open insert closed, see
            // `OpenInsert`) only when this waits: a known name leaves them be.
            try check(write: false, guessing: true, deferring: true, joining: true)
            if let known = keyspaces[name] { return known }
            // Before `BEGIN` and the epoch read have answered: the handle cached at the latest epoch
            // seen, checked when the first result comes back.
            if epoch == nil, start?.current == nil, !droppedKeyspace, case let (handle, cached)? = cache.latest(named: name),
               assumedEpoch == nil || assumedEpoch == cached {
                assumedEpoch = cached
                let keyspace = Keyspace(name: name, handle: handle)
                keyspaces[name] = keyspace
                return keyspace
            }
            try flushWrites()
            _ = try guessHeld()
            let epoch = try started()
            if !droppedKeyspace, let handle = cache.handle(named: name, epoch: epoch) {
                let keyspace = Keyspace(name: name, handle: handle)
                keyspaces[name] = keyspace
                return keyspace
            }
            // id * 2 + multi: both in one bigint column.
            let select = "SELECT id::bigint * 2 + multi::int FROM \(schema.keyspaces) WHERE name = $1"
            var found = try run { try session.integers(select, .of(name)) }.first
            if found == nil {
                guard create && !isReadOnly else { return nil }
                let insert = "INSERT INTO \(schema.keyspaces) (name, multi) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING RETURNING id::bigint * 2 + multi::int"
                found = try run { try session.integers(insert, .of(name, multiValue)) }.first
                if found == nil { found = try run { try session.integers(select, .of(name)) }.first }
            }
            guard let found, let id = Int32(exactly: found / 2) else { return nil }
            let keyspace = Keyspace(name: name, handle: KeyspaceHandle(id: id, multiValue: found % 2 == 1).raw)
            keyspaces[name] = keyspace
            // A read's snapshot only holds committed keyspaces: share them now. A write's (which
            // may have created some) are shared after its commit.
            if isReadOnly { cache.store([name: keyspace.handle], epoch: epoch) }
            return keyspace
        }
    }

    func count(_ keyspace: Keyspace) throws -> Int {
        return try storageCall {
            try check(write: false)
            guard let handle = try self.handle(of: keyspace) else { return 0 }
            let sql = "SELECT count(*) FROM \(schema.table(multiValue: handle.multiValue)) WHERE keyspace = $1"
            return try holdingKeyspace(handle, exclusive: true) { Int(try run { try session.integers(sql, .of(handle.id)) }.first ?? 0) }
        }
    }

    func clear(_ keyspace: Keyspace) throws {
        lockedValues.removeAll()
        try storageCall {
            try check(write: true)
            guard let handle = try self.handle(of: keyspace) else { return }
            try holdingKeyspace(handle, exclusive: true) {
                try run { try session.execute("DELETE FROM \(schema.table(multiValue: handle.multiValue)) WHERE keyspace = $1", .of(handle.id)) }
            }
        }
    }

    func drop(_ keyspace: Keyspace) throws {
        try storageCall {
            try clear(keyspace)
            guard let handle = try self.handle(of: keyspace) else { return }
            try run { try session.execute("DELETE FROM \(schema.keyspaces) WHERE id = $1", .of(handle.id)) }
            // Every host's cached handles from before this commit become stale.
            droppedKeyspace = true
            try run { try session.execute("UPDATE \(schema.epoch) SET value = value + 1") }
            keyspaces[keyspace.name] = nil
        }
    }

    // MARK: - Entries

    func withValue<R>(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        return try storageCall {
            // May go out before `BEGIN` and the epoch read have answered, with a guessed handle;
            // read again with the right one when the guess was wrong (nothing was shown yet).
            try check(write: false, guessing: true)
            var value: [UInt8]?
            for _ in 0..<2 {
                guard let handle = try self.handle(of: keyspace) else { return nil }
                let sql = handle.multiValue
                    ? "SELECT value FROM \(schema.multi) WHERE keyspace = $1::int AND key = $2::bytea ORDER BY value LIMIT 1"
                    : "SELECT value FROM \(schema.entries) WHERE keyspace = $1::int AND key = $2::bytea"
                let lockIDs = keyLockIDs(handle, key, write: false)
                let result: Result<[[UInt8]], any Error>
                if start == nil, let opening {
                    // The transaction's first statement: `BEGIN` goes with it and it reads the
                    // epoch too (one statement and no wait more).
                    // After the locks, in one statement (see firstLocks(trusted:keys:)).
                    let first = firstRead(sql, handle: handle, key: key, after: opening + firstLocks(trusted: expectation?.lock, keys: lockIDs))
                    start = Pending(first.map(\.opening))
                    self.opening = nil
                    result = first.map { $0.value.map { [$0] } ?? [] }
                } else {
                    result = Result { try run { try session.values(Statement(prepared: sql, .of(handle.id, Bytea(key))), after: lockIDs.map { KeyLocks.key($0.id, exclusive: $0.exclusive) }) } }
                }
                // `BEGIN`'s failure, if any, comes first.
                if try guessHeld() {
                    value = try result.get().first
                    if let value, !handle.multiValue, let keyLocks = self.locks {
                        readShared.insert(keyLocks.id(keyspace: handle.id, key: key))
                        if lockedValues.count < LockedValue.limit, value.count <= LockedValue.largest {
                            lockedValues[LockedValue(handle.id, key)] = value
                        }
                    }
                    break
                }
            }
            guard let value else { return nil }
            return try value.withUnsafeBytes { try body($0) }
        }
    }

    func put(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws {
        try storageCall {
            // Under key locks, once `BEGIN` and the epoch read went out (or are held), not
            // waiting for them: the put goes out behind them, and its statement checks that its
            // keyspace still exists (a guessed handle names either that keyspace or one dropped
            // since: IDs are never reused). A put without key locks checks nothing: it waits,
            // so that a guessed handle is checked first.
            try check(write: true, guessing: start != nil && locks != nil, deferring: true, joining: true)
            guard let handle = try self.handle(of: keyspace) else {
                closeOpenInsert()
                throw droppedMeanwhile()
            }
            stableValues.forget(keyspace: handle.id, key: key)
            forgetLockedValue(handle, key)
            if let locks, join(handle, locks, key: key, value: value) { return }
            closeOpenInsert()
            let sql = handle.multiValue
                ? "INSERT INTO \(schema.multi) (keyspace, key, value) VALUES ($1::int, $2::bytea, $3::bytea) ON CONFLICT DO NOTHING"
                : "INSERT INTO \(schema.entries) (keyspace, key, value) VALUES ($1::int, $2::bytea, $3::bytea) ON CONFLICT (keyspace, key) DO UPDATE SET value = EXCLUDED.value"
            // Not waited for, and not even sent yet: it goes out with the transaction's next
            // statement (COMMIT, when it is the last), and its answer is checked before the
            // transaction's next wait or its COMMIT's (a failure aborts the transaction, so
            // nothing after it can succeed).
            guard let locks else {
                let pending = session.hold([Statement(prepared: sql, .of(handle.id, Bytea(key), Bytea(value)))]) { _ in () }
                unchecked.append { [self] in try run { try session.wait(pending) } }
                return
            }
            let verifyLock = lockKeyspace(handle, exclusive: false, checkExists: false)
            let pending = session.hold([lockedPut(handle, locks, key: key, value: value)], decode: PostgresSession.integers)
            unchecked.append { [self] in
                try verifyLock?()
                try checkingDrop { _ = try run { try session.wait(pending) } }
            }
        }
    }

    func delete(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws -> Bool {
        return try storageCall {
            // The answers of the puts sent without waiting are checked before this delete's
            // own wait, not when its answer is known (it then waits for nothing).
            try check(write: true, deferring: true)
            guard let handle = try self.handle(of: keyspace) else { return false }
            stableValues.forget(keyspace: handle.id, key: key)
            // A value this write read under the key's lock is still there: the delete's answer.
            let present = !lockedValues.isEmpty && !handle.multiValue && lockedValues[LockedValue(handle.id, key)] != nil
            forgetLockedValue(handle, key)
            if !present || locks == nil { try flushWrites() }
            if let locks { return try lockedDelete(handle, locks, key: key, value: nil, known: present ? true : nil) }
            let sql = "DELETE FROM \(schema.table(multiValue: handle.multiValue)) WHERE keyspace = $1::int AND key = $2::bytea RETURNING 1::bigint"
            // All values of a multi-value key: the key exclusively, as a read of it.
            let locks = keyLocks(handle, key, write: true)
            return try holdingKeyspace(handle, exclusive: false) {
                try !run { try session.integers(Statement(prepared: sql, .of(handle.id, Bytea(key))), after: locks) }.isEmpty
            }
        }
    }

    func delete(forKey key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, in keyspace: Keyspace) throws -> Bool {
        return try storageCall {
            try check(write: true)
            guard let handle = try self.handle(of: keyspace) else { return false }
            forgetLockedValue(handle, key)
            if let locks { return try lockedDelete(handle, locks, key: key, value: value) }
            let sql = "DELETE FROM \(schema.table(multiValue: handle.multiValue)) WHERE keyspace = $1::int AND key = $2::bytea AND value = $3::bytea RETURNING 1::bigint"
            let locks = keyLocks(handle, key, value: value, write: true)
            return try holdingKeyspace(handle, exclusive: false) {
                try !run { try session.integers(Statement(prepared: sql, .of(handle.id, Bytea(key), Bytea(value))), after: locks) }.isEmpty
            }
        }
    }

    func deleteIfPresent(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws {
        try storageCall {
            try check(write: true, deferring: true)
            guard let handle = try self.handle(of: keyspace) else { return }
            guard let locks else { _ = try delete(forKey: key, in: keyspace); return }
            stableValues.forget(keyspace: handle.id, key: key)
            forgetLockedValue(handle, key)
            _ = try lockedDelete(handle, locks, key: key, value: nil, known: false)
        }
    }

    func deleteIfPresent(forKey key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, in keyspace: Keyspace) throws {
        try storageCall {
            try check(write: true, deferring: true)
            guard let handle = try self.handle(of: keyspace) else { return }
            guard let locks else { _ = try delete(forKey: key, value: value, in: keyspace); return }
            forgetLockedValue(handle, key)
            _ = try lockedDelete(handle, locks, key: key, value: value, known: false)
        }
    }

    // MARK: - Savepoints

    func savepoint<R>(_ body: () throws -> R) throws -> R {
        return try storageCall {
            try check(write: true)
            depth += 1
            defer { depth -= 1 }
            let name = "depot_savepoint_\(depth)"
            try run { try session.execute("SAVEPOINT \(name)") }
            let result: R
            let checkSent = expectation?.sent
            do {
                result = try body()
                // The savepoint's own puts fail inside it.
                try flushWrites()
            } catch {
                unchecked.removeAll()
                // A check of a value taken on trust sent inside the savepoint is undone with it.
                if let checkSent { expectation?.sent = checkSent }
                // Undo the savepoint's work (and any keyspace it created) and carry on.
                keyspaces.removeAll()
                // Locks taken inside the savepoint were released with it: take them again (and
                // values read under them may change).
                heldKeyspaces.releaseLocks()
                lockedValues.removeAll()
                try run {
                    try session.execute("ROLLBACK TO SAVEPOINT \(name)")
                    try session.execute("RELEASE SAVEPOINT \(name)")
                }
                throw error
            }
            try run { try session.execute("RELEASE SAVEPOINT \(name)") }
            return result
        }
    }
}
#endif

#if Postgres
import DepotCore

/// ``StorageTransaction/stableValue(forKey:in:)``: in a `READ COMMITTED` write with key locks,
/// the value the driver read last is taken on trust, without a read. The key's lock (shared, as
/// a read takes it) goes out with the transaction's first statement: the epoch read that
/// follows `BEGIN`, or the key locks of a document insert (no statement more); the check that the key still holds the value rides along with the
/// transaction's first data statement (the insert of ``putIfAbsent(_:forKey:in:existing:)``
/// or a put), or goes out alone in front of `COMMIT`: no wait more. Every statement after the
/// lock takes its snapshot after the lock was granted, so a writer that changed the key
/// either committed before (the check sees it) or waits for this transaction to end. A failed
/// check fails its statement (division by zero, as a keyspace dropped meanwhile: see
/// ``checkingDrop(_:)``), which aborts the transaction and makes the write retryable; the
/// driver forgets the value, so the next attempt reads it.
/// In a read, ``StorageTransaction/stableValue(forKey:in:)`` names a key that the next reads
/// will most likely ask for first too (the document layer's schema version): the connection
/// remembers it, and its next read transaction reads it in its opening statement, with the
/// keyspace epoch, in the same snapshot (one round trip less). The value is used only when no
/// keyspace was dropped since the hint was taken (the epoch is the same), so its keyspace ID
/// still names the same keyspace. Connection-confined, like the chained transaction: no lock.
struct ReadHint: Sendable {
    let keyspace: Int32
    let key: [UInt8]
    let epoch: Int64
}

/// The keyspaces a write on a connection locked (shared), which its next write most likely
/// writes too (a collection and its indexes): that write takes their locks in its first lock
/// statement, so that a put into one of them later needs no lock statement of its own (one
/// statement less per index). A keyspace locked ahead is not known to exist: a put checks
/// that in its own statement anyway, and a scan or count checks it before it relies on it
/// (``PostgresTransaction/lockKeyspace(_:exclusive:checkExists:)``). A stale ID (a dropped
/// keyspace) only takes a lock nobody else asks for. Connection-confined: no lock.
struct WriteHint: Sendable {
    /// At most ``limit`` keyspace IDs.
    let keyspaces: [Int32]
    static let limit = 8
}

extension PostgresTransaction {
    /// A value taken on trust and the check it still needs.
    struct Expectation {
        let keyspace: Int32
        let key: [UInt8]
        /// The value, or nil: the key was absent.
        let value: [UInt8]?
        /// The key's lock ID (see ``KeyLocks``).
        let lock: Int64
        /// Whether a statement carrying the check was sent.
        var sent = false
    }

    func stableValue(forKey key: [UInt8], in keyspace: Keyspace) throws -> [UInt8]? {
        return try storageCall {
            try check(write: false, guessing: true)
            let handle = KeyspaceHandle(keyspace.handle)
            // On trust only when the lock can still go out with the epoch read (nothing sent yet).
            if let locks, start == nil, expectation == nil, !handle.multiValue, !guessedWrong,
               let seen = stableValues.seen(keyspace: handle.id, key: key) {
                // The lock goes out with the transaction's opening, which waits for the next
                // operation: a document insert then carries the opening, the locks and the
                // epoch read in its own two statements (see putIfAbsent(_:forKey:in:existing:)).
                // An absent key is taken on trust too (its check: still absent).
                expectation = Expectation(keyspace: handle.id, key: key, value: seen.value, lock: key.withUnsafeBytes { locks.id(keyspace: handle.id, key: $0) })
                return seen.value
            }
            if isReadOnly && !handle.multiValue {
                // The read's first statement: the opening, with the hinted key (see opened()).
                if start == nil { opened() }
                // Read with the epoch when the connection's last read asked for it first: valid
                // when the handle was right (a guessed one is checked) and no keyspace was
                // dropped since the hint was taken (IDs are never reused).
                if let hint = sentHint, hint.keyspace == handle.id, hint.key == key, try guessHeld(), try started() == hint.epoch {
                    return hintedValue
                }
                let value = try get(key, in: keyspace)
                if let read = try self.handle(of: keyspace) {
                    session.readHint = ReadHint(keyspace: read.id, key: key, epoch: try started())
                }
                return value
            }
            let value = try get(key, in: keyspace)
            if locks != nil, let read = try self.handle(of: keyspace) {
                stableValues.store(value, keyspace: read.id, key: key)
            }
            return value
        }
    }

    /// The check of the value taken on trust, for the next statement to carry, with parameters
    /// from `$first` (appended to `binds`). nil when there is none to send; marks it sent.
    func expectationCheck(first: Int, binds: inout Parameters) -> ExpectationCheck? {
        guard let expected = expectation, !expected.sent else { return nil }
        expectation?.sent = true
        expected.keyspace.bind(into: &binds)
        Bytea(expected.key).bind(into: &binds)
        if let value = expected.value { Bytea(value).bind(into: &binds) } else { binds.appendNull(type: 17) }
        return ExpectationCheck(entries: schema.entries, first: first)
    }

    /// Before `COMMIT`: holds the check when no statement carried it yet, so that it goes out
    /// with `COMMIT` (not waited for; its failure aborts the transaction, so `COMMIT` rolls
    /// back, and it is read before `COMMIT`'s answer).
    func sendExpectationCheck() {
        var binds = Parameters()
        guard let check = expectationCheck(first: 1, binds: &binds) else { return }
        let pending = session.hold([Statement(prepared: "WITH \(check.text) SELECT 1 / ok FROM c", binds)],
                                     decode: PostgresSession.integers)
        unchecked.append { [self] in try checkingDrop { _ = try run { try session.wait(pending) } } }
    }

    /// After a statement that carried the check failed: the value is forgotten (it may have
    /// changed), so that the next attempt reads it.
    func forgetExpectedValue() {
        guard let expected = expectation, expected.sent else { return }
        stableValues.forget(keyspace: expected.keyspace, key: expected.key)
    }
}
/// The check of a value taken on trust (see ``PostgresTransaction/expectationCheck(first:binds:)``),
/// whose text is written only where a statement's text is (once per shape, see
/// ``StatementTexts``), not with every statement that carries it.
struct ExpectationCheck {
    /// The schema's entries table.
    let entries: String
    /// The number of its first parameter.
    let first: Int

    /// A CTE named `c` whose one row's `ok` is 1 when the key still holds the value (or is
    /// still absent, the value parameter being null) and 0 otherwise.
    var text: String {
        "c AS (SELECT CASE WHEN (SELECT value FROM \(entries) WHERE keyspace = $\(first)::int AND key = $\(first + 1)::bytea) "
            + "IS NOT DISTINCT FROM $\(first + 2)::bytea THEN 1 ELSE 0 END AS ok)"
    }
}
#endif

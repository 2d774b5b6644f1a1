#if Postgres
import DepotCore
import Foundation

/// What a transaction's opening statements read: the keyspace epoch, and `txid_current()` when
/// the write asked for it (see ``StampHint``).
struct Opening: Sendable {
    let epoch: Int64
    let stamp: Int64?
    /// The value of the read's hinted key (see ``ReadHint``), when the opening statement read it.
    var hinted: [UInt8]? = nil
}

/// Whether the driver's last write logged changes (a change watcher exists): the next writes
/// then read `txid_current()` with their first statement instead of waiting for a statement of
/// its own when the change log asks for the stamp (one round trip less per logged write). A
/// write that did not log turns it off. A wrong guess costs a column, never correctness.
/// `@unchecked Sendable`: `value` is only touched under `lock` (an `NSLock`:
/// `Synchronization.Atomic` would raise the Apple platform floor).
final class StampHint: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    var wanted: Bool {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}

/// The change log's stamps and horizon (see ``StorageTransaction/changeLogStamp()``).
extension PostgresTransaction {
    /// The transaction ID (`txid_current()`, with its epoch: never wraps): writers that log
    /// changes share no row, and readers stop at ``changeLogHorizon()``. Read with the
    /// transaction's first statement when the driver's last write logged too: then no wait.
    func changeLogStamp() throws -> UInt64? {
        return try storageCall {
            // The puts sent so far are checked by the next wait (none when the stamp is here). An
            // open insert stays open while only the opening is waited for: the entry put with
            // this stamp joins it (one statement less).
            try check(write: true, deferring: true, joining: true)
            stampHint?.wanted = true
            // Asked for with the opening, which a write taking inserts on trust holds: its answer
            // (one wait, no statement more) brings the stamp.
            if prefetchedStamp == nil, prefetchesStamp, start != nil { _ = try guessHeld() }
            let xid: Int64?
            if let prefetchedStamp {
                xid = prefetchedStamp
            } else {
                try flushWrites()
                xid = try run { try session.integers(Statement(prepared: "SELECT txid_current()")) }.first
            }
            guard let xid, xid > 0 else {
                throw PostgresDriverError.server(sqlState: "XX000", message: "txid_current() returned no transaction ID")
            }
            loggedStamp = UInt64(xid)
            return UInt64(xid)
        }
    }

    /// The entry under this transaction's ID. When the opening asked for the ID and has not
    /// answered yet, the entry joins the open insert (a new document's) with its key left to the
    /// server (`int8send(txid_current())`, the same ID): no wait for the stamp, so a logged
    /// insert is one round trip, as an unlogged one. The ID is taken from the opening's answer
    /// after `COMMIT` answered (``settleLoggedStamp()``). Otherwise as the default: the stamp,
    /// then a put under it.
    func appendChangeLogEntry(_ value: [UInt8], in keyspace: Keyspace) throws -> Bool {
        let joined: Bool = try storageCall {
            // As a put: not waiting for the opening (its keyspace check fails a wrong guess).
            try check(write: true, guessing: start != nil && locks != nil, deferring: true, joining: true)
            stampHint?.wanted = true
            guard prefetchedStamp == nil, prefetchesStamp, start != nil, let locks,
                  let handle = try self.handle(of: keyspace),
                  value.withUnsafeBytes({ join(handle, locks, key: nil, value: $0) }) else { return false }
            stampedByServer = true
            return true
        }
        if joined { return true }
        return try putUnderChangeLogStamp(value, in: keyspace)
    }

    /// After `COMMIT` answered: the ID of a transaction whose entry's key the server wrote
    /// (read by the opening, which was answered before `COMMIT`), as ``loggedStamp``.
    func settleLoggedStamp() {
        guard stampedByServer, loggedStamp == nil else { return }
        _ = try? started()
        if let prefetchedStamp, prefetchedStamp > 0 { loggedStamp = UInt64(prefetchedStamp) }
    }

    /// The oldest transaction ID still running when the statement's snapshot was taken: every
    /// writer below it has committed or rolled back, so no entry below it can appear later.
    func changeLogHorizon() throws -> UInt64? {
        return try storageCall {
            try check(write: false)
            let sql = "SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint"
            guard let xmin = try run({ try session.integers(Statement(prepared: sql)) }).first, xmin > 0 else {
                throw PostgresDriverError.server(sqlState: "XX000", message: "pg_current_snapshot() returned no horizon")
            }
            return UInt64(xmin)
        }
    }
}
#endif

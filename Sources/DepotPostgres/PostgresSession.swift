#if Postgres
import Foundation
import Logging

/// One leased connection seen from the thread that leased it. Statements are queued on the
/// connection in libpq's pipeline (``submit(_:decode:)``; several at once run in order without
/// a round trip between them) and the caller waits on a ``Pending`` for the rows, reading the
/// connection's answers itself (``wait(_:)``). Errors come back as ``PostgresDriverError``; a
/// connection that failed other than by a server error is marked ``isBroken`` so that the pool
/// drops it.
///
/// Its variables are `@exclusivity(unchecked)`, as ``LibPQConnection``'s: it is used by one
/// thread, and none of its methods calls out while it modifies one.
final class PostgresSession {
    let connection: LibPQConnection
    let logger: Logger
    let server: String
    /// When the call this session serves must have returned: every wait ends by then.
    let deadline: ContinuousClock.Instant
    /// ``deadline`` as a wall-clock date (what a connection's waits take), converted once
    /// rather than at every wait (about 190 instructions each). A step of the system clock
    /// during the call shifts its later waits by the step, as it shifts a wait in progress: the
    /// call still ends, early with ``PostgresDriverError/deadlineExceeded(server:timeout:)`` or
    /// late by the step.
    let deadlineDate: Date
    /// The call's time limit, for messages.
    let timeout: Duration
    /// Whether the connection failed (closed, protocol error): it is not reused.
    @exclusivity(unchecked) private(set) var isBroken = false
    /// Whether a statement found the connection lost (the server ended the session, the
    /// connection failed or closed), even one whose error the caller caught.
    @exclusivity(unchecked) private(set) var lostConnection = false
    /// The transaction the connection was left in by `COMMIT AND CHAIN`, if any: a read or a
    /// write that committed that way opened the next transaction at once (one `BEGIN` less for
    /// the next call on this connection). Its snapshot is only taken by its first statement, so
    /// a later call may still choose its characteristics (``starting(_:)``).
    @exclusivity(unchecked) var chained: Chained?
    /// How many statements the read on this connection may still send outside a transaction
    /// (nil: no limit; see `PostgresDriver.readFromFirstOperation(_:)`), and whether it asked
    /// for more.
    @exclusivity(unchecked) var statementBudget: Int?
    @exclusivity(unchecked) var exceededBudget = false

    /// How many statements this session handed to its connection (for tests).
    @exclusivity(unchecked) private(set) var sent = 0

    /// The key the connection's next read transaction reads with its epoch (see ``ReadHint``).
    @exclusivity(unchecked) var readHint: ReadHint?
    /// The keyspaces the connection's next write locks first (see ``WriteHint``).
    @exclusivity(unchecked) var writeHint: WriteHint?

    /// A transaction opened by `COMMIT AND CHAIN`: its characteristics (as `BEGIN` takes them,
    /// such as `ISOLATION LEVEL REPEATABLE READ READ ONLY`) and since when it has been open.
    struct Chained: Sendable {
        let characteristics: String
        let since: ContinuousClock.Instant
    }

    /// How long a chained transaction is reused; older ones are rolled back first, so that a
    /// server's `idle_in_transaction_session_timeout` (if any, and above this) never ends one
    /// under a caller.
    static let chainedLifetime: Duration = .seconds(1)

    init(lease: ConnectionPool.Lease, logger: Logger, server: String, deadline: ContinuousClock.Instant, timeout: Duration) {
        connection = lease.connection
        self.logger = logger
        self.server = server
        self.deadline = deadline
        deadlineDate = PostgresDriver.date(deadline)
        self.timeout = timeout
        chained = lease.chained
        readHint = lease.readHint
        writeHint = lease.writeHint
    }

    /// The statements that start a transaction with `characteristics` (as `BEGIN` takes them)
    /// on this connection: none when a recent chained transaction has them; one
    /// `SET TRANSACTION` when it has others (allowed until its first statement took a
    /// snapshot, and none did); else (a `ROLLBACK` of an old chained one and) `BEGIN`.
    func starting(_ characteristics: String) -> [Statement] {
        defer { chained = nil }
        guard let chained else { return [Statement(prepared: "BEGIN " + characteristics)] }
        guard ContinuousClock.now - chained.since < Self.chainedLifetime else {
            return [Statement(prepared: "ROLLBACK"), Statement(prepared: "BEGIN " + characteristics)]
        }
        if chained.characteristics == characteristics { return [] }
        return [Statement(prepared: "SET TRANSACTION " + characteristics)]
    }

    /// Leaves a chained transaction, if one is open (for statements outside transactions).
    func leaveChained() {
        if chained != nil {
            chained = nil
            send("ROLLBACK")
        }
    }

    /// Sends `statements` in order and returns at once; the result is the last statement's rows
    /// through `decode`, or the first failure. A failed statement does not stop later ones
    /// (the server rejects them inside a failed transaction). A preparable statement runs by
    /// name where this connection has prepared it (see ``PreparedStatements``).
    func submit<T: Sendable>(_ statements: [Statement], decode: @escaping @Sendable ([Row]) throws -> T) -> Pending<T> {
        submitAnswering(statements) { try decode($0.rows) }
    }

    /// ``submit(_:decode:)`` with the last statement's command tag too. Statements held by
    /// ``hold(_:decode:)`` go out first, in the same pipeline.
    func submitAnswering<T: Sendable>(_ statements: [Statement], _ decode: @escaping @Sendable (Answer) throws -> T) -> Pending<T> {
        if let budget = statementBudget {
            // A single-statement read asking for more: refused, and its body runs again in a
            // transaction (see PostgresDriver.readFromFirstOperation(_:)).
            guard statements.count <= budget else {
                exceededBudget = true
                return Pending(.failure(StatementBudgetExceeded()))
            }
            statementBudget = budget - statements.count
        }
        sent += statements.count
        // The held groups share this submission's `Sync` (one write, one answer from the
        // server), except before a `ROLLBACK`, which one of their failures must not skip.
        sendHeld(joiningNext: !statements.contains { $0.sql.hasPrefix("ROLLBACK") })
        let pending = Pending<T>()
        connection.send(statements) { result in pending.set(result.flatMap { answer in Result { try decode(answer) } }) }
        return pending
    }

    /// Like ``submit(_:decode:)``, but the statements are not queued yet: they go out with the
    /// session's next submission (a write's `COMMIT` takes its last puts with it), or before
    /// its next wait. For statements nobody waits for at once (puts). Never outside a
    /// transaction: a session given back with statements still held is closed (see
    /// ``discardHeld()``), so they never run on their own.
    func hold<T: Sendable>(_ statements: [Statement], decode: @escaping @Sendable ([Row]) throws -> T) -> Pending<T> {
        sent += statements.count
        let pending = Pending<T>()
        held.append((statements, { result in pending.set(result.flatMap { answer in Result { try decode(answer.rows) } }) }))
        return pending
    }

    /// Queues the statements held by ``hold(_:decode:)``, if any (before a wait, or before a
    /// submission when `joiningNext`): one `Sync` after the last, or none when `joiningNext`
    /// (the next submission's ends them). Held statements are inside a transaction, so a failure
    /// among them fails the statements after it either way (SQLSTATE 25P02).
    func sendHeld(joiningNext: Bool = false) {
        guard !held.isEmpty else { return }
        let groups = held
        held = []
        for (index, (statements, complete)) in groups.enumerated() {
            connection.send(statements, synced: !joiningNext && index == groups.count - 1, complete: complete)
        }
    }

    /// When the session ends with statements still held (its transaction ended without them):
    /// they are dropped with the connection, which is closed (its state is unknown).
    func discardHeld() {
        guard !held.isEmpty else { return }
        held = []
        abandon()
    }

    /// Statement groups held and not queued yet, each with where its answer goes.
    @exclusivity(unchecked) private var held: [([Statement], (Result<Answer, any Error>) -> Void)] = []

    /// What a statement past a single-statement read's budget fails with (never seen outside the
    /// driver: the read runs again in a transaction).
    struct StatementBudgetExceeded: Error {}

    /// A statement's rows, and its command tag.
    typealias Answer = LibPQConnection.Answer

    /// Waits for a submitted result until the call's deadline, reading the connection's
    /// answers in order, and maps errors. When the deadline passes the connection is closed
    /// (its state is unknown: a statement may still be running; closing it makes the server
    /// roll the transaction back) and the call fails with
    /// ``PostgresDriverError/deadlineExceeded(server:timeout:)``.
    func wait<T>(_ pending: Pending<T>) throws -> T {
        sendHeld()
        let until = deadlineDate
        while pending.current == nil {
            guard connection.hasUnread else {
                // Never sent (the connection was lost before), or answered without a result.
                pending.fail(connection.lost ?? PostgresDriverError.transactionEnded)
                break
            }
            guard connection.readNext(until: until) else {
                abandon()
                throw PostgresDriverError.deadlineExceeded(server: server, timeout: timeout)
            }
        }
        guard let result = pending.current else { throw PostgresDriverError.transactionEnded }
        do {
            return try result.get()
        } catch {
            let mapped = Self.map(error, server: server)
            if case .server = mapped {} else { abandon() }
            if mapped.isConnectionLoss { lostConnection = true }
            throw mapped
        }
    }

    /// Reads the answers of statements nobody waited for (a read's `COMMIT AND CHAIN`, the
    /// `ROLLBACK` of a chained transaction) once more than ``unreadLimit`` groups are unread, so
    /// that they never pile up on a connection whose calls wait for nothing; within the call's
    /// deadline (past it the connection is closed). Before the connection is given back.
    func settle() {
        guard !isBroken, connection.unreadCount > Self.unreadLimit else { return }
        let until = deadlineDate
        while connection.hasUnread {
            guard connection.readNext(until: until) else {
                abandon()
                return
            }
        }
    }

    /// How many groups may stay unread when a connection is given back.
    static let unreadLimit = 8

    /// Gives up on the connection: marks it broken and closes it, which fails whatever is still
    /// waiting on it.
    func abandon() {
        isBroken = true
        connection.close()
    }

    /// Runs a statement (after `locks`, sent with it), discarding its rows.
    func execute(_ statement: Statement, after locks: [Statement] = []) throws {
        try wait(submit(locks + [statement]) { _ in () })
    }

    /// Runs a statement sent unnamed, discarding its rows.
    func execute(_ sql: String, _ parameters: Parameters = Parameters()) throws {
        try execute(Statement(sql, parameters))
    }

    /// Sends a statement without waiting; a failure closes the connection (so that the pool
    /// drops it).
    func send(_ sql: String) {
        let connection = connection
        submit([Statement(prepared: sql)]) { _ in () }.onFailure { _ in connection.close() }
    }

    /// Runs a statement returning one bytea column (after `locks`, sent with it).
    func values(_ statement: Statement, after locks: [Statement] = []) throws -> [[UInt8]] {
        try wait(submit(locks + [statement]) { rows in
            try rows.map { try $0.bytes(at: 0) ?? [] }
        })
    }

    /// Runs a statement returning two bytea columns (key, value), after `locks`.
    func pairs(_ statement: Statement, after locks: [Statement] = []) throws -> [(key: [UInt8], value: [UInt8])] {
        let rows: [[[UInt8]]] = try wait(submit(locks + [statement]) { rows in
            try rows.map { row in [try row.bytes(at: 0) ?? [], try row.bytes(at: 1) ?? []] }
        })
        return rows.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
    }

    /// Runs a statement returning one bigint column (after `locks`); its values.
    func integers(_ statement: Statement, after locks: [Statement] = []) throws -> [Int64] {
        try wait(submit(locks + [statement], decode: Self.integers))
    }

    /// Runs a statement sent unnamed returning one bigint column; its values.
    func integers(_ sql: String, _ parameters: Parameters = Parameters()) throws -> [Int64] {
        try integers(Statement(sql, parameters))
    }

    /// Decodes one bigint column.
    @Sendable static func integers(_ rows: [Row]) throws -> [Int64] {
        try rows.map { try $0.binary(Int64.self, at: 0) }
    }

    /// SQLSTATEs with which the server ends a session: `admin_shutdown`, `crash_shutdown`,
    /// `cannot_connect_now` (class 08, connection exceptions, counts too).
    static let connectionLossStates: Set<String> = ["57P01", "57P02", "57P03"]

    /// A driver error for anything a statement failed with.
    static func map(_ error: any Error, server: String) -> PostgresDriverError {
        switch error {
        case let error as PostgresDriverError:
            return error
        case is UnexpectedRow:
            return .connectionLost(server: server, detail: "a row did not decode as expected")
        default:
            return .connectionLost(server: server, detail: String(describing: type(of: error)))
        }
    }

    /// A server's error message: a server error, or the connection lost when the server ended
    /// the session (administrator command, crash, shutdown) or the connection failed: nothing
    /// more will come on it.
    static func serverError(state: String?, message: String?, server: String) -> PostgresDriverError {
        let state = state ?? "?????"
        if Self.connectionLossStates.contains(state) || state.hasPrefix("08") {
            return .connectionLost(server: server, detail: "the server ended the session (SQLSTATE \(state))")
        }
        return .server(sqlState: state, message: message ?? "")
    }
}

#endif

#if Postgres
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// One leased connection seen from a blocked thread. Statements go to the connection's event
/// loop through postgres-nio's EventLoopFuture API; the caller waits on a ``Pending`` for the
/// rows (decoded on the event loop). Several statements can be submitted at once (``submit``):
/// they run in order without a hand-off between them. Errors come back as
/// ``PostgresDriverError``; a connection that failed other than by a server error is marked
/// ``isBroken`` so that the pool drops it.
final class PostgresSession {
    let connection: PostgresConnection
    let logger: Logger
    let server: String
    /// The connection's unanswered statements (failed at once when it closes).
    let inFlight: InFlight
    /// When the call this session serves must have returned: every wait ends by then.
    let deadline: ContinuousClock.Instant
    /// The call's time limit, for messages.
    let timeout: Duration
    /// Whether the connection failed (closed, protocol error): it is not reused.
    private(set) var isBroken = false
    /// Whether a statement found the connection lost (the server ended the session, the
    /// connection failed or closed), even one whose error the caller caught.
    private(set) var lostConnection = false
    /// Since when the connection has been in a chained read transaction (a read ended with
    /// `COMMIT AND CHAIN`: a new `REPEATABLE READ READ ONLY` transaction, whose snapshot is only
    /// taken by its first statement), if it is.
    var chainedReadSince: ContinuousClock.Instant?

    /// How long a chained read transaction is reused; older ones are rolled back first, so that
    /// a server's `idle_in_transaction_session_timeout` (if any, and above this) never ends one
    /// under a reader.
    static let chainedReadLifetime: Duration = .seconds(1)

    init(lease: ConnectionPool.Lease, logger: Logger, server: String, deadline: ContinuousClock.Instant, timeout: Duration) {
        connection = lease.connection
        inFlight = lease.inFlight
        self.logger = logger
        self.server = server
        self.deadline = deadline
        self.timeout = timeout
        chainedReadSince = lease.chainedReadSince
    }

    /// The statements that start a transaction on this connection: none for a read when a
    /// recent chained read transaction is open, else (a `ROLLBACK` of the chained one and)
    /// `begin`.
    func starting(_ begin: String, read: Bool) -> [PostgresQuery] {
        defer { chainedReadSince = nil }
        guard let since = chainedReadSince else { return [PostgresQuery(unsafeSQL: begin)] }
        if read && ContinuousClock.now - since < Self.chainedReadLifetime { return [] }
        return [PostgresQuery(unsafeSQL: "ROLLBACK"), PostgresQuery(unsafeSQL: begin)]
    }

    /// Leaves a chained read transaction, if one is open (for statements outside transactions).
    func leaveChainedRead() {
        if chainedReadSince != nil {
            chainedReadSince = nil
            send("ROLLBACK")
        }
    }

    /// Sends `statements` in order and returns at once; the result is the last statement's rows
    /// through `decode`, or the first failure. A failed statement does not stop later ones
    /// (the server rejects them inside a failed transaction).
    func submit<T: Sendable>(_ statements: [PostgresQuery], decode: @escaping @Sendable ([PostgresRow]) throws -> T) -> Pending<T> {
        submitReturning(statements) { try decode($0.rows) }
    }

    /// ``submit(_:decode:)`` with the last statement's whole result (rows and command tag).
    func submitReturning<T: Sendable>(_ statements: [PostgresQuery], _ decode: @escaping @Sendable (PostgresQueryResult) throws -> T) -> Pending<T> {
        let pending = Pending<T>()
        let connection = connection, logger = logger, inFlight = inFlight
        // Registered first: if the connection closes before the answers come (or already has),
        // the pending fails at once rather than waiting for its deadline.
        inFlight.add(pending)
        connection.eventLoop.execute {
            let futures = statements.map { connection.query($0, logger: logger) }
            EventLoopFuture.whenAllComplete(futures, on: connection.eventLoop).whenSuccess { results in
                defer { inFlight.remove(pending) }
                for case .failure(let error) in results {
                    pending.set(.failure(error))
                    return
                }
                guard case .success(let last)? = results.last else {
                    pending.set(.failure(PostgresDriverError.transactionEnded))
                    return
                }
                pending.set(Result { try decode(last) })
            }
        }
        return pending
    }

    /// Waits for a submitted result until the call's deadline, mapping errors. When the
    /// deadline passes the connection is closed (its state is unknown: a statement may still be
    /// running; closing it makes the server roll the transaction back) and the call fails with
    /// ``PostgresDriverError/deadlineExceeded(server:timeout:)``.
    func wait<T>(_ pending: Pending<T>) throws -> T {
        let remaining = deadline - .now
        let seconds = Double(remaining.components.seconds) + Double(remaining.components.attoseconds) / 1e18
        guard let result = pending.wait(until: Date().addingTimeInterval(max(0, seconds))) else {
            abandon()
            throw PostgresDriverError.deadlineExceeded(server: server, timeout: timeout)
        }
        do {
            return try result.get()
        } catch {
            let mapped = Self.map(error, server: server)
            if case .server = mapped {} else { abandon() }
            if mapped.isConnectionLoss { lostConnection = true }
            throw mapped
        }
    }

    /// Gives up on the connection: marks it broken and closes it, which fails whatever is still
    /// waiting on it.
    func abandon() {
        isBroken = true
        connection.closeSoon()
    }

    /// Runs a statement (after `locks`, sent with it), discarding its rows.
    func execute(_ sql: String, _ binds: PostgresBindings = PostgresBindings(), after locks: [PostgresQuery] = []) throws {
        try wait(submit(locks + [PostgresQuery(unsafeSQL: sql, binds: binds)]) { _ in () })
    }

    /// Sends a statement without waiting; a failure closes the connection (so that the pool
    /// drops it).
    func send(_ sql: String) {
        let connection = connection
        submit([PostgresQuery(unsafeSQL: sql)]) { _ in () }.onFailure { _ in connection.closeSoon() }
    }

    /// Runs a statement returning one bytea column (after `locks`, sent with it).
    func values(_ sql: String, _ binds: PostgresBindings, after locks: [PostgresQuery] = []) throws -> [[UInt8]] {
        try wait(submit(locks + [PostgresQuery(unsafeSQL: sql, binds: binds)]) { rows in
            try rows.map { Array(try $0.decode(ByteBuffer.self).readableBytesView) }
        })
    }

    /// Runs a statement returning two bytea columns (key, value), after `locks`.
    func pairs(_ sql: String, _ binds: PostgresBindings, after locks: [PostgresQuery] = []) throws -> [(key: [UInt8], value: [UInt8])] {
        let rows: [[[UInt8]]] = try wait(submit(locks + [PostgresQuery(unsafeSQL: sql, binds: binds)]) { rows in
            try rows.map { row in
                let (key, value) = try row.decode((ByteBuffer, ByteBuffer).self)
                return [Array(key.readableBytesView), Array(value.readableBytesView)]
            }
        })
        return rows.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
    }

    /// Runs a statement returning one bigint column (after `locks`); its values.
    func integers(_ sql: String, _ binds: PostgresBindings, after locks: [PostgresQuery] = []) throws -> [Int64] {
        try wait(submit(locks + [PostgresQuery(unsafeSQL: sql, binds: binds)], decode: Self.integers))
    }

    /// Decodes one bigint column.
    @Sendable static func integers(_ rows: [PostgresRow]) throws -> [Int64] {
        try rows.map { try $0.decode(Int64.self) }
    }

    /// SQLSTATEs with which the server ends a session: `admin_shutdown`, `crash_shutdown`,
    /// `cannot_connect_now` (class 08, connection exceptions, counts too).
    static let connectionLossStates: Set<String> = ["57P01", "57P02", "57P03"]

    /// A driver error for anything postgres-nio throws (server messages keep their SQLSTATE and
    /// primary message only; details, which can quote stored values, are dropped).
    static func map(_ error: any Error, server: String) -> PostgresDriverError {
        switch error {
        case let error as PostgresDriverError:
            return error
        case let error as PSQLError:
            if error.code == .server, let info = error.serverInfo {
                let state = info[.sqlState] ?? "?????"
                // The server ended the session (administrator command, crash, shutdown) or the
                // connection failed: nothing more will come on it.
                if Self.connectionLossStates.contains(state) || state.hasPrefix("08") {
                    return .connectionLost(server: server, detail: "the server ended the session (SQLSTATE \(state))")
                }
                return .server(sqlState: state, message: info[.message] ?? "")
            }
            return .connectionLost(server: server, detail: error.code.description)
        case is PostgresDecodingError:
            return .connectionLost(server: server, detail: "a row did not decode as expected")
        default:
            return .connectionLost(server: server, detail: String(describing: type(of: error)))
        }
    }
}

extension PostgresBindings {
    /// Bindings from bytea buffers and integers, in order.
    static func of(_ values: any PostgresBindable...) -> PostgresBindings {
        var binds = PostgresBindings(capacity: values.count)
        for value in values { value.bind(into: &binds) }
        return binds
    }
}

/// A value the driver binds as a statement parameter.
protocol PostgresBindable {
    func bind(into binds: inout PostgresBindings)
}

extension Int32: PostgresBindable {
    func bind(into binds: inout PostgresBindings) { binds.append(self) }
}

extension Bool: PostgresBindable {
    func bind(into binds: inout PostgresBindings) { binds.append(self) }
}

extension String: PostgresBindable {
    func bind(into binds: inout PostgresBindings) { binds.append(self) }
}

extension Int64: PostgresBindable {
    func bind(into binds: inout PostgresBindings) { binds.append(self) }
}

/// Bytes bound as bytea (a `[UInt8]` would bind as an array of "char").
struct Bytea: PostgresBindable {
    let buffer: ByteBuffer
    init(_ bytes: some Sequence<UInt8>) { buffer = ByteBuffer(bytes: bytes) }
    func bind(into binds: inout PostgresBindings) { binds.append(buffer) }
}
#endif

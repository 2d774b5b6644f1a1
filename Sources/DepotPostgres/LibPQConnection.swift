#if Postgres
import CLibPQ
import Foundation

/// One connection to a server through libpq, in pipeline mode: a transaction's statements go
/// out together, each group ending in a `Sync`, without waiting for the answers in between
/// (one round trip for a write's opening, its puts and its `COMMIT`). The calling thread does
/// the I/O itself: statements are queued by ``send(_:prepared:complete:)`` and answered, in
/// order, by ``readNext(until:)``; no other thread and no event loop is involved.
///
/// `@unchecked Sendable`: a connection is used by one thread at a time (the pool hands it over
/// under its lock, and a session never lends it to another thread), which is what libpq asks.
///
/// Its variables are `@exclusivity(unchecked)`: the run-time exclusivity checks (two per access,
/// dozens per write) would only find overlapping accesses on one thread, and none of its
/// methods calls out while it modifies one.
final class LibPQConnection: @unchecked Sendable {
    /// The libpq connection (`PGconn *`); nil once closed.
    @exclusivity(unchecked) private var handle: OpaquePointer?
    /// The server, for messages.
    let server: String
    /// The named statements prepared on this connection.
    let prepared: PreparedStatements
    /// Where a statement's parameters are laid out for libpq (reused).
    private let parameterBuffer = ParameterBuffer()
    /// The groups sent and not answered yet, oldest first.
    @exclusivity(unchecked) private var expected: [Group] = []
    @exclusivity(unchecked) private var expectedStart = 0
    /// Why the connection stopped working, once it did (every later statement fails with it).
    @exclusivity(unchecked) private(set) var lost: PostgresDriverError?
    /// How often this connection waited for the server's answers after sending (for tests: a
    /// write of a new document waits once, whatever it sent).
    @exclusivity(unchecked) private(set) var roundTrips = 0
    /// How many `Sync` messages this connection sent (for tests: the statements a write sends
    /// before one wait share one).
    @exclusivity(unchecked) private(set) var syncs = 0
    /// Whether statements were sent since the last wait for answers began.
    @exclusivity(unchecked) private var sentSinceWait = false

    /// A statement's rows, and its command tag (`COMMIT`, `ROLLBACK`, `INSERT 0 1`).
    struct Answer: Sendable {
        let rows: [Row]
        let command: String?
    }

    /// One group of statements sent together, ended by a `Sync` or joined to the next group's
    /// (see ``send(_:synced:complete:)``): what each one was, and where the answer goes.
    private struct Group {
        enum Item {
            /// A statement whose answer counts (its failure fails the group).
            case statement
            /// The `Parse` of a statement under a name (see ``PreparedStatements``).
            case prepare(Int)
        }
        var items: [Item]
        /// Whether a `Sync` follows the group (its answer is read after the group's).
        let synced: Bool
        let complete: (Result<Answer, any Error>) -> Void
    }

    private init(handle: OpaquePointer, server: String, preparesStatements: Bool) {
        self.handle = handle
        self.server = server
        prepared = PreparedStatements(enabled: preparesStatements)
    }

    deinit { if let handle { PQfinish(handle) } }

    /// Whether the connection can still serve statements.
    var isUsable: Bool { handle != nil && lost == nil }

    /// Whether the connection is still usable, checking without waiting whether the server
    /// ended it while it was idle (a terminated backend, a server that went away).
    func probe() -> Bool {
        guard let handle, lost == nil else { return false }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        if CLibPQ.poll(&descriptor, 1, 0) > 0, PQconsumeInput(handle) == 0 || PQstatus(handle) == CONNECTION_BAD {
            lose(.connectionLost(server: server, detail: errorMessage))
            return false
        }
        return true
    }

    /// Whether statements were sent whose answers were not read yet.
    var hasUnread: Bool { expectedStart < expected.count }

    /// How many groups were sent whose answers were not read yet.
    var unreadCount: Int { expected.count - expectedStart }

    // MARK: Connecting

    /// Why a connection could not be opened: libpq's message (never holds the password).
    struct ConnectFailure: Error {
        let message: String
    }

    /// Opens a connection with libpq's connection `parameters` (keyword, value) as they are
    /// (the host already resolved: see ``connect(_:server:preparesStatements:deadline:resolver:)``),
    /// by `deadline`, then puts it in pipeline mode (non-blocking: the caller waits with its deadline).
    ///
    /// `answerBy`, when given, bounds the wait until the server first answers (the socket is
    /// readable once): an address that never answers gives up then, while a server that
    /// answered — slow to authenticate, say — keeps the time up to `deadline`.
    static func connectResolved(_ parameters: [(String, String)], server: String, preparesStatements: Bool,
                                deadline: Date, answerBy: Date? = nil) throws(ConnectFailure) -> LibPQConnection {
        _ = opensslKeptAtExit
        // Pipeline mode came with libpq 14.
        guard PQlibVersion() >= 140_000 else {
            throw ConnectFailure(message: "libpq \(PQlibVersion()) is older than 14, which the driver's pipeline needs")
        }
        let handle: OpaquePointer? = withCStrings(parameters.map(\.0)) { keywords in
            withCStrings(parameters.map(\.1)) { values in PQconnectStartParams(keywords, values, 0) }
        }
        guard let handle else { throw ConnectFailure(message: "out of memory") }
        let connection = LibPQConnection(handle: handle, server: server, preparesStatements: preparesStatements)
        guard PQstatus(handle) != CONNECTION_BAD else { throw connection.connectFailure() }
        var polling = PGRES_POLLING_WRITING
        var answered = answerBy == nil
        while polling != PGRES_POLLING_OK {
            switch polling {
            case PGRES_POLLING_READING, PGRES_POLLING_WRITING:
                let reading = polling == PGRES_POLLING_READING
                let limit = answered ? deadline : Swift.min(deadline, answerBy ?? deadline)
                guard connection.poll(reading ? Int16(POLLIN) : Int16(POLLOUT), until: limit) else {
                    connection.close()
                    throw ConnectFailure(message: answered ? "no connection within the connect timeout"
                                         : "no answer within this address's share of the connect timeout")
                }
                if reading { answered = true }
            case PGRES_POLLING_FAILED:
                throw connection.connectFailure()
            default:
                break
            }
            polling = PQconnectPoll(handle)
        }
        depot_pq_silence(handle)
        guard PQsetnonblocking(handle, 1) == 0, PQenterPipelineMode(handle) == 1 else { throw connection.connectFailure() }
        return connection
    }

    private func connectFailure() -> ConnectFailure {
        let message = errorMessage
        close()
        return ConnectFailure(message: message)
    }

    /// libpq's last error message on this connection, on one line.
    private var errorMessage: String {
        guard let handle, let text = PQerrorMessage(handle) else { return "the connection is closed" }
        return String(cString: text).split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    /// Closes the connection (the server rolls back its open transaction); every statement not
    /// answered yet fails.
    func close() {
        lose(lost ?? .connectionLost(server: server, detail: "the connection was closed"))
    }

    // MARK: Sending

    /// Queues `statements` as one group (a preparable statement runs by name once this
    /// connection has prepared it, and is prepared after its first unnamed run) and, when
    /// `synced`, a `Sync`, which libpq writes at once when the socket takes it (``flush(until:)``
    /// writes the rest). `complete` gets the last statement's answer, or the first failure.
    ///
    /// A failed statement does not stop the groups after the next `Sync`; the groups between it
    /// and that `Sync` are skipped (each fails with SQLSTATE 25P02, as the server answers a
    /// statement in a failed transaction). A group sent without `Sync` (`synced: false`) joins
    /// the next group's: libpq then writes them with one system call, and the server answers
    /// them with one. Only inside a transaction (outside one, a `Sync` ends the implicit
    /// transaction), never before a `ROLLBACK` (which a failure would skip), and always
    /// followed by a synced group before its answer is awaited.
    func send(_ statements: [Statement], synced: Bool = true, complete: @escaping (Result<Answer, any Error>) -> Void) {
        guard let handle, lost == nil else {
            complete(.failure(lost ?? .connectionLost(server: server, detail: "the connection closed")))
            return
        }
        var items: [Group.Item] = []
        items.reserveCapacity(statements.count + 1)
        var preparing: [(index: Int, sql: String)] = []
        var sent = true
        for statement in statements {
            var preparedIndex: Int?
            if statement.preparable {
                switch prepared.use(statement.sql) {
                case .named(let index): preparedIndex = index
                case .prepareAfter(let index): preparing.append((index, statement.sql))
                case .unnamed: break
                }
            }
            sent = parameterBuffer.withLibPQ(statement.parameters) { count, types, values, lengths, formats in
                if let preparedIndex {
                    return PreparedStatements.withName(preparedIndex) { PQsendQueryPrepared(handle, $0, count, values, lengths, formats, 1) }
                }
                return PQsendQueryParams(handle, statement.sql, count, types, values, lengths, formats, 1)
            } == 1
            items.append(.statement)
            if !sent { break }
        }
        // After the statements, so that they never wait for a preparation.
        if sent {
            for (index, sql) in preparing {
                sent = PQsendPrepare(handle, PreparedStatements.name(index), sql, 0, nil) == 1
                if !sent { break }
                items.append(.prepare(index))
            }
        }
        if sent && synced {
            sent = PQpipelineSync(handle) == 1
            syncs += 1
        }
        guard sent else {
            // libpq refused to queue (the connection broke): nothing of this group is answered.
            for (index, _) in preparing { prepared.settle(index, .aborted) }
            let error = PostgresDriverError.connectionLost(server: server, detail: errorMessage)
            lose(error)
            complete(.failure(error))
            return
        }
        expected.append(Group(items: items, synced: synced, complete: complete))
        sentSinceWait = true
    }

    /// Writes what is queued, waiting for the socket until `deadline` (false when it passed).
    func flush(until deadline: Date) -> Bool {
        guard let handle, lost == nil else { return true }
        while true {
            switch PQflush(handle) {
            case 0: return true
            case 1:
                // The server may be waiting for us to read before it reads more.
                guard poll(Int16(POLLOUT) | Int16(POLLIN), until: deadline) else { return false }
                if PQconsumeInput(handle) == 0 {
                    lose(.connectionLost(server: server, detail: errorMessage))
                    return true
                }
            default:
                lose(.connectionLost(server: server, detail: errorMessage))
                return true
            }
        }
    }

    // MARK: Reading

    /// Reads the answers of the oldest group sent and completes it; false when `deadline`
    /// passed first (the group stays unanswered: close the connection). A lost connection
    /// completes every group with its failure.
    func readNext(until deadline: Date) -> Bool {
        guard hasUnread else { return true }
        guard flush(until: deadline) else { return false }
        guard lost == nil else { return true }
        let group = expected[expectedStart]
        var answer: Answer?
        var failure: (any Error)?
        for item in group.items {
            // One result (rows, a command's end, an error or "aborted") then a null.
            guard let result = nextResult(until: deadline, skippingNull: true) else { return lost != nil }
            let status = PQresultStatus(result)
            switch (status, item) {
            case (PGRES_TUPLES_OK, .statement), (PGRES_COMMAND_OK, .statement), (PGRES_EMPTY_QUERY, .statement):
                answer = Answer(rows: Row.rows(of: result), command: PQcmdStatus(result).map { String(cString: $0) })
            case (PGRES_COMMAND_OK, .prepare(let index)):
                prepared.settle(index, .ready)
            case (PGRES_FATAL_ERROR, .statement):
                if failure == nil { failure = serverError(result) }
            case (PGRES_FATAL_ERROR, .prepare(let index)):
                prepared.settle(index, .failed)
                // Inside a transaction it is now aborted: its cause, not a later 25P02, is told.
                if failure == nil { failure = serverError(result) }
            case (PGRES_PIPELINE_ABORTED, .prepare(let index)):
                prepared.settle(index, .aborted)
            case (PGRES_PIPELINE_ABORTED, .statement):
                // Skipped after an earlier statement of its group failed: as the server answers
                // a statement in a failed transaction.
                if failure == nil { failure = PostgresDriverError.server(sqlState: "25P02", message: "an earlier statement of the transaction failed") }
            default:
                PQclear(result)
                lose(.connectionLost(server: server, detail: "an unexpected answer (\(String(cString: PQresStatus(status))))"))
                return true
            }
            PQclear(result)
            // The null that ends this statement's results.
            if let extra = nextResult(until: deadline, skippingNull: false) {
                PQclear(extra)
                lose(.connectionLost(server: server, detail: "more answers than statements"))
                return true
            }
            if lost != nil { return true }
        }
        // The Sync's answer.
        if group.synced {
            guard let sync = nextResult(until: deadline, skippingNull: true) else { return lost != nil }
            let synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
            PQclear(sync)
            guard synced else {
                lose(.connectionLost(server: server, detail: "the pipeline's Sync was not answered"))
                return true
            }
        }
        expectedStart += 1
        if expectedStart == expected.count {
            expected.removeAll(keepingCapacity: true)
            expectedStart = 0
        }
        if let failure {
            if let mapped = failure as? PostgresDriverError, mapped.isConnectionLoss { lose(mapped) }
            group.complete(.failure(failure))
        } else if let answer {
            group.complete(.success(answer))
        } else {
            group.complete(.failure(PostgresDriverError.transactionEnded))
        }
        return true
    }

    /// The next result, waiting for input until `deadline`; nil at a null result (when not
    /// `skippingNull`), or when the connection was lost or the deadline passed (check ``lost``).
    private func nextResult(until deadline: Date, skippingNull: Bool) -> OpaquePointer? {
        var nulls = 0
        while let handle, lost == nil {
            if PQisBusy(handle) == 0 {
                if let result = PQgetResult(handle) { return result }
                if !skippingNull { return nil }
                // A null between groups; more than a few in a row means nothing more is coming.
                nulls += 1
                guard nulls < 3 else {
                    lose(.connectionLost(server: server, detail: "no answer where one was expected"))
                    return nil
                }
                continue
            }
            if sentSinceWait {
                roundTrips += 1
                sentSinceWait = false
            }
            guard poll(Int16(POLLIN), until: deadline) else { return nil }
            if PQconsumeInput(handle) == 0 {
                lose(.connectionLost(server: server, detail: errorMessage))
                return nil
            }
        }
        return nil
    }

    /// Waits until the socket is ready for `events` or `deadline` passes (false then).
    private func poll(_ events: Int16, until deadline: Date) -> Bool {
        guard let handle else { return true }
        var descriptor = pollfd(fd: PQsocket(handle), events: events, revents: 0)
        while true {
            let milliseconds = deadline.timeIntervalSinceNow * 1000
            guard milliseconds > 0 else { return false }
            let ready = CLibPQ.poll(&descriptor, 1, Int32(min(milliseconds.rounded(.up), 3_600_000)))
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return true }
        }
    }

    /// The connection stopped working: it is closed, and every group not answered fails.
    private func lose(_ error: PostgresDriverError) {
        if lost == nil { lost = error }
        if let handle {
            PQfinish(handle)
            self.handle = nil
        }
        fail(error)
    }

    /// Completes every unanswered group with `error`.
    private func fail(_ error: PostgresDriverError) {
        guard hasUnread else { return }
        let groups = expected[expectedStart...]
        expected = []
        expectedStart = 0
        for group in groups {
            for case .prepare(let index) in group.items { prepared.settle(index, .aborted) }
            group.complete(.failure(error))
        }
    }

    /// The driver error for a failed statement: its SQLSTATE and primary message (the detail,
    /// which can quote stored values, is left out).
    private func serverError(_ result: OpaquePointer) -> PostgresDriverError {
        let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        let message = PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
        return PostgresSession.serverError(state: state, message: message, server: server)
    }
}

/// OpenSSL told not to clean up at exit (see `depot_pq_keep_openssl_at_exit`), once per process,
/// before the first connection.
private let opensslKeptAtExit: Void = depot_pq_keep_openssl_at_exit()

/// Runs `body` with `strings` as a null-terminated array of C strings.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let array = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: strings.count + 1)
    var owned: [UnsafeMutablePointer<CChar>] = []
    for (index, string) in strings.enumerated() {
        let copy = strdup(string)
        if let copy { owned.append(copy) }
        (array + index).initialize(to: UnsafePointer(copy))
    }
    (array + strings.count).initialize(to: nil)
    defer {
        for pointer in owned { free(pointer) }
        array.deinitialize(count: strings.count + 1)
        array.deallocate()
    }
    return body(UnsafePointer(array))
}
#endif

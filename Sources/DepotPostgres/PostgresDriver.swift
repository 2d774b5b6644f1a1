#if Postgres
import CLibPQ
import DepotCore
import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// A ``StorageDriver`` over PostgreSQL, for several hosts sharing one store: give it to
/// `Store(driver:)` and documents, indexes, queries, aliases, unique IDs and change sets work
/// as on LMDB.
///
/// - Keyspaces are rows of tables in one schema (see ``PostgresConfiguration/schema``); keys
///   and values are `bytea`, always bound as parameters, and sort as on LMDB.
/// - Reads are `REPEATABLE READ READ ONLY` transactions (one snapshot).
/// - Writes are `READ COMMITTED` transactions with two-phase key locks by default (see
///   ``PostgresConfiguration/WriteIsolation``): writes of different documents never wait for or
///   fail each other. **A write closure may run more than once**: when PostgreSQL reports a
///   deadlock (40P01) or a serialization failure (40001), or the connection was lost before
///   `COMMIT`, the transaction is rolled back and the closure runs again, up to
///   ``PostgresConfiguration/maximumWriteAttempts`` times within the call's deadline. Keep side
///   effects out of it; use after-commit hooks, which run once, after `COMMIT` returned.
/// - Every call ends within ``PostgresConfiguration/callTimeout``: a server that stops
///   answering, a lost connection or a terminated backend makes the call fail with a
///   ``PostgresDriverError``, never hang; the next calls open new connections.
/// - Savepoints are SQL savepoints; scans fetch pages (16 rows first, then more) so that a scan
///   stopped early reads little.
///
/// Threads: the protocol is synchronous, so each call blocks the calling thread, which does the
/// connection's I/O itself through libpq (PostgreSQL's C client) in pipeline mode: a
/// transaction's statements are queued and go out together, and the thread reads their answers
/// when it needs one, with the call's deadline. Nothing runs on Swift's cooperative pool, so
/// calls complete even when every cooperative thread is blocked in the driver. Still, prefer
/// calling the driver (the `Store`) from threads of your own rather than from async tasks.
/// Change notices (``changeNotices()``) use postgres-nio connections on an event loop of the
/// driver's own.
///
/// Round trips: statements are pipelined, so only a wait for an answer costs one. A read sends `BEGIN` (none when the connection's last call ended with
/// `COMMIT AND CHAIN` into a transaction of the same kind; `SET TRANSACTION` when into another
/// kind) and the keyspace epoch read at once, and its statements without waiting
/// for them; a write sends `BEGIN` with its first statement, and a first point read reads the
/// epoch in the same statement. Keyspace handles are cached across transactions (and
/// invalidated by drops, on any host); a read's `COMMIT` is not waited for, and a write's goes
/// out behind its last puts. A point read is thus one round trip, also the first get in a
/// `store.read { }` closure (its document read goes out behind the opening, which reads the
/// schema version as the connection's read hint; the document layer confirms the version
/// before it hands the document out).
public final class PostgresDriver: StorageDriver {
    /// The configuration the driver connected with.
    public let configuration: PostgresConfiguration
    let schema: PostgresSchema
    private let pool: ConnectionPool
    /// The standbys that serve reads (``PostgresConfiguration/readReplicas``); nil when none.
    let readReplicas: ReadReplicas?
    let logger: Logger
    private let keyspaceCache = KeyspaceCache()
    /// Values taken on trust by writes (the document layer's schema version; see
    /// `PostgresTransaction.stableValue(forKey:in:)`).
    private let stableValues = StableValues()
    private let writeGate: WriteGate
    /// The threads inside ``write(_:)`` (a nested write on one of them is refused).
    private let writingThreads = WritingThreads()
    /// The key locks of `READ COMMITTED` writes; nil under the other isolation levels.
    private let keyLocks: KeyLocks?
    /// Write attempts rolled back and run again.
    private let retries = WriteGate.Counter()
    /// Whether new documents' inserts are taken on trust (one round trip less each).
    private let speculation = Speculation()
    /// Tells watchers (on any host) when a write that logged changes committed.
    let notifier: ChangeNotifier
    /// Whether the last write logged changes (its successors read their stamp up front).
    private let stampHint = StampHint()

    /// How many write attempts this driver rolled back and ran again since it opened:
    /// serialization failures, deadlocks, connections lost before `COMMIT`. For monitoring and
    /// the benchmark; a write that succeeded after retries counts once per retry.
    public var writeRetries: Int { retries.value }

    /// How many writes ran again because a document they inserted on trust was already stored
    /// (see ``PostgresConfiguration/speculativeInserts``): an update where the document layer
    /// expected a new document. Not counted in ``writeRetries``.
    public var speculationMisses: Int { speculation.missCount }

    /// How many statements the pool's idle connections were handed (for tests).
    var idleStatementsSent: Int { pool.idleStatementsSent }

    /// How often the pool's idle connections waited for the server's answers (for tests).
    var idleRoundTrips: Int { pool.idleRoundTrips }

    /// How many `Sync` messages the pool's idle connections sent (for tests).
    var idleSyncs: Int { pool.idleSyncs }

    /// How many statement groups the pool's idle connections have not read the answers of (for tests).
    var idleUnreadGroups: Int { pool.idleUnreadGroups }

    /// Connects (lazily, through a pool) and creates the schema and tables when missing.
    /// - Parameter logger: where the change notices' postgres-nio connections log (warnings and
    ///   above by default; it never logs passwords).
    public init(configuration: PostgresConfiguration, logger: Logger? = nil) throws {
        try configuration.validate()
        self.configuration = configuration
        schema = try PostgresSchema(name: configuration.schema)
        let logger = logger ?? {
            var logger = Logger(label: "depot.postgres")
            logger.logLevel = .warning
            return logger
        }()
        self.logger = logger
        writeGate = WriteGate(slots: configuration.maximumConcurrentWrites)
        keyLocks = configuration.writeIsolation == .readCommitted ? KeyLocks(schema: configuration.schema) : nil
        pool = ConnectionPool(endpoints: configuration.endpoints.map { Self.libpqParameters(configuration, endpoint: $0) },
                              configurations: try configuration.endpoints.map { try Self.connectionConfiguration(configuration, endpoint: $0) },
                              target: configuration.targetSession, maximum: configuration.maximumConnections,
                              server: configuration.server, logger: logger, loopThreads: configuration.eventLoopThreads,
                              preparesStatements: configuration.preparesStatements, connectTimeout: configuration.connectTimeout,
                              tlsTrust: PostgresDriverError.tlsTrust(rootCertificatePath: configuration.rootCertificatePath))
        readReplicas = configuration.readReplicas.isEmpty ? nil : ReadReplicas(
            pool: ConnectionPool(endpoints: configuration.readReplicas.map { Self.libpqParameters(configuration, endpoint: $0) },
                                 configurations: try configuration.readReplicas.map { try Self.connectionConfiguration(configuration, endpoint: $0) },
                                 target: .any, maximum: configuration.maximumConnections,
                                 server: configuration.readReplicaServer, logger: logger, rotating: true,
                                 loopThreads: configuration.eventLoopThreads, preparesStatements: configuration.preparesStatements,
                                 connectTimeout: configuration.connectTimeout,
                                 tlsTrust: PostgresDriverError.tlsTrust(rootCertificatePath: configuration.rootCertificatePath)),
            logger: logger)
        notifier = ChangeNotifier(pool: pool, channel: schema.changeChannel, logger: logger, connectTimeout: configuration.connectTimeout)
        do {
            try setUp()
        } catch {
            close()
            throw error
        }
    }

    /// A driver for `postgres://user:password@host:port/database?sslmode=…&schema=…` (missing
    /// parts from the `PG*` environment variables).
    public convenience init(url: String) throws {
        try self.init(configuration: PostgresConfiguration(url: url))
    }

    deinit { close() }

    /// Closes the connections (those in use when they are given back). Later calls throw
    /// ``PostgresDriverError/closed``. Never blocks.
    public func close() {
        notifier.close()
        pool.close()
        readReplicas?.close()
    }

    /// Wake-ups for a change watcher: a connection of its own that `LISTEN`s on this schema's
    /// channel (`depot_changes_` and the schema name, so stores on other schemas never wake it),
    /// where every driver on the schema sends a `NOTIFY` after a write that logged changes
    /// committed (only while a watcher's lease exists, when writers log). Where the server
    /// refuses `LISTEN` (a standby) or cannot be reached, the watcher polls; a lost connection
    /// is reopened at a later wait. Close it before ``close()``: the driver's event loop runs
    /// until it is closed.
    public func changeNotices() -> (any ChangeNotices)? {
        ChangeListener(pool: pool, channel: schema.changeChannel, logger: logger, connectTimeout: configuration.connectTimeout)
    }

    /// Transactions, savepoints, snapshot reads, durable commits, shared by many processes and
    /// hosts.
    public var capabilities: StorageCapabilities { [.transactions, .savepoints, .snapshots, .durable, .multiProcess, .pipelinedReads] }
    /// `postgres://user@host:port/database#schema` (no password).
    public var location: String { configuration.description }

    /// Runs `body` in a `REPEATABLE READ READ ONLY` transaction on a pooled connection: a
    /// standby's when ``PostgresConfiguration/readReplicas`` names any and one is reachable (the
    /// primary's otherwise, and inside ``readingFromPrimary(_:)``). Fails with ``PostgresDriverError/deadlineExceeded(server:timeout:)`` when it has not finished within
    /// ``PostgresConfiguration/callTimeout``.
    public func read<R>(_ body: (any StorageTransaction) throws -> R) throws -> R {
        try read(fromFirstOperation: false, body)
    }

    /// ``read(_:)`` whose snapshot is taken at `body`'s first operation. For a `body` that runs
    /// none of the app's code before it (`Store.retrieve`): a commit made before the call is
    /// seen, as by ``read(_:)``. **`body` may run twice**: first outside a transaction, where
    /// its first statement (a point read, with the epoch read and the connection's read hint)
    /// is its own snapshot and nothing more is sent, not even `COMMIT`; when `body` needs a
    /// second statement, it runs again in a transaction whose `BEGIN` goes with its first one.
    public func readFromFirstOperation<R>(_ body: (any StorageTransaction) throws -> R) throws -> R {
        var again = false
        let single: R? = try withReadSession { session in
            // A chained transaction left on the connection ends first (not waited for).
            if session.chained != nil {
                session.chained = nil
                session.send("COMMIT")
            }
            session.statementBudget = 1
            session.exceededBudget = false
            defer { session.statementBudget = nil }
            let txn = PostgresTransaction(session: session, schema: schema, readOnly: true, firstPage: configuration.firstScanPage,
                                          opening: [], cache: keyspaceCache, stableValues: stableValues)
            do {
                let result = try body(txn)
                txn.finish()
                again = session.exceededBudget
                return again ? nil : result
            } catch {
                txn.finish()
                // Outside a transaction: nothing to roll back.
                if session.exceededBudget {
                    again = true
                    return nil
                }
                throw error
            }
        }
        if !again, let single { return single }
        return try read(fromFirstOperation: true, body)
    }

    private func read<R>(fromFirstOperation: Bool, _ body: (any StorageTransaction) throws -> R) throws -> R {
        try withReadSession { session in
            let txn = begin(session, Self.readCharacteristics, readOnly: true)
            // Otherwise the snapshot is taken now: a commit made after the read began is never
            // seen, whatever the closure does before its first operation.
            if !fromFirstOperation { txn.opened() }
            do {
                let result = try body(txn)
                txn.finish()
                // A transaction that sent nothing yet opens first (not waited for either).
                txn.opened()
                // A read-only commit cannot fail but with the connection, so nobody waits for
                // it; AND CHAIN opens the next transaction (without a snapshot yet), so that the
                // next call on this connection needs no BEGIN.
                session.send("COMMIT AND CHAIN")
                session.chained = .init(characteristics: Self.readCharacteristics, since: .now)
                return result
            } catch {
                txn.finish()
                rollback(session)
                throw error
            }
        }
    }

    /// Runs `body` in a write transaction (see ``PostgresConfiguration/writeIsolation``) and
    /// commits it, then runs the after-commit hooks. **`body` may run more than once**: on a
    /// serialization failure or deadlock, or when the connection was lost before `COMMIT`, the
    /// transaction is rolled back and retried. The call, retries included, ends within
    /// ``PostgresConfiguration/callTimeout``: ``PostgresDriverError/deadlineExceeded(server:timeout:)`` when it
    /// did not get that far, ``PostgresDriverError/commitOutcomeUnknown(server:detail:)`` when `COMMIT` was
    /// sent but not answered.
    public func write<R>(_ body: (any StorageTransaction) throws -> R) throws -> R {
        // A second write on the same thread would wait for a second connection and could block
        // on the first one's row locks forever.
        guard writingThreads.enter() else { throw PostgresDriverError.nestedWrite }
        defer { writingThreads.leave() }

        let deadline = callDeadline()
        var attempt = 0
        var backOff: UInt32 = 0
        // Inserts taken on trust (see Speculation); not again in this call after a miss.
        var speculating = configuration.speculativeInserts
        while true {
            attempt += 1
            // Back off a little (random, growing) before a retry, outside the write slot, so
            // that the writers do not collide again.
            if backOff > 0 { usleep(backOff) }
            var retryState: String?
            var missed = false
            // A slot per attempt (see WriteGate): a write backing off lets the others run.
            guard writeGate.enter(until: Self.date(deadline)) else {
                throw PostgresDriverError.deadlineExceeded(server: configuration.server, timeout: configuration.callTimeout)
            }
            let outcome = Result { () throws -> (R, [() -> Void], UInt64?) in
                try withSession(until: deadline, preferring: writeCharacteristics) { session in
                    let characteristics = writeCharacteristics
                    let txn = begin(session, characteristics, readOnly: false, speculating: speculating)
                    var committing = false
                    do {
                        let result = try body(txn)
                        let handlers = txn.finish()
                        txn.beforeCommit()
                        // A connection known to be gone (a write that waited for nothing yet, on
                        // a pooled connection that died idle): COMMIT never reaches the server,
                        // so the write is retried rather than reported as of unknown outcome.
                        if !session.connection.probe() {
                            throw PostgresDriverError.connectionLost(server: configuration.server, detail: "the connection closed before COMMIT")
                        }
                        committing = true
                        // COMMIT goes out behind the puts not answered yet: one round trip for
                        // both. Every put that fails aborts the transaction (a dropped keyspace
                        // too: see `lockedPut`), and COMMIT then answers ROLLBACK; so does it
                        // after any failure the closure caught. AND CHAIN opens the next transaction
                        // at once (the next call on this connection needs no BEGIN); after a
                        // rollback the catch below ends it.
                        let commit = session.submitAnswering([Statement(prepared: "COMMIT AND CHAIN")]) { $0.command }
                        try txn.flushWrites()
                        guard try txn.run({ try session.wait(commit) }) == "COMMIT" else { throw txn.rolledBack() }
                        txn.settleLoggedStamp()
                        session.chained = .init(characteristics: characteristics, since: .now)
                        session.writeHint = txn.lockedKeyspaces()
                        txn.publishKeyspaces()
                        if txn.prefetchesStamp && txn.loggedStamp == nil { stampHint.wanted = false }
                        if txn.speculated { speculation.held() }
                        return (result, handlers, txn.loggedStamp)
                    } catch {
                        txn.finish()
                        let failure = PostgresDriverError.unwrapping(error)
                        // COMMIT sent and no answer: it may have been applied. Never retried.
                        if committing, let failure, failure.isConnectionLoss || failure.isDeadline {
                            throw PostgresDriverError.commitOutcomeUnknown(server: configuration.server, detail: failure.description)
                        }
                        rollback(session)
                        // An insert taken on trust found its key (the closure may have swallowed
                        // that error too): run again at once, waiting for every insert's answer.
                        if txn.speculationMissed {
                            missed = true
                            throw error
                        }
                        // The closure may have wrapped or swallowed the failure: the transaction
                        // remembers it. A connection lost before COMMIT took the transaction with
                        // it: the write is retried on another connection.
                        if let state = txn.retryableState ?? (failure?.isRetryable == true ? failure?.sqlState : nil) {
                            retryState = state
                        } else if txn.lostConnection || failure?.isConnectionLoss == true {
                            retryState = "08006"
                        }
                        throw error
                    }
                }
            }
            // The slot is free before the hooks run and during the back-off.
            writeGate.leave()
            switch outcome {
            case .success(let (result, handlers, stamp)):
                // After the commit, never in the transaction (see ChangeNotifier); not waited for.
                if let stamp { notifier.committed(stamp: stamp) }
                for handler in handlers { handler() }
                return result
            case .failure(let error):
                if missed {
                    // Not an attempt that failed: the same write, with the answer awaited.
                    speculation.missed()
                    speculating = false
                    attempt -= 1
                    backOff = 0
                    continue
                }
                guard let state = retryState else { throw error }
                if attempt >= configuration.maximumWriteAttempts {
                    throw PostgresDriverError.retriesExhausted(attempts: attempt, sqlState: state)
                }
                retries.add(1)
                backOff = UInt32.random(in: 0...UInt32(min(50_000, 500 << min(attempt, 7))))
                // No retry that could not finish in time: the last failure stands.
                if ContinuousClock.now + .microseconds(backOff) >= deadline { throw error }
            }
        }
    }

    // MARK: - Connections

    /// The characteristics of a read transaction (as `BEGIN` takes them).
    static let readCharacteristics = "ISOLATION LEVEL REPEATABLE READ READ ONLY"

    /// The characteristics of a write transaction (as `BEGIN` takes them).
    /// (String literals: an interpolated string would be built for every write.)
    var writeCharacteristics: String {
        switch configuration.writeIsolation {
        case .readCommitted: "ISOLATION LEVEL READ COMMITTED READ WRITE"
        case .repeatableRead: "ISOLATION LEVEL REPEATABLE READ READ WRITE"
        case .serializable: "ISOLATION LEVEL SERIALIZABLE READ WRITE"
        }
    }

    /// Wraps the session in a transaction. A `READ COMMITTED` write (where every statement takes
    /// a snapshot of its own) sends `BEGIN` and the epoch read with its first statement: a point
    /// read carries them in its own statement. So may a read (``readFromFirstOperation(_:)``,
    /// which also reads the key its connection's last read asked for first, see ``ReadHint``);
    /// ``read(_:)`` sends them at once (not waited for), so that its snapshot is taken when it
    /// begins. A `SERIALIZABLE` or `REPEATABLE READ` write sends them now. On a connection left
    /// in a chained transaction (``PostgresSession/starting(_:)``) no `BEGIN` goes out, or a
    /// `SET TRANSACTION` instead.
    private func begin(_ session: PostgresSession, _ characteristics: String, readOnly: Bool, speculating: Bool = false) -> PostgresTransaction {
        let txn = PostgresTransaction(session: session, schema: schema, readOnly: readOnly, firstPage: configuration.firstScanPage,
                                      opening: session.starting(characteristics), cache: keyspaceCache, stableValues: stableValues, locks: keyLocks,
                                      stampHint: stampHint, speculation: speculating ? speculation : nil)
        if !readOnly && configuration.writeIsolation != .readCommitted { txn.opened() }
        return txn
    }

    /// Leases a connection for the duration of `body`; every wait of the session ends by
    /// `deadline` (now plus the call timeout when nil). The connection goes back to the pool
    /// however `body` ends; a broken one is closed.
    func withSession<R>(until deadline: ContinuousClock.Instant? = nil, preferring characteristics: String? = nil,
                        _ body: (PostgresSession) throws -> R) throws -> R {
        let deadline = deadline ?? callDeadline()
        return try withLease(try pool.lease(until: Self.date(deadline), preferring: characteristics), from: pool, until: deadline, body)
    }

    /// Runs `body` on a session over `lease`, then gives the connection back to `pool` (closed
    /// when broken).
    func withLease<R>(_ lease: ConnectionPool.Lease, from pool: ConnectionPool, until deadline: ContinuousClock.Instant,
                      _ body: (PostgresSession) throws -> R) rethrows -> R {
        let session = PostgresSession(lease: lease, logger: logger, server: pool.server,
                                      deadline: deadline, timeout: configuration.callTimeout)
        defer {
            session.discardHeld()
            session.settle()
            var returned = lease
            returned.chained = session.chained
            returned.readHint = session.readHint
            returned.writeHint = session.writeHint
            returned.statementsSent += session.sent
            pool.give(back: returned, reusable: !session.isBroken)
        }
        return try body(session)
    }

    /// Now plus the call timeout.
    func callDeadline() -> ContinuousClock.Instant {
        .now + configuration.callTimeout
    }

    /// `instant` as a wall-clock date (for condition waits).
    static func date(_ instant: ContinuousClock.Instant) -> Date {
        let remaining = instant - .now
        return Date().addingTimeInterval(Double(remaining.components.seconds) + Double(remaining.components.attoseconds) / 1e18)
    }

    /// Rolls back; a connection that cannot (or that already failed) is dropped, and closing it
    /// rolls the transaction back on the server.
    private func rollback(_ session: PostgresSession) {
        guard !session.isBroken else { return }
        do {
            try session.execute("ROLLBACK")
        } catch {
            session.abandon()
        }
    }

    /// Creates the schema and tables (under an advisory lock, so concurrent first starts agree).
    /// On a standby (a streaming replica, read-only) nothing is created: the tables come from
    /// the primary, and the driver serves reads (writes fail with the server's SQLSTATE 25006).
    /// When the tables are there already, nothing is sent that needs more than `USAGE` on the
    /// schema (a role that may only read opens the store); when they are not, and the
    /// configuration does not create them (``PostgresConfiguration/createsSchema``), opening
    /// fails with ``PostgresDriverError/noStore(server:schema:)`` and nothing is created.
    private func setUp() throws {
        try withSession { session in
            session.leaveChained()
            let tables = try session.integers(
                "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = $1::text AND tablename IN ('keyspaces', 'entries', 'multi', 'epoch')",
                .of(configuration.schema))
            if tables.first == 4 { return }
            if !configuration.createsSchema { throw PostgresDriverError.noStore(server: configuration.server, schema: configuration.schema) }
            if try session.integers("SELECT pg_is_in_recovery()::int::bigint").first == 1 { return }
            try session.execute("BEGIN")
            do {
                try session.execute("SELECT pg_advisory_xact_lock($1)", .of(PostgresSchema.setupLockKey))
                for statement in schema.setupStatements { try session.execute(statement) }
                try session.execute("COMMIT")
            } catch {
                rollback(session)
                throw error
            }
        }
    }

    /// postgres-nio's connection settings, for the change notices' connections (TLS contexts are
    /// built here: a bad root certificate file is a configuration error, for libpq's too).
    static func connectionConfiguration(_ config: PostgresConfiguration,
                                        endpoint: PostgresConfiguration.Endpoint) throws -> PostgresConnection.Configuration {
        var result: PostgresConnection.Configuration
        if endpoint.host.hasPrefix("/") {
            result = .init(unixSocketPath: "\(endpoint.host)/.s.PGSQL.\(endpoint.port)", username: config.username,
                           password: config.password, database: config.database)
        } else {
            let tls: PostgresConnection.Configuration.TLS
            do {
                var unchecked = TLSConfiguration.makeClientConfiguration()
                unchecked.certificateVerification = .none
                switch config.tls {
                case .disable: tls = .disable
                case .prefer: tls = .prefer(try NIOSSLContext(configuration: unchecked))
                case .require: tls = .require(try NIOSSLContext(configuration: unchecked))
                case .verifyFull:
                    var verified = TLSConfiguration.makeClientConfiguration()
                    if let path = config.rootCertificatePath {
                        guard FileManager.default.isReadableFile(atPath: path) else {
                            throw PostgresDriverError.invalidConfiguration("the root certificates file '\(path)' (sslrootcert) cannot be read")
                        }
                        verified.trustRoots = .file(path)
                    }
                    tls = .require(try NIOSSLContext(configuration: verified))
                }
            } catch let error as PostgresDriverError {
                throw error
            } catch {
                let roots = config.rootCertificatePath.map { " from '\($0)' (sslrootcert)" } ?? ""
                throw PostgresDriverError.invalidConfiguration("TLS setup failed: the root certificates\(roots) could not be loaded (\(String(describing: type(of: error))))")
            }
            result = .init(host: endpoint.host, port: endpoint.port, username: config.username,
                           password: config.password, database: config.database, tls: tls)
        }
        let (seconds, attoseconds) = config.connectTimeout.components
        result.options.connectTimeout = .nanoseconds(max(1, min(max(seconds, 0), 86_400 * 365) * 1_000_000_000 + attoseconds / 1_000_000_000))
        result.options.additionalStartupParameters = sessionSettings(config)
        return result
    }

    /// libpq's connection parameters for `endpoint` (keyword, value): the server, the
    /// credentials, TLS as ``PostgresConfiguration/tls`` says, TCP keepalive from the client
    /// too, and ``sessionSettings(_:)`` as the session's options. The connect deadline is the
    /// pool's own (``ConnectionPool``), not libpq's `connect_timeout`.
    static func libpqParameters(_ config: PostgresConfiguration, endpoint: PostgresConfiguration.Endpoint) -> [(String, String)] {
        var parameters: [(String, String)] = [("host", endpoint.host), ("port", String(endpoint.port)), ("user", config.username)]
        if let password = config.password { parameters.append(("password", password)) }
        if let database = config.database { parameters.append(("dbname", database)) }
        parameters.append(("sslmode", config.tls.rawValue))
        if config.tls == .verifyFull, let roots = config.rootCertificatePath ?? systemRootCertificates() {
            parameters.append(("sslrootcert", roots))
        }
        parameters += [("gssencmode", "disable"), ("keepalives", "1"), ("keepalives_idle", "10"),
                       ("keepalives_interval", "5"), ("keepalives_count", "3"),
                       ("options", sessionSettings(config).map { "-c \($0.0)=\($0.1)" }.joined(separator: " "))]
        return parameters
    }

    /// The system's trusted roots for `verify-full` without a root file of its own: libpq 16
    /// and later know them as `system`; older ones are given the distribution's bundle.
    static func systemRootCertificates() -> String? {
        if PQlibVersion() >= 160_000 { return "system" }
        return ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"]
            .first { FileManager.default.isReadableFile(atPath: $0) }
    }

    /// Settings sent when a connection starts: no statement runs past the call timeout (the
    /// server cancels it even when the client is gone), and the server probes idle
    /// connections (TCP keepalive after 10 s idle, every 5 s, 3 probes) so that the sessions of
    /// a client host that vanished end and release their locks.
    static func sessionSettings(_ config: PostgresConfiguration) -> [(String, String)] {
        let (seconds, attoseconds) = config.callTimeout.components
        let milliseconds = max(1, min(seconds, 86_400) * 1000 + attoseconds / 1_000_000_000_000_000)
        return [("statement_timeout", String(milliseconds)), ("tcp_keepalives_idle", "10"),
                ("tcp_keepalives_interval", "5"), ("tcp_keepalives_count", "3")]
    }
}

extension PostgresDriver {
    /// Deletes the driver's schema with every keyspace in it (for tests and teardown).
    func dropSchema() throws {
        try withSession { session in
            session.leaveChained()
            try session.execute("DROP SCHEMA IF EXISTS \(schema.quoted) CASCADE") }
    }
}
#endif

import Depot
import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Synchronization

/// A ``StorageDriver`` over PostgreSQL, for several hosts sharing one store: give it to
/// `Store(driver:)` and documents, indexes, queries, aliases, unique IDs and change sets work
/// as on LMDB.
///
/// - Keyspaces are rows of tables in one schema (see ``PostgresConfiguration/schema``); keys
///   and values are `bytea`, always bound as parameters, and sort as on LMDB.
/// - Reads are `REPEATABLE READ READ ONLY` transactions (one snapshot).
/// - Writes are `SERIALIZABLE` (or `REPEATABLE READ`) transactions. **A write closure may run
///   more than once**: when PostgreSQL reports a serialization failure (40001) or a deadlock
///   (40P01) the transaction is rolled back and the closure runs again, up to
///   ``PostgresConfiguration/maximumWriteAttempts`` times. Keep side effects out of it; use
///   after-commit hooks, which run once, after `COMMIT` returned.
/// - Savepoints are SQL savepoints; scans fetch pages (16 rows first, then more) so that a scan
///   stopped early reads little.
///
/// Threads: the protocol is synchronous, so each call blocks the calling thread while the
/// async PostgreSQL client (postgres-nio's `PostgresClient` pool) works on the driver's own
/// thread and event loop — never on Swift's cooperative pool, so statements and connection
/// leases complete even when every cooperative thread is blocked in the driver. Two things do
/// use the global executor: the pool's timers (reconnect back-off, idle close, keep-alive) and
/// its shutdown. If every cooperative thread is blocked in the driver while a reconnect is
/// needed, the call fails after ``PostgresConfiguration/connectTimeout`` instead of hanging.
/// Best: call the driver (the `Store`) from threads of your own, not from async tasks.
public final class PostgresDriver: StorageDriver {
    /// The configuration the driver connected with.
    public let configuration: PostgresConfiguration
    let schema: PostgresSchema
    private let client: PostgresClient
    private let bridge: BlockingBridge
    private let group: MultiThreadedEventLoopGroup
    private let logger: Logger
    private let runTask: Task<Void, Never>
    private let closed = Mutex(false)

    /// Connects (lazily, through a pool) and creates the schema and tables when missing.
    /// - Parameter logger: where postgres-nio logs (warnings and above by default; it never
    ///   logs passwords).
    public init(configuration: PostgresConfiguration, logger: Logger? = nil) throws {
        self.configuration = configuration
        schema = try PostgresSchema(name: configuration.schema)
        self.logger = logger ?? {
            var logger = Logger(label: "depot.postgres")
            logger.logLevel = .warning
            return logger
        }()
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        client = PostgresClient(configuration: Self.clientConfiguration(configuration), eventLoopGroup: group,
                                backgroundLogger: self.logger)
        bridge = BlockingBridge(name: "depot.postgres")
        runTask = bridge.start { [client] in await client.run() }
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

    /// Closes the pool's connections. Later calls throw ``PostgresDriverError/closed``.
    public func close() {
        let first = closed.withLock { wasClosed in
            defer { wasClosed = true }
            return !wasClosed
        }
        guard first else { return }
        // Never block here: the pool's shutdown can need Swift's global executor (its timers
        // run there), and the caller may be one of its threads. The bridge thread ends, and the
        // event loop shuts down, once the pool has closed its connections.
        runTask.cancel()
        let runTask = runTask, bridge = bridge, group = group
        bridge.start {
            await runTask.value
            bridge.stop()
            group.shutdownGracefully { _ in }
        }
    }

    /// Transactions, savepoints, snapshot reads, durable commits, shared by many processes and
    /// hosts.
    public var capabilities: StorageCapabilities { [.transactions, .savepoints, .snapshots, .durable, .multiProcess] }
    /// `postgres://user@host:port/database#schema` (no password).
    public var location: String { configuration.description }

    /// Runs `body` in a `REPEATABLE READ READ ONLY` transaction on a pooled connection.
    public func read<R>(_ body: (any StorageTransaction) throws -> R) throws -> R {
        try withSession { session in
            try session.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            let txn = PostgresTransaction(session: session, schema: schema, readOnly: true, firstPage: configuration.firstScanPage)
            do {
                let result = try body(txn)
                txn.finish()
                try session.execute("COMMIT")
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
    /// serialization failure or deadlock the transaction is rolled back and retried.
    public func write<R>(_ body: (any StorageTransaction) throws -> R) throws -> R {
        // A second write on the same thread would wait for a second connection and could block
        // on the first one's row locks forever.
        let marker = "depot.postgres.write.\(ObjectIdentifier(self).hashValue)"
        let threadState = Thread.current.threadDictionary
        if threadState[marker] != nil { throw PostgresDriverError.nestedWrite }
        threadState[marker] = true
        defer { threadState.removeObject(forKey: marker) }

        var attempt = 0
        while true {
            attempt += 1
            var retryState: String?
            do {
                let (result, handlers) = try withSession { session -> (R, [() -> Void]) in
                    try session.execute("BEGIN ISOLATION LEVEL \(configuration.writeIsolation.rawValue)")
                    let txn = PostgresTransaction(session: session, schema: schema, readOnly: false, firstPage: configuration.firstScanPage)
                    do {
                        let result = try body(txn)
                        txn.finish()
                        try session.execute("COMMIT")
                        return (result, txn.handlers)
                    } catch {
                        txn.finish()
                        rollback(session)
                        // The closure may have wrapped or swallowed the failure: the transaction
                        // remembers it.
                        retryState = txn.retryableState ?? ((error as? PostgresDriverError)?.isRetryable == true ? (error as? PostgresDriverError)?.sqlState : nil)
                        throw error
                    }
                }
                for handler in handlers { handler() }
                return result
            } catch {
                guard let state = retryState else { throw error }
                if attempt >= configuration.maximumWriteAttempts {
                    throw PostgresDriverError.retriesExhausted(attempts: attempt, sqlState: state)
                }
                // Back off a little (random, growing) so that the writers do not collide again.
                usleep(UInt32.random(in: 0...UInt32(min(50_000, 500 << min(attempt, 7)))))
            }
        }
    }

    // MARK: - Connections

    /// Leases a connection for the duration of `body`.
    func withSession<R>(_ body: (PostgresSession) throws -> R) throws -> R {
        if closed.withLock({ $0 }) { throw PostgresDriverError.closed }
        let handoff = ConnectionHandoff()
        let task = bridge.start { [client] in
            do {
                try await client.withConnection { connection in await handoff.hold(connection) }
            } catch {
                handoff.fail(error)
            }
        }
        let (seconds, attoseconds) = configuration.connectTimeout.components
        let deadline = Date().addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
        let connection: PostgresConnection?
        do {
            connection = try handoff.wait(until: deadline)
        } catch {
            throw PostgresDriverError.connectionUnavailable(server: configuration.server, detail: PostgresSession.map(error, server: configuration.server).description)
        }
        guard let connection else {
            task.cancel()
            throw PostgresDriverError.connectionUnavailable(server: configuration.server, detail: "no connection within \(seconds) s")
        }
        defer { handoff.release() }
        return try body(PostgresSession(connection: connection, bridge: bridge, logger: logger, server: configuration.server))
    }

    /// Rolls back; a connection that cannot is closed so that the pool drops it.
    private func rollback(_ session: PostgresSession) {
        do {
            try session.execute("ROLLBACK")
        } catch {
            let connection = session.connection
            _ = try? bridge.run { try await connection.close() }
        }
    }

    /// Creates the schema and tables (under an advisory lock, so concurrent first starts agree).
    private func setUp() throws {
        try withSession { session in
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

    static func clientConfiguration(_ config: PostgresConfiguration) -> PostgresClient.Configuration {
        var result: PostgresClient.Configuration
        if config.host.hasPrefix("/") {
            result = .init(unixSocketPath: "\(config.host)/.s.PGSQL.\(config.port)", username: config.username,
                           password: config.password, database: config.database)
        } else {
            var unchecked = TLSConfiguration.makeClientConfiguration()
            unchecked.certificateVerification = .none
            let tls: PostgresClient.Configuration.TLS
            switch config.tls {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(unchecked)
            case .require: tls = .require(unchecked)
            case .verifyFull:
                var verified = TLSConfiguration.makeClientConfiguration()
                if let path = config.rootCertificatePath { verified.trustRoots = .file(path) }
                tls = .require(verified)
            }
            result = .init(host: config.host, port: config.port, username: config.username,
                           password: config.password, database: config.database, tls: tls)
        }
        result.options.maximumConnections = max(1, config.maximumConnections)
        result.options.connectTimeout = config.connectTimeout
        return result
    }
}

extension PostgresDriver {
    /// Deletes the driver's schema with every keyspace in it (for tests and teardown).
    func dropSchema() throws {
        try withSession { session in try session.execute("DROP SCHEMA IF EXISTS \(schema.quoted) CASCADE") }
    }
}

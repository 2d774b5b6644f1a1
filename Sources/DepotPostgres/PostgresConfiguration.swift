#if Postgres
import Foundation

/// Where and how ``PostgresDriver`` connects. Build one directly, from a URL
/// (``init(url:environment:)``) or from the standard `PG*` environment variables
/// (``fromEnvironment(_:)``). The password is never part of ``description`` or of any error.
public struct PostgresConfiguration: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// How the connection is encrypted, as libpq's `sslmode`.
    public enum TLSMode: String, Sendable, CaseIterable {
        /// Plain TCP.
        case disable
        /// TLS when the server offers it, without certificate checks.
        case prefer
        /// TLS required, without certificate checks (libpq's `require`).
        case require
        /// TLS required; the certificate must chain to a trusted root and name the host.
        case verifyFull = "verify-full"
    }

    /// How concurrent writers are isolated.
    public enum WriteIsolation: String, Sendable {
        /// READ COMMITTED with two-phase key locks held until the transaction ends (the
        /// default): a read takes a shared lock on its key (present or absent), a write an
        /// exclusive one, a scan an exclusive lock on its keyspace. Every read-then-write of the
        /// document layer (unique indexes, revisions, counters, delete rules) behaves as if
        /// writers ran one at a time, and two writes that touch different keys never wait for
        /// or fail each other. Two writes that read and then write the same key can deadlock;
        /// PostgreSQL cancels one (40P01) and it is retried.
        case readCommitted = "READ COMMITTED"
        /// SERIALIZABLE: also serializable, but PostgreSQL tracks reads with predicate locks on
        /// B-tree pages, so writes of *different* documents whose keys share a page cancel each
        /// other (40001) and are retried; set ``maximumConcurrentWrites`` to 1 with it.
        case serializable = "SERIALIZABLE"
        /// REPEATABLE READ: fewer retries, but write skew between writers is possible.
        case repeatableRead = "REPEATABLE READ"
    }

    /// Host name or address; a path starting with "/" is a folder holding the server's socket.
    public var host: String
    /// TCP port (also names the socket file in a socket folder).
    public var port: Int
    /// Role to log in as.
    public var username: String
    /// Password, if the server asks for one. Never printed.
    public var password: String?
    /// Database name (the user name when nil, as libpq).
    public var database: String?
    /// Schema holding the driver's tables (created when missing): several stores can share a
    /// database under different schemas.
    public var schema: String
    /// Encryption.
    public var tls: TLSMode
    /// PEM file of trusted roots for ``TLSMode/verifyFull`` (the system's when nil).
    public var rootCertificatePath: String?
    /// Most connections the pool opens (default 16); calls beyond it wait for a connection,
    /// within their deadline.
    ///
    /// Size it to what the server runs well at once, not to the number of callers: each
    /// connection is a server process, and more transactions in flight than the server has
    /// cores for cost it more per commit. On a 2-core server, 64 writer threads committed
    /// 0.40–0.46× pgbench's rate through the default 16 connections and 0.30–0.35× with a
    /// connection each (`depot-postgres-bench compare`, 2026-12-07). Processes or hosts
    /// sharing one server share its budget: 4 processes of 16 writers did better with 4
    /// connections each than with 16 each.
    public var maximumConnections: Int
    /// Event loop threads that serve a change watcher's `LISTEN` connection (the driver's
    /// statements run on the calling threads, its change notices on a thread of their own).
    /// nil, the default: one.
    public var eventLoopThreads: Int?
    /// How long to wait for a connection before failing: the host name's resolution included;
    /// when the name has several addresses, each tried in turn waits for the server's first
    /// answer for its share of the time left (a server that answered keeps the rest).
    public var connectTimeout: Duration
    /// The deadline of every driver call (a read, a write with its retries, the set-up): a call
    /// that has not finished by then fails with ``PostgresDriverError/deadlineExceeded(server:timeout:)`` (or
    /// ``PostgresDriverError/commitOutcomeUnknown(server:detail:)`` when `COMMIT` was on its way) and its
    /// connection is closed, so that no call waits forever on a server that stopped answering.
    /// Also sent to the server as `statement_timeout`. Default 30 seconds; at least 1
    /// millisecond and at most a day (see ``validate()``).
    public var callTimeout: Duration
    /// Whether opening creates the schema and Depot's tables in it when they are missing
    /// (default true). False for a reader: opening a schema without a store then fails with
    /// ``PostgresDriverError/noStore(server:schema:)`` instead of creating an empty store (a
    /// mistyped schema name is an error, not an empty store left behind). Opening a schema that
    /// holds a store never creates anything, so a role with only `USAGE` on the schema and
    /// `SELECT` on its tables can read it.
    public var createsSchema = true
    /// Isolation of write transactions.
    public var writeIsolation: WriteIsolation
    /// Most times a write runs when it keeps hitting serialization failures or deadlocks.
    public var maximumWriteAttempts: Int
    /// Most write transactions of this driver that run at once (default 1024: no limit but the
    /// pool's); more writers wait on the client, before they take a connection, until their
    /// call's deadline. With ``WriteIsolation/serializable``, overlapping Depot writes cancel
    /// each other on PostgreSQL's page-level predicate locks even when they touch different
    /// documents, so set 1 there: queueing them is cheaper than retrying them. Writers of other
    /// drivers and hosts are not limited.
    public var maximumConcurrentWrites: Int
    /// Rows fetched by the first page of a scan (later pages double, up to 1024).
    public var firstScanPage: Int
    /// Servers tried after ``host``:``port``, in order, when a new connection is opened (the
    /// URL form is libpq's: `postgres://user@h1:5432,h2:5433/db`). With ``targetSession`` set
    /// to ``TargetSession/readWrite`` or ``TargetSession/primary``, a standby is passed over,
    /// so after a failover new connections reach the promoted server; connections to a server
    /// that went away fail and are dropped by the pool.
    public var alternateHosts: [Endpoint]
    /// Which server a new connection must reach (`target_session_attrs`; ``TargetSession/any``
    /// by default). Checked once per new connection, with one query.
    public var targetSession: TargetSession
    /// Standbys that serve ``PostgresDriver/read(_:)`` (none by default: reads go to the
    /// primary). When set, reads run on a connection pool of their own over these servers (a
    /// new connection tries them in turn, starting at a different one each time); writes, the
    /// set-up and change notices stay on ``host`` and ``alternateHosts``. A read that finds no
    /// standby reachable runs on the primary. In a URL: `read_replicas=h1:5432,h2:5433`. See
    /// ``PostgresDriver/readingFromPrimary(_:)`` for reads that must see the caller's writes.
    public var readReplicas: [Endpoint]
    /// Whether each connection prepares the driver's fixed statements (point reads, puts, key
    /// locks, `BEGIN`) under names, so that the server parses and plans each once per
    /// connection rather than at every use (true by default). Set false behind a pooler that
    /// hands each transaction a different server connection (PgBouncer's transaction mode
    /// without prepared-statement support), where a name prepared on one connection is
    /// unknown on the next. In a URL: `prepare_statements=false`.
    public var preparesStatements: Bool
    /// Whether a new document's insert under ``WriteIsolation/readCommitted`` is sent with the
    /// write's `COMMIT` instead of waiting for its answer first (true by default): a write of
    /// new documents then costs one round trip. When the document was stored after all (a park
    /// of an existing one, an update), the insert fails on the server, the transaction rolls
    /// back and the write closure runs again, waiting for the answer this time (counted in
    /// ``PostgresDriver/speculationMisses``; after a miss the driver waits for the next inserts'
    /// answers for a while). No commit ever acts on a wrong answer. In a URL:
    /// `speculative_inserts=false`.
    public var speculativeInserts: Bool

    /// A configuration with libpq's defaults for what is not given.
    public init(host: String = "localhost", port: Int = 5432, username: String, password: String? = nil,
                database: String? = nil, schema: String = "depot", tls: TLSMode = .prefer) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.schema = schema
        self.tls = tls
        self.rootCertificatePath = nil
        self.maximumConnections = 16
        self.eventLoopThreads = nil
        self.connectTimeout = .seconds(10)
        self.callTimeout = .seconds(30)
        self.writeIsolation = .readCommitted
        self.maximumWriteAttempts = 20
        self.maximumConcurrentWrites = 1024
        self.firstScanPage = 16
        self.alternateHosts = []
        self.preparesStatements = true
        self.speculativeInserts = true
        self.targetSession = .any
        self.readReplicas = []
    }

    /// A configuration from the standard variables `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`,
    /// `PGDATABASE`, `PGSSLMODE` and `PGSSLROOTCERT` (libpq's defaults for those unset; the user
    /// defaults to `USER`).
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PostgresConfiguration {
        let user = environment["PGUSER"] ?? environment["USER"] ?? "postgres"
        var config = PostgresConfiguration(username: user, password: environment["PGPASSWORD"], database: environment["PGDATABASE"])
        try config.apply(environment: environment)
        return config
    }

    /// A configuration from a URL `postgres://user:password@host:port/database?sslmode=…&schema=…`
    /// (`postgresql://` too); parts missing from the URL come from the `PG*` variables of
    /// `environment`, as libpq does. User and password may be percent-encoded.
    public init(url: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        self = try PostgresConfiguration.fromEnvironment(environment)
        let (url, others) = try Self.splitHosts(url)
        alternateHosts = others
        guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
            throw PostgresDriverError.invalidConfiguration("the URL must start with postgres:// or postgresql://")
        }
        // (A URL that starts right but does not parse: a port that is no number, an unclosed
        // bracket; the text is not repeated, it may hold a password.)
        guard let parts = URLComponents(string: url), parts.scheme != nil else {
            throw PostgresDriverError.invalidConfiguration("the URL does not parse: check the host, the port (a number) and the brackets of an IPv6 address")
        }
        if let user = parts.user, !user.isEmpty { username = user }
        if let password = parts.password { self.password = password }
        if let host = parts.host, !host.isEmpty { self.host = host }
        if let port = parts.port { self.port = port }
        let path = parts.path.hasPrefix("/") ? String(parts.path.dropFirst()) : parts.path
        if !path.isEmpty { database = path }
        var seen = Set<String>()
        for item in parts.queryItems ?? [] {
            // A parameter given twice is a mistake that one of them would hide.
            guard seen.insert(item.name).inserted else {
                throw PostgresDriverError.invalidConfiguration("the URL parameter '\(item.name)' is given more than once")
            }
            let value = item.value ?? ""
            switch item.name {
            case "sslmode": tls = try Self.tlsMode(value)
            case "sslrootcert": rootCertificatePath = value
            case "schema": schema = value
            case "host": host = value
            case "target_session_attrs": targetSession = try Self.targetSession(value)
            case "read_replicas": readReplicas = try Self.replicaList(value)
            case "prepare_statements": preparesStatements = try Self.flag(value, named: item.name)
            case "speculative_inserts": speculativeInserts = try Self.flag(value, named: item.name)
            case "connect_timeout":
                guard let seconds = Int(value), seconds > 0 else { throw PostgresDriverError.invalidConfiguration("connect_timeout must be a positive number of seconds") }
                connectTimeout = .seconds(seconds)
            case "call_timeout":
                guard let seconds = Double(value), seconds > 0, seconds <= 86_400 else {
                    throw PostgresDriverError.invalidConfiguration("call_timeout must be a number of seconds above 0 and at most 86400")
                }
                callTimeout = .milliseconds(max(1, Int64(seconds * 1000)))
            default: throw PostgresDriverError.invalidConfiguration("unknown URL parameter '\(item.name)'")
            }
        }
    }

    /// Checks the limits: ``callTimeout`` and ``connectTimeout`` above zero and at most a day,
    /// ``maximumConnections``, ``maximumConcurrentWrites``, ``maximumWriteAttempts`` and
    /// ``firstScanPage`` at least 1, ``eventLoopThreads`` (when set) from 1 to 64, every one of ``readReplicas`` with a host and a port from 1
    /// to 65535. ``PostgresDriver`` calls it before connecting.
    /// - Throws: ``PostgresDriverError/invalidConfiguration(_:)`` naming the setting.
    public func validate() throws {
        let day = Duration.seconds(86_400)
        guard callTimeout >= .milliseconds(1), callTimeout <= day else {
            throw PostgresDriverError.invalidConfiguration("callTimeout must be at least 1 ms and at most a day")
        }
        guard connectTimeout >= .milliseconds(1), connectTimeout <= day else {
            throw PostgresDriverError.invalidConfiguration("connectTimeout must be at least 1 ms and at most a day")
        }
        for (name, value) in [("maximumConnections", maximumConnections), ("maximumConcurrentWrites", maximumConcurrentWrites),
                              ("maximumWriteAttempts", maximumWriteAttempts), ("firstScanPage", firstScanPage)] where value < 1 {
            throw PostgresDriverError.invalidConfiguration("\(name) must be at least 1")
        }
        if let threads = eventLoopThreads, !(1...64).contains(threads) {
            throw PostgresDriverError.invalidConfiguration("eventLoopThreads must be from 1 to 64")
        }
        try validateReadReplicas()
    }

    private mutating func apply(environment: [String: String]) throws {
        if let host = environment["PGHOST"], !host.isEmpty { self.host = host }
        if let text = environment["PGPORT"], !text.isEmpty {
            guard let port = Int(text), (1...65535).contains(port) else { throw PostgresDriverError.invalidConfiguration("PGPORT is not a port number") }
            self.port = port
        }
        if let mode = environment["PGSSLMODE"], !mode.isEmpty { tls = try Self.tlsMode(mode) }
        if let root = environment["PGSSLROOTCERT"], !root.isEmpty { rootCertificatePath = root }
    }

    /// A URL parameter that is on or off.
    private static func flag(_ text: String, named name: String) throws -> Bool {
        switch text {
        case "true", "on", "1": return true
        case "false", "off", "0": return false
        default: throw PostgresDriverError.invalidConfiguration("\(name) must be true or false")
        }
    }

    private static func tlsMode(_ text: String) throws -> TLSMode {
        switch text {
        case "disable", "allow": return .disable
        case "prefer": return .prefer
        case "require": return .require
        // verify-ca is made stricter, not weaker: the host name is checked too.
        case "verify-ca", "verify-full": return .verifyFull
        default: throw PostgresDriverError.invalidConfiguration("unknown sslmode '\(text)'")
        }
    }

    /// The server, for messages: `user@host:port/database` (no password); several hosts are
    /// separated by commas.
    public var server: String {
        "\(username)@\(endpoints.map { "\($0.host):\($0.port)" }.joined(separator: ","))/\(database ?? username)"
    }

    /// The server and schema, for messages (no password).
    public var description: String { "postgres://\(server)#\(schema)" }

    /// The same as ``description``: `debugPrint` and string interpolation in logs never show the
    /// password.
    public var debugDescription: String { description }

    /// A mirror without the password (for `dump` and debuggers).
    public var customMirror: Mirror {
        Mirror(self, children: ["server": server, "schema": schema, "tls": tls.rawValue,
                                "password": password == nil ? "none" : "<hidden>"])
    }
}
#endif

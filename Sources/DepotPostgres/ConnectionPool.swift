#if Postgres
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// The driver's connections: at most `maximum` libpq connections (``LibPQConnection``), opened
/// when needed and reused. A caller leases one for a transaction (blocking, with a deadline,
/// when all are busy) and gives it back; a connection that failed or closed is dropped and
/// replaced later. The leasing thread does the connection's I/O itself: no hand-off to another
/// thread, never through Swift's cooperative pool.
///
/// Connections of their own for change notices (``openSide(until:settings:)``: `LISTEN` and
/// `NOTIFY`, which wait for the server's messages) are postgres-nio's, on an event loop group of
/// the pool's (``PostgresConfiguration/eventLoopThreads``, by default one thread).
///
/// Its variables are `@exclusivity(unchecked)`: they are read and written only under its lock,
/// which the run-time exclusivity checks (per thread) add nothing to.
final class ConnectionPool: @unchecked Sendable {
    /// A leased connection, and the transaction `COMMIT AND CHAIN` left it in, if any (see
    /// ``PostgresSession/chained``).
    struct Lease: Sendable {
        let connection: LibPQConnection
        var chained: PostgresSession.Chained?
        /// The key the connection's next read transaction reads with its epoch.
        var readHint: ReadHint?
        /// The keyspaces the connection's next write locks first.
        var writeHint: WriteHint?
        /// How many statements were handed to the connection (for tests).
        var statementsSent = 0

        /// Whether the connection can still serve statements.
        var isUsable: Bool { connection.isUsable }
    }

    // @unchecked Sendable: the mutable state is guarded by `condition`; the rest is immutable.
    private let condition = NSCondition()
    @exclusivity(unchecked) private var idle: [Lease] = []
    @exclusivity(unchecked) private var open = 0
    /// Connections of their own (``openSide(until:settings:)``), not leased: the event loop
    /// stops only after they closed too.
    @exclusivity(unchecked) private var sideOpen = 0
    @exclusivity(unchecked) private var nextID = 0
    @exclusivity(unchecked) private var closed = false
    @exclusivity(unchecked) private var groupShutDown = false
    /// Callers waiting for a connection to be given back.
    @exclusivity(unchecked) private var waiters = 0

    let maximum: Int
    let group: MultiThreadedEventLoopGroup
    /// The group's event loops; connection `id` lives on `loops[id % loops.count]`.
    private let loops: [any EventLoop]
    /// The first loop (where closing is coordinated).
    let eventLoop: any EventLoop
    /// The servers, tried in order for each new connection: libpq's connection parameters.
    let endpoints: [[(String, String)]]
    /// The same servers for postgres-nio's side connections.
    let configurations: [PostgresConnection.Configuration]
    let target: PostgresConfiguration.TargetSession
    let logger: Logger
    let server: String
    /// Whether each new connection starts at a different server (read replicas share the
    /// reads) rather than at the first (failover order).
    let rotating: Bool
    /// Whether connections prepare the driver's fixed statements (see ``PreparedStatements``).
    let preparesStatements: Bool
    /// What the servers' certificates are checked against, for TLS errors (see
    /// ``PostgresDriverError/tlsTrust(rootCertificatePath:)``).
    let tlsTrust: String
    /// How long opening one connection may take (within the call's deadline).
    let connectTimeout: Duration

    init(endpoints: [[(String, String)]], configurations: [PostgresConnection.Configuration], target: PostgresConfiguration.TargetSession,
         maximum: Int, server: String, logger: Logger, rotating: Bool = false, loopThreads: Int? = nil,
         preparesStatements: Bool = true, connectTimeout: Duration = .seconds(10), tlsTrust: String = PostgresDriverError.tlsTrust(rootCertificatePath: nil)) {
        self.endpoints = endpoints
        self.connectTimeout = connectTimeout
        self.configurations = configurations
        self.tlsTrust = tlsTrust
        self.preparesStatements = preparesStatements
        self.rotating = rotating
        self.target = target
        self.maximum = max(1, maximum)
        self.server = server
        self.logger = logger
        group = MultiThreadedEventLoopGroup(numberOfThreads: loopThreads.map { max(1, $0) } ?? 1)
        loops = group.makeIterator().map { $0 }
        eventLoop = loops.first ?? group.next()
    }

    /// How many callers wait for a busy connection now (tests wait for a waiter with it).
    var waitingCallers: Int { condition.withLock { waiters } }

    /// How many statements the idle connections were handed (for tests: with one connection,
    /// a write's statements are the difference before and after it).
    var idleStatementsSent: Int { condition.withLock { idle.reduce(0) { $0 + $1.statementsSent } } }

    /// How often the idle connections waited for answers after sending (for tests, as
    /// ``idleStatementsSent``).
    var idleRoundTrips: Int { condition.withLock { idle.reduce(0) { $0 + $1.connection.roundTrips } } }
    /// How many `Sync` messages the idle connections sent (for tests, as ``idleStatementsSent``).
    var idleSyncs: Int { condition.withLock { idle.reduce(0) { $0 + $1.connection.syncs } } }

    /// How many statement groups the idle connections sent and did not read the answers of
    /// (for tests: they must not pile up).
    var idleUnreadGroups: Int { condition.withLock { idle.reduce(0) { $0 + $1.connection.unreadCount } } }

    /// Whether the calling thread is one of the pool's event loops (which must never block).
    var isEventLoopThread: Bool { loops.contains { $0.inEventLoop } }

    /// A new connection that could not be opened by a ``lease(until:connectingUntil:)`` given
    /// its own connect deadline (a standby's pool: see ``ReadReplicas``), apart from all
    /// connections staying busy.
    struct ConnectFailure: Error {
        let error: any Error
    }

    /// A connection: an idle one, a new one, or the first one given back before `deadline`.
    /// With `connectDeadline`, a new connection must open by then, and its failure is thrown
    /// as ``ConnectFailure``. Among the most recently returned idle connections, one left in a
    /// chained transaction with `characteristics` (see ``PostgresSession/chained``) is taken
    /// first: a write then finds a write's chain and a read a read's, and neither needs a
    /// `SET TRANSACTION`.
    func lease(until deadline: Date, connectingUntil connectDeadline: Date? = nil, preferring characteristics: String? = nil) throws -> Lease {
        if isEventLoopThread { throw PostgresDriverError.calledFromDriverThread }
        let id: Int
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw PostgresDriverError.closed
            }
            if let characteristics, let index = idle.indices.reversed().prefix(Self.preferenceWindow)
                .first(where: { idle[$0].chained?.characteristics == characteristics }) {
                idle.swapAt(index, idle.count - 1)
            }
            if let lease = idle.popLast() {
                // Checked without waiting, outside the lock (a system call): one that the server
                // ended while idle is closed and replaced.
                condition.unlock()
                if lease.connection.probe() { return lease }
                lease.connection.close()
                condition.lock()
                open -= 1
                continue
            }
            if open < maximum {
                open += 1
                nextID += 1
                id = nextID
                break
            }
            waiters += 1
            let woken = condition.wait(until: deadline)
            waiters -= 1
            if !woken {
                condition.unlock()
                throw PostgresDriverError.connectionUnavailable(server: server, detail: "all \(maximum) connections stayed busy")
            }
        }
        condition.unlock()
        let connection: LibPQConnection
        if let connectDeadline {
            do {
                connection = try connect(id: id, deadline: min(deadline, connectDeadline))
            } catch PostgresDriverError.closed {
                throw PostgresDriverError.closed
            } catch {
                throw ConnectFailure(error: error)
            }
        } else {
            connection = try connect(id: id, deadline: deadline)
        }
        return Lease(connection: connection)
    }

    /// Opens connection `id` (already counted in `open`): the first server, in order, that
    /// accepts it and is of the ``target`` kind.
    private func connect(id: Int, deadline: Date) throws -> LibPQConnection {
        var refusals: [Refusal] = []
        let start = rotating && !endpoints.isEmpty ? id % endpoints.count : 0
        for endpoint in endpoints[start...] + endpoints[..<start] {
            switch attempt(endpoint, deadline: deadline) {
            case .success(let connection):
                let refused: Bool = condition.withLock { closed }
                if refused {
                    give(back: Lease(connection: connection), reusable: false)
                    throw PostgresDriverError.closed
                }
                return connection
            case .failure(let failure):
                refusals.append(failure)
            }
            if Date() >= deadline { break }
        }
        forget()
        throw unavailable(refusals)
    }

    /// One server: a connection, checked against ``target``, or why not (no password in it).
    private func attempt(_ parameters: [(String, String)], deadline: Date) -> Result<LibPQConnection, Refusal> {
        guard deadline.timeIntervalSinceNow > 0 else { return .failure(Refusal(detail: "the call's deadline passed before a connection opened")) }
        let connection: LibPQConnection
        let (seconds, attoseconds) = connectTimeout.components
        let deadline = min(deadline, Date().addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18))
        do {
            connection = try LibPQConnection.connect(parameters, server: server, preparesStatements: preparesStatements, deadline: deadline)
        } catch {
            let host = parameters.first { $0.0 == "host" }?.1
            if let tls = PostgresDriverError.tls(libpqMessage: error.message, server: server, host: host, trust: tlsTrust) {
                return .failure(Refusal(detail: tls.description, tls: tls))
            }
            return .failure(Refusal(detail: error.message))
        }
        guard target != .any else { return .success(connection) }
        // A standby (or a read-only server, for read-write) is not what was asked for.
        let check = target == .primary ? "SELECT pg_is_in_recovery()"
            : "SELECT pg_is_in_recovery() OR current_setting('transaction_read_only')::bool"
        var answer: Result<LibPQConnection.Answer, any Error>?
        connection.send([Statement(check)]) { answer = $0 }
        while answer == nil && connection.hasUnread {
            guard connection.readNext(until: deadline) else { break }
        }
        switch answer {
        case .success(let rows)?:
            if let row = rows.rows.first, let standby = try? row.boolean(at: 0), !standby { return .success(connection) }
            connection.close()
            return .failure(Refusal(detail: "no server was a \(target.rawValue) server"))
        case .failure(let error)?:
            connection.close()
            return .failure(Refusal(detail: PostgresSession.map(error, server: server).description))
        case nil:
            connection.close()
            return .failure(Refusal(detail: "no connection within the connect timeout"))
        }
    }

    /// A side connection to one server (postgres-nio), checked against ``target``, or why not.
    private func attemptSide(_ configuration: PostgresConnection.Configuration, id: Int, deadline: Date) -> Result<PostgresConnection, Refusal> {
        let pending = Pending<PostgresConnection>()
        let eventLoop = loops.isEmpty ? group.next() : loops[id % loops.count], logger = logger, target = target
        // postgres-nio bounds the whole start (TCP, TLS, authentication) by its connect timeout:
        // no longer than the call has left.
        var bounded = configuration
        let remaining = Int64(deadline.timeIntervalSinceNow * 1000)
        guard remaining > 0 else { return .failure(Refusal(detail: "the call's deadline passed before a connection opened")) }
        bounded.options.connectTimeout = min(bounded.options.connectTimeout, .milliseconds(remaining))
        let configuration = bounded
        eventLoop.execute {
            let connected = PostgresConnection.connect(on: eventLoop, configuration: configuration, id: id, logger: logger)
            guard target != .any else { return Self.complete(pending, with: connected) }
            // A standby (or a read-only server, for read-write) is not what was asked for.
            let check = target == .primary ? "SELECT pg_is_in_recovery()"
                : "SELECT pg_is_in_recovery() OR current_setting('transaction_read_only')::bool"
            Self.complete(pending, with: connected.flatMap { connection in
                connection.query(PostgresQuery(unsafeSQL: check), logger: logger).flatMapThrowing { rows -> PostgresConnection in
                    guard let row = rows.first, try !row.decode(Bool.self) else { throw TargetMismatch() }
                    return connection
                }.flatMapErrorThrowing { error in
                    connection.closeSoon()
                    throw error
                }
            })
        }
        // postgres-nio enforces the connect timeout itself; the extra second only guards the wait
        // (a connection that opens later is closed, see `complete`).
        let result = pending.wait(until: deadline.addingTimeInterval(1))
        if result == nil { pending.fail(Refusal(detail: "no connection within the connect timeout")) }
        switch result {
        case .success(let connection)?: return .success(connection)
        case .failure(is TargetMismatch)?: return .failure(Refusal(detail: "no server was a \(target.rawValue) server"))
        case .failure(let error)?:
            if let tls = PostgresDriverError.tls(error, server: server, host: configuration.host, trust: tlsTrust) {
                return .failure(Refusal(detail: tls.description, tls: tls))
            }
            return .failure(Refusal(detail: PostgresSession.map(error, server: server).description))
        case nil: return .failure(Refusal(detail: "no connection within the connect timeout"))
        }
    }

    /// Completes `pending` with a connection attempt; a connection that opens after the waiter
    /// gave up is closed (postgres-nio asserts that connections are closed before they go).
    private static func complete(_ pending: Pending<PostgresConnection>, with future: EventLoopFuture<PostgresConnection>) {
        future.whenComplete { result in
            if !pending.set(result), case .success(let connection) = result { connection.closeSoon() }
        }
    }

    /// The server was not of the kind ``target`` asks for.
    private struct TargetMismatch: Error {}

    /// Why a server gave no connection (never holds a password).
    private struct Refusal: Error {
        let detail: String
        /// The TLS failure it was, thrown as it is when every server failed so.
        var tls: PostgresDriverError?
    }

    /// The error for a connection no server gave: their common TLS failure when each failed on
    /// TLS (a configuration or certificate to change, not an outage), else "unavailable" with
    /// the last reason.
    private func unavailable(_ refusals: [Refusal]) -> PostgresDriverError {
        if let last = refusals.last, let tls = last.tls, refusals.allSatisfy({ $0.tls != nil }) { return tls }
        return .connectionUnavailable(server: server, detail: refusals.last?.detail ?? "no server to try")
    }

    /// Counts out a connection that never opened.
    private func forget() {
        let shutDown: Bool = condition.withLock {
            open -= 1
            condition.signal()
            return takeShutDown()
        }
        if shutDown { shutDownGroup(closing: []) }
    }

    /// Gives a leased connection back; one that failed (`reusable` false) or closed is closed
    /// and forgotten.
    /// How many of the most recently returned idle connections ``lease(until:connectingUntil:preferring:)``
    /// looks at for a matching chained transaction.
    static let preferenceWindow = 8

    func give(back lease: Lease, reusable: Bool) {
        let shutDown: Bool = condition.withLock {
            if reusable && !closed && lease.isUsable {
                idle.append(lease)
            } else {
                open -= 1
                lease.connection.close()
            }
            condition.signal()
            return takeShutDown()
        }
        if shutDown { shutDownGroup(closing: []) }
    }

    /// A connection of its own, outside the pool's count and never leased (a change listener's
    /// or notifier's): the first server, in order, of the target kind, opened by `deadline`, with
    /// `settings` added to its startup parameters. Close it with ``closeSide(_:)`` (exactly
    /// once); the event loop runs until the last one has closed.
    func openSide(until deadline: Date, settings: [(String, String)] = []) throws -> PostgresConnection {
        if isEventLoopThread { throw PostgresDriverError.calledFromDriverThread }
        let id: Int = try condition.withLock {
            if closed { throw PostgresDriverError.closed }
            sideOpen += 1
            nextID += 1
            return nextID
        }
        var refusals: [Refusal] = []
        for configuration in configurations {
            var configuration = configuration
            configuration.options.additionalStartupParameters += settings
            switch attemptSide(configuration, id: id, deadline: deadline) {
            case .success(let connection):
                if condition.withLock({ closed }) {
                    closeSide(connection)
                    throw PostgresDriverError.closed
                }
                return connection
            case .failure(let failure):
                refusals.append(failure)
            }
            if Date() >= deadline { break }
        }
        sideClosed()
        throw unavailable(refusals)
    }

    /// A libpq connection of its own, outside the pool's count and never leased (the change
    /// notifier's): the first server, in order, of the target kind, opened by `deadline`, with
    /// `settings` added to its session's (`-c NAME=VALUE` in its `options`). Its owner closes it;
    /// it needs no event loop.
    func openDetached(until deadline: Date, settings: [(String, String)]) throws -> LibPQConnection {
        if condition.withLock({ closed }) { throw PostgresDriverError.closed }
        let extra = settings.map { "-c \($0.0)=\($0.1)" }.joined(separator: " ")
        var refusals: [Refusal] = []
        for endpoint in endpoints {
            var parameters = endpoint
            if let index = parameters.firstIndex(where: { $0.0 == "options" }) {
                parameters[index].1 = parameters[index].1.isEmpty ? extra : parameters[index].1 + " " + extra
            } else {
                parameters.append(("options", extra))
            }
            switch attempt(parameters, deadline: deadline) {
            case .success(let connection):
                if condition.withLock({ closed }) {
                    connection.close()
                    throw PostgresDriverError.closed
                }
                return connection
            case .failure(let failure): refusals.append(failure)
            }
            if Date() >= deadline { break }
        }
        throw unavailable(refusals)
    }

    /// Closes a connection from ``openSide(until:settings:)`` and counts it out.
    func closeSide(_ connection: PostgresConnection) {
        connection.closeSoon().whenComplete { _ in self.sideClosed() }
    }

    private func sideClosed() {
        let shutDown: Bool = condition.withLock {
            sideOpen -= 1
            return takeShutDown()
        }
        if shutDown { shutDownGroup(closing: []) }
    }

    /// Closes idle connections now and the others when they are given back; the event loop
    /// stops after the last one. Never blocks.
    func close() {
        let (connections, shutDown): ([LibPQConnection], Bool) = condition.withLock {
            closed = true
            let connections = idle.map(\.connection)
            idle = []
            open -= connections.count
            condition.broadcast()
            return (connections, takeShutDown())
        }
        for connection in connections { connection.close() }
        if shutDown { shutDownGroup(closing: []) }
    }

    /// Whether the event loop should stop now (closed and no connection left); true only once.
    /// Call with `condition` locked.
    private func takeShutDown() -> Bool {
        guard closed && open == 0 && sideOpen == 0 && !groupShutDown else { return false }
        groupShutDown = true
        return true
    }

    private func shutDownGroup(closing connections: [PostgresConnection]) {
        let group = group, eventLoop = eventLoop
        let closings = connections.map { $0.closeSoon() }
        EventLoopFuture.andAllComplete(closings, on: eventLoop).whenComplete { _ in
            group.shutdownGracefully { _ in }
        }
    }
}

extension PostgresConnection {
    /// Starts closing the connection (the EventLoopFuture variant of `close`, not the async
    /// one), keeping it alive until it has closed (postgres-nio asserts that a connection is
    /// closed before it is deinitialized).
    @discardableResult
    func closeSoon() -> EventLoopFuture<Void> {
        let future: EventLoopFuture<Void> = close()
        future.whenComplete { _ in withExtendedLifetime(self) {} }
        return future
    }
}
#endif

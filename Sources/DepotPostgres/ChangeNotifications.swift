#if Postgres
import DepotCore
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// Sends the driver's change notices: after a write that logged changes (see
/// `StorageTransaction.changeLogStamp()`) has committed, `NOTIFY` on the schema's channel
/// (``PostgresSchema/changeChannel``) with the highest stamp committed so far as the payload.
///
/// Not inside the writer's transaction: PostgreSQL serializes the commits of transactions that
/// notify (a lock held through each one's commit and WAL flush), which would make logging writers
/// commit one at a time — measured with `pgbench` here, 64 clients inserting one row: 17,578
/// transactions/s, 3,680 with a `NOTIFY` in each. Instead one notice at a time per driver goes
/// out, after the commit answered, from a thread of its own on a libpq connection of its own
/// (a prepared statement: about 12k client instructions a notice, where postgres-nio's query
/// cost 105k); commits that answer while one is on its way are covered by the next one
/// (coalesced). That connection runs with `synchronous_commit = off`: a notice carries no data,
/// so it need not wait for the disk. Nothing waits for it: a write returns when its `COMMIT`
/// answered, with no extra round trip. A notice that cannot go out (no connection, tried again
/// at most every 5 s; or no answer within 5 s) is dropped: watchers then find the change at
/// their next poll.
final class ChangeNotifier: @unchecked Sendable {
    // @unchecked Sendable: the mutable state is guarded by `condition`; the connection is only
    // touched by the notifier's thread; the rest is immutable.
    private let condition = NSCondition()
    /// The highest committed stamp not yet sent; 0: none.
    private var pending: UInt64 = 0
    private var closed = false
    /// Whether the notifier's thread was started (at the first notice).
    private var started = false
    /// How often a commit woke the thread (read by tests through ``wakeUps``).
    private var signals = 0
    var wakeUps: Int { condition.withLock { signals } }
    private let pool: ConnectionPool
    private let channel: String
    private let logger: Logger
    private let connectTimeout: Duration
    /// The shortest time between two notices: the commits of a busy driver share
    /// notices, and so do the watchers' wake-ups and reads.
    static let gap: Duration = .milliseconds(2)
    /// How long a notice may wait for its answer before the connection is dropped.
    private static let answerTimeout: Double = 5

    init(pool: ConnectionPool, channel: String, logger: Logger, connectTimeout: Duration) {
        self.pool = pool
        self.channel = channel
        self.logger = logger
        self.connectTimeout = min(connectTimeout, .seconds(10))
    }

    /// A write whose change-log entry has stamp `stamp` committed: watchers are told (soon).
    func committed(stamp: UInt64) {
        let start: Bool = condition.withLock {
            guard !closed else { return false }
            // The thread is woken by the first commit after it took a notice: later ones find
            // it sending, or waiting out the gap, and it takes their stamp when it is done.
            // (A signal at every commit woke it only to wait again: 8 logging writers on 2
            // cores made 3,772–3,821 commits/s so, 3,946–4,061 without, `depot-postgres-bench
            // writers 8 3 watched`.)
            if pending == 0 && stamp > 0 {
                signals += 1
                condition.signal()
            }
            pending = max(pending, stamp)
            defer { started = true }
            return !started
        }
        guard start else { return }
        let thread = Thread { self.run() }
        thread.name = "depot.postgres.notifier"
        thread.start()
    }

    /// The notifier's thread: sends the pending notice, one at a time, until closed.
    private func run() {
        var connection: LibPQConnection?
        var retryAt: ContinuousClock.Instant?
        var warned = false
        // After the server refused a notice (its connection still usable): none until then.
        var pausedUntil: ContinuousClock.Instant?
        var pause: Duration = .seconds(1)
        defer { connection?.close() }
        /// The connection, checked without waiting (a backend the server ended is seen here),
        /// or a new one; nil while none can be opened (tried again at most every 5 s).
        func usable() -> LibPQConnection? {
            if let open = connection, open.probe() { return open }
            connection?.close()
            connection = nil
            if let retryAt, ContinuousClock.now < retryAt { return nil }
            do {
                connection = try pool.openDetached(until: PostgresDriver.date(.now + connectTimeout),
                                                   settings: [("synchronous_commit", "off")])
                retryAt = nil
                warned = false
            } catch {
                retryAt = .now + .seconds(5)
                if !warned {
                    warned = true
                    logger.warning("change notices: no connection; watchers fall back to polling",
                                   metadata: ["error": "\(PostgresSession.map(error, server: pool.server))"])
                }
            }
            return connection
        }
        var nextAllowed = ContinuousClock.now
        while true {
            let stamp: UInt64? = condition.withLock {
                while !closed && pending == 0 { condition.wait() }
                // Commits that answer within the gap after a notice share the next one.
                while !closed && ContinuousClock.now < nextAllowed {
                    _ = condition.wait(until: PostgresDriver.date(nextAllowed))
                }
                guard !closed else { return nil }
                defer { pending = 0 }
                return pending
            }
            guard let stamp else { return }
            nextAllowed = .now + Self.gap
            // Dropped while the server refuses notices (watchers poll).
            if let pausedUntil, ContinuousClock.now < pausedUntil { continue }
            // A connection lost under the notice is replaced once, at once; a notice that
            // cannot go out is dropped.
            for _ in 0..<2 {
                guard let open = usable(), !condition.withLock({ closed }) else { break }
                switch Self.send(stamp, on: open, channel: channel) {
                case .sent:
                    pausedUntil = nil
                    pause = .seconds(1)
                case .refused:
                    // The server answered with an error (a full notify queue, say): the
                    // connection stays, and notices pause for 1 s, doubling up to 30 s.
                    pausedUntil = .now + pause
                    pause = min(pause * 2, .seconds(30))
                case .lost:
                    open.close()
                    connection = nil
                    continue
                }
                break
            }
        }
    }

    /// What became of a notice.
    private enum Outcome {
        case sent, refused, lost
    }

    /// Sends one notice and waits for its answer: `lost` when the connection broke or did not
    /// answer in time (it must not be used again), `refused` when the server answered with an
    /// error.
    private static func send(_ stamp: UInt64, on connection: LibPQConnection, channel: String) -> Outcome {
        var answer: Result<LibPQConnection.Answer, any Error>?
        connection.send([Statement(prepared: "SELECT pg_notify($1::text, $2::text)", .of(channel, String(stamp)))]) { answer = $0 }
        let deadline = Date().addingTimeInterval(answerTimeout)
        while answer == nil && connection.hasUnread {
            guard connection.readNext(until: deadline) else { return .lost }
        }
        switch answer {
        case .success?: return .sent
        case .failure? where connection.isUsable: return .refused
        default: return .lost
        }
    }

    /// Stops the notifier's thread, which closes its connection; later commits send nothing.
    /// Never blocks.
    func close() {
        condition.withLock {
            closed = true
            condition.broadcast()
        }
    }
}

/// A watcher's wake-ups (``ChangeNotices``) on PostgreSQL: a connection of its own that runs
/// `LISTEN` on the schema's channel, opened at the first wait and reopened at a later wait when
/// it is lost (after 1 s, doubling up to 30 s while it keeps failing). Where `LISTEN` is refused
/// (a standby: "cannot execute LISTEN during recovery") or the server cannot be reached, waits
/// simply last until their deadline, and the watcher polls. Opening the connection holds up one
/// wait by at most `min(connectTimeout, 5 s)` twice over (connect, then `LISTEN`).
final class ChangeListener: ChangeNotices, @unchecked Sendable {
    // @unchecked Sendable: the mutable state is guarded by `condition`; the rest is immutable.
    private let condition = NSCondition()
    private var connection: PostgresConnection?
    private var context: PostgresListenContext?
    private var noticed = false
    private var stamp: UInt64 = 0
    private var closed = false
    private var retryAt = ContinuousClock.now
    private var backOff: Duration = .seconds(1)
    private let pool: ConnectionPool
    private let channel: String
    private let logger: Logger
    private let openTimeout: Duration

    init(pool: ConnectionPool, channel: String, logger: Logger, connectTimeout: Duration) {
        self.pool = pool
        self.channel = channel
        self.logger = logger
        self.openTimeout = min(connectTimeout, .seconds(5))
    }

    deinit { close() }

    var committedStamp: UInt64 { condition.withLock { stamp } }

    func wait(until deadline: Date) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if closed { return false }
            if noticed {
                noticed = false
                return true
            }
            if connection == nil, ContinuousClock.now >= retryAt {
                condition.unlock()
                listen()
                condition.lock()
                continue
            }
            if !condition.wait(until: deadline) {
                defer { noticed = false }
                return noticed && !closed
            }
        }
    }

    func close() {
        let (open, listening): (PostgresConnection?, PostgresListenContext?) = condition.withLock {
            closed = true
            condition.broadcast()
            defer { connection = nil; context = nil }
            return (connection, context)
        }
        listening?.stop()
        if let open { pool.closeSide(open) }
    }

    /// Opens the connection and listens; on failure, sets the next try.
    private func listen() {
        let connection: PostgresConnection
        do {
            connection = try pool.openSide(until: PostgresDriver.date(.now + openTimeout))
        } catch {
            return failed(error)
        }
        let context = connection.addListener(channel: channel) { [weak self] _, message in self?.notice(message.payload) }
        // `addListener` sends its own LISTEN but reports no failure: this one, queued after it,
        // says whether the server accepted.
        let answer = Pending<Void>()
        connection.query(PostgresQuery(unsafeSQL: "LISTEN \"\(channel)\""), logger: logger).whenComplete { result in
            answer.set(result.map { _ in () })
        }
        let result = answer.wait(until: PostgresDriver.date(.now + openTimeout))
        guard case .success? = result else {
            context.stop()
            pool.closeSide(connection)
            if case .failure(let error)? = result { return failed(error) }
            return failed(PostgresDriverError.deadlineExceeded(server: pool.server, timeout: openTimeout))
        }
        let accepted: Bool = condition.withLock {
            guard !closed else { return false }
            self.connection = connection
            self.context = context
            backOff = .seconds(1)
            // What committed while nobody listened is read now.
            noticed = true
            return true
        }
        guard accepted else {
            context.stop()
            pool.closeSide(connection)
            return
        }
        connection.closeFuture.whenComplete { [weak self] _ in self?.lost(connection) }
    }

    private func failed(_ error: any Error) {
        let first: Bool? = condition.withLock {
            guard !closed else { return nil }
            retryAt = .now + backOff
            defer { backOff = min(backOff * 2, .seconds(30)) }
            return backOff == .seconds(1)
        }
        guard let first else { return }
        logger.log(level: first ? .warning : .debug, "change notices: cannot listen; the watcher polls",
                   metadata: ["error": "\(PostgresSession.map(error, server: pool.server))"])
    }

    /// The connection closed: the next wait opens another.
    private func lost(_ closedConnection: PostgresConnection) {
        let mine: Bool = condition.withLock {
            guard connection === closedConnection else { return false }
            connection = nil
            context = nil
            retryAt = .now
            condition.broadcast()
            return true
        }
        if mine { pool.closeSide(closedConnection) }
    }

    /// A notice (from any process): wakes the waiter. The payload is a stamp when Depot sent it.
    private func notice(_ payload: String) {
        condition.withLock {
            noticed = true
            if let value = UInt64(payload) { stamp = max(stamp, value) }
            condition.broadcast()
        }
    }
}
#endif

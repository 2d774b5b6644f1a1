#if Postgres
import DepotCore
import Foundation
import Logging

extension PostgresConfiguration {
    /// `read_replicas`: `host`, `host:port`, `[v6]` or `[v6]:port`, separated by commas.
    static func replicaList(_ text: String) throws -> [Endpoint] {
        guard !text.isEmpty else { throw PostgresDriverError.invalidConfiguration("read_replicas is empty") }
        return try text.split(separator: ",", omittingEmptySubsequences: false).map { item in
            do {
                return try endpoint(String(item))
            } catch {
                throw PostgresDriverError.invalidConfiguration("read_replicas must be host:port entries separated by commas (port 1 to 65535)")
            }
        }
    }

    /// Every read replica has a host and a port from 1 to 65535.
    func validateReadReplicas() throws {
        for replica in readReplicas where replica.host.isEmpty || !(1...65535).contains(replica.port) {
            throw PostgresDriverError.invalidConfiguration("every one of readReplicas needs a host and a port from 1 to 65535")
        }
    }

    /// The read replicas, for messages: `user@host:port,…/database` (no password).
    var readReplicaServer: String {
        "\(username)@\(readReplicas.map { "\($0.host):\($0.port)" }.joined(separator: ","))/\(database ?? username)"
    }
}

/// The pool of ``PostgresConfiguration/readReplicas`` and whether they are worth trying: after
/// a new connection failed (no standby reachable within the time a read gives it), reads go to
/// the primary for ``recheckInterval`` before one tries a standby again. A pool whose
/// connections are all in use is not unreachable: a read waits for one, as on the primary.
/// The change of state is logged once each way, never per read.
///
/// `@unchecked Sendable`: `downUntil` is only touched under `lock`; the rest is immutable (the
/// pool guards its own state).
final class ReadReplicas: @unchecked Sendable {
    /// How long reads stay on the primary after no standby could be reached.
    static let recheckInterval: Duration = .seconds(5)

    let pool: ConnectionPool
    private let logger: Logger
    private let lock = NSLock()
    /// Until when reads skip the standbys; nil while they are reachable.
    private var downUntil: ContinuousClock.Instant?

    init(pool: ConnectionPool, logger: Logger) {
        self.pool = pool
        self.logger = logger
    }

    /// A standby connection, or nil when the read should go to the primary: the standbys were
    /// found unreachable less than ``recheckInterval`` ago, or no new connection to one opened
    /// within half of what is left of the call (at most `connectTimeout`), so that the primary
    /// still has time to serve the read. When all of the pool's connections are in use it waits
    /// for one until `deadline` (throwing as the primary's pool does when none comes).
    func lease(until deadline: ContinuousClock.Instant, connectTimeout: Duration) throws -> ConnectionPool.Lease? {
        let now = ContinuousClock.now
        let skipping: Bool = lock.withLock { downUntil.map { now < $0 } ?? false }
        if skipping { return nil }
        let budget = min(connectTimeout, (deadline - now) / 2)
        do {
            let lease = try pool.lease(until: PostgresDriver.date(deadline), connectingUntil: PostgresDriver.date(now + budget))
            let recovered: Bool = lock.withLock {
                defer { downUntil = nil }
                return downUntil != nil
            }
            if recovered { logger.notice("read replicas reachable again: reads go to the standbys", metadata: ["server": "\(pool.server)"]) }
            return lease
        } catch let failure as ConnectionPool.ConnectFailure {
            let error = failure.error
            let first: Bool = lock.withLock {
                defer { downUntil = .now + Self.recheckInterval }
                return downUntil == nil
            }
            if first {
                logger.warning("no read replica reachable: reads go to the primary until one is",
                               metadata: ["server": "\(pool.server)", "error": "\(error)"])
            }
            return nil
        }
    }

    func close() { pool.close() }
}

extension PostgresDriver {
    /// Runs `body` with this driver's reads on the primary, on the calling thread, whatever
    /// ``PostgresConfiguration/readReplicas`` names: read-your-writes for one scope, without a
    /// change to `Store`'s API. A standby replays the primary's commits a little later, so a
    /// read there may not see a write that just returned; wrap the reads that must:
    ///
    /// ```swift
    /// try store.write { tx in try tx.park(order) }
    /// let fresh = try driver.readingFromPrimary { try store.retrieve(Order.self, id: order.id) }
    /// ```
    ///
    /// The scope is the calling thread's (the driver is synchronous and reads run on the
    /// caller's thread); scopes nest. Without read replicas it changes nothing.
    public func readingFromPrimary<R>(_ body: () throws -> R) rethrows -> R {
        let key = primaryReadsKey
        let state = Thread.current.threadDictionary
        let outer = state[key] as? Int ?? 0
        state[key] = outer + 1
        defer {
            if outer == 0 { state.removeObject(forKey: key) } else { state[key] = outer }
        }
        return try body()
    }

    /// Whether reads of this driver on the calling thread are inside ``readingFromPrimary(_:)``.
    public var isReadingFromPrimary: Bool { Thread.current.threadDictionary[primaryReadsKey] != nil }

    private var primaryReadsKey: String { "depot.postgres.primaryReads.\(ObjectIdentifier(self).hashValue)" }

    /// Leases a connection for a read: a standby's when read replicas are configured, are
    /// reachable and the thread is not inside ``readingFromPrimary(_:)``; the primary's
    /// otherwise. The connection goes back to its pool however `body` ends. A read whose
    /// standby connection was lost after it began (the standby went away, the server ended the
    /// session: class 08, 57P01 to 57P03, a closed connection) runs once more, on the primary,
    /// within the same deadline: a read has no effects to repeat. Other failures are thrown.
    func withReadSession<R>(_ body: (PostgresSession) throws -> R) throws -> R {
        let deadline = callDeadline()
        if let readReplicas, !isReadingFromPrimary,
           let lease = try readReplicas.lease(until: deadline, connectTimeout: configuration.connectTimeout) {
            var lost = false
            do {
                return try withLease(lease, from: readReplicas.pool, until: deadline) { session in
                    do {
                        return try body(session)
                    } catch {
                        // Also when the closure wrapped or caught the driver's error.
                        lost = session.lostConnection || PostgresDriverError.unwrapping(error)?.isConnectionLoss == true
                        throw error
                    }
                }
            } catch where lost {
                // On the primary, below.
            }
        }
        return try withSession(until: deadline, preferring: Self.readCharacteristics, body)
    }
}
#endif

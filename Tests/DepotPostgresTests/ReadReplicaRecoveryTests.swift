#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import PostgresNIO
import Testing

/// Whether the read transaction `txn` runs on a standby (asked in the transaction itself).
private func onStandby(_ txn: any StorageTransaction) throws -> Bool {
    let session = try #require(txn as? PostgresTransaction).session
    return try session.integers("SELECT pg_is_in_recovery()::int::bigint") == [1]
}

/// Standby reads that meet a busy pool or a lost connection (needs the streaming replica of
/// `DEPOT_POSTGRES_REPLICA=1 scripts/with-postgres.sh`).
@Suite("PostgreSQL standby reads: busy pool, lost connection",
       .enabled(if: ReplicaServer.url != nil && PostgresTestServer.isAvailable,
                "DEPOT_POSTGRES_REPLICA_URL is not set (run with DEPOT_POSTGRES_REPLICA=1)"))
struct ReadReplicaRecoveryTests {
    /// A driver on the primary with the test replica as its read replica, on a new schema, once
    /// a document written on the primary is read on the standby.
    private func withRoutedDriver(_ configure: (inout PostgresConfiguration) -> Void = { _ in },
                                  _ body: (PostgresDriver, Store) throws -> Void) throws {
        let replica = try PostgresConfiguration(url: try #require(ReplicaServer.url))
        try PostgresTestServer.withDriver(configure: {
            $0.readReplicas = [.init(host: replica.host, port: replica.port)]
            configure(&$0)
        }) { driver in
            let store = try Store(driver: driver)
            try store.write { tx in try tx.park(staff(0)) }
            #expect(eventually(within: 30) { (try? store.retrieve(Staff.self, id: 0)) != nil })
            try body(driver, store)
        }
    }

    /// All standby connections in use for longer than a connection may take to open: the read
    /// waits for one and runs on the standby (it went to the primary, with a warning, before).
    @Test func aBusyStandbyPoolIsWaitedFor() throws {
        try withRoutedDriver({
            $0.maximumConnections = 1
            $0.connectTimeout = .milliseconds(300)
            $0.callTimeout = .seconds(10)
        }) { (driver: PostgresDriver, _: Store) throws in
            final class Signals: @unchecked Sendable {
                // @unchecked Sendable: semaphores only.
                let holding = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
            }
            let signals = Signals()
            let pool = try #require(driver.readReplicas?.pool)
            Thread.detachNewThread {
                // Holds the pool's only standby connection until the other read waits for it,
                // then for 3 × the connect budget more (a read that gave up waiting after the
                // budget would have gone to the primary by then).
                _ = try? driver.read { txn in
                    signals.holding.signal()
                    _ = try onStandby(txn)
                    _ = eventually(within: 10) { pool.waitingCallers > 0 }
                    Thread.sleep(forTimeInterval: 0.9)
                }
                signals.done.signal()
            }
            #expect(signals.holding.wait(timeout: .now() + 10) == .success)
            let start = Date()
            let waited = try driver.read { try onStandby($0) }
            #expect(waited, "the read waited for the busy standby pool")
            #expect(Date().timeIntervalSince(start) > 0.3, "it waited for the holder")
            #expect(signals.done.wait(timeout: .now() + 10) == .success)
            let after = try driver.read { try onStandby($0) }
            #expect(after, "the standbys were not marked unreachable")
        }
    }

    /// The standby ends the read's session after the read began: the read runs again, once, on
    /// the primary, also when the closure caught the driver's error.
    @Test func aReadWhoseStandbyConnectionIsLostRunsAgainOnThePrimary() throws {
        try withRoutedDriver { driver, store in
            var runs: [Bool] = []
            let value = try driver.read { txn -> [Int64] in
                let standby = try onStandby(txn)
                runs.append(standby)
                let session = try #require(txn as? PostgresTransaction).session
                if standby {
                    // The server ends this session (57P01), as at a standby's shutdown.
                    _ = try? session.integers("SELECT pg_terminate_backend(pg_backend_pid())::int::bigint")
                }
                return try session.integers("SELECT 7::bigint")
            }
            #expect(value == [7])
            #expect(runs == [true, false], "once on the standby, then once on the primary")
            #expect(try store.retrieve(Staff.self, id: 0) == staff(0), "later reads still work")
        }
    }

    /// Any other failure on a standby is the read's: not run again.
    @Test func otherStandbyFailuresAreNotRunAgain() throws {
        struct Refused: Error {}
        try withRoutedDriver { driver, _ in
            var runs = 0
            #expect(throws: Refused.self) {
                try driver.read { _ in
                    runs += 1
                    throw Refused()
                }
            }
            let server = #expect(throws: PostgresDriverError.self) {
                try driver.read { txn in
                    let session = try #require(txn as? PostgresTransaction).session
                    runs += 1
                    _ = try session.integers("SELECT 1 / 0")
                }
            }
            #expect(server?.sqlState == "22012")
            #expect(runs == 2)
        }
    }
}
#endif

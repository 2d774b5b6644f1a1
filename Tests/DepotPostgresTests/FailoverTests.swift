#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import PostgresNIO
import Testing

/// The failover pair of `DEPOT_POSTGRES_FAILOVER=1 scripts/with-postgres.sh …`: a primary that
/// replicates synchronously to a standby, separate from the server the other tests use, and a
/// control command that crashes the primary or promotes the standby.
enum FailoverServer {
    static let environment = ProcessInfo.processInfo.environment
    static let primaryURL = environment["DEPOT_POSTGRES_FAILOVER_PRIMARY_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let standbyURL = environment["DEPOT_POSTGRES_FAILOVER_STANDBY_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let control = environment["DEPOT_POSTGRES_FAILOVER_CONTROL"].flatMap { $0.isEmpty ? nil : $0 }
    static var isAvailable: Bool { primaryURL != nil && standbyURL != nil && control != nil }

    /// Runs the control command (`stop-primary`, `promote-standby`); throws when it fails.
    static func run(_ action: String) throws {
        let status = try runControl(try #require(control), action)
        try #require(status == 0, "failover control \(action) exited with \(status)")
    }
}

/// Acknowledged commits survive the loss of the primary. The primary replicates synchronously
/// (`synchronous_standby_names = '*'`, `synchronous_commit = on`): a `COMMIT` returns only once
/// the standby has flushed the commit's WAL, so an acknowledged write is on the standby's disk
/// when the primary crashes. (With asynchronous replication acknowledged commits can be lost;
/// this test would not show it reliably, so it checks that replication is synchronous first.)
@Suite("PostgreSQL failover", .enabled(if: FailoverServer.isAvailable,
                                       "DEPOT_POSTGRES_FAILOVER_* are not set (run with DEPOT_POSTGRES_FAILOVER=1)"))
struct FailoverTests {
    @Test func acknowledgedCommitsSurvivePromotionAndWritesGoOn() throws {
        // One configuration naming both servers, as an application would: new connections try
        // the primary, then the standby, and take only a server that accepts writes.
        var configuration = try PostgresConfiguration(url: try #require(FailoverServer.primaryURL))
        let standby = try PostgresConfiguration(url: try #require(FailoverServer.standbyURL))
        configuration.alternateHosts = [.init(host: standby.host, port: standby.port)]
        configuration.targetSession = .readWrite
        configuration.schema = PostgresTestServer.uniqueSchema()
        configuration.connectTimeout = .seconds(5)
        let driver = try PostgresDriver(configuration: configuration)
        defer {
            try? driver.dropSchema()
            driver.close()
        }

        // Precondition: the standby is attached as a synchronous standby.
        #expect(eventually(within: 30) {
            let sync = try? driver.withSession { session in
                session.leaveChained()
                return try session.integers("SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'")
            }
            return sync == [1]
        })

        let store = try Store(driver: driver)
        var acknowledged: [Int] = []
        for i in 0..<30 {
            try store.write { tx in try tx.park(staff(i)) }
            acknowledged.append(i)
        }
        try store.write { tx in for i in 30..<50 { try tx.park(staff(i)) } }
        acknowledged += Array(30..<50)

        try FailoverServer.run("stop-primary")
        try FailoverServer.run("promote-standby")

        // Pooled connections to the crashed primary fail and are dropped; new ones pass over it
        // and reach the promoted standby. Polled with a deadline.
        #expect(eventually(within: 60) { (try? store.retrieve(Staff.self, id: 0)) != nil })
        for i in acknowledged {
            #expect(try store.retrieve(Staff.self, id: i) == staff(i), "acknowledged document \(i) was lost")
        }
        let bySalary = try store.read { tx in try tx.fetch(FetchRequest<Staff>().matching(\.salary, .equalTo(staff(4).salary))) }
        #expect(bySalary.map(\.id) == acknowledged.filter { staff($0).salary == staff(4).salary })

        // Writes go on, on the new primary (a write on a stale connection fails first; retried
        // until the deadline).
        #expect(eventually(within: 60) { (try? store.write { tx in try tx.park(staff(500)) }) != nil })
        try store.write { tx in try tx.park(staff(501)) }
        #expect(try store.retrieve(Staff.self, id: 501) == staff(501))
        let inRecovery = try driver.withSession { session in
            session.leaveChained()
            return try session.integers("SELECT pg_is_in_recovery()::int::bigint")
        }
        #expect(inRecovery == [0])
    }
}
#endif

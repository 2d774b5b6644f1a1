#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import Testing

/// The replica the tests use, if any.
enum ReplicaServer {
    static let url: String? = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_REPLICA_URL"].flatMap { $0.isEmpty ? nil : $0 }
}

/// A streaming replica (`DEPOT_POSTGRES_REPLICA=1 scripts/with-postgres.sh …` starts one and
/// exports DEPOT_POSTGRES_REPLICA_URL): documents written on the primary are read on the
/// replica once it has caught up, and writes there are refused.
@Suite("PostgreSQL streaming replica", .enabled(if: ReplicaServer.url != nil && PostgresTestServer.isAvailable,
                                                "DEPOT_POSTGRES_REPLICA_URL is not set (run with DEPOT_POSTGRES_REPLICA=1)"))
struct ReplicaTests {
    @Test func readsOnTheReplicaAfterCatchUp() throws {
        let schema = PostgresTestServer.uniqueSchema()
        let primary = try PostgresTestServer.driver(schema: schema)
        defer {
            try? primary.dropSchema()
            primary.close()
        }
        let primaryStore = try Store(driver: primary)
        try primaryStore.write { tx in for i in 0..<20 { try tx.park(staff(i)) } }

        // The schema reaches the replica with the WAL: open the replica's driver once it has.
        var configuration = try PostgresConfiguration(url: try #require(ReplicaServer.url))
        configuration.schema = schema
        var replica: PostgresDriver?
        #expect(eventually(within: 30) {
            replica = try? PostgresDriver(configuration: configuration)
            guard let replica else { return false }
            return (try? Store(driver: replica).retrieve(Staff.self, id: 19)) != nil
        })
        let replicaDriver = try #require(replica)
        defer { replicaDriver.close() }
        let replicaStore = try Store(driver: replicaDriver)
        #expect(try replicaStore.retrieve(Staff.self, id: 7) == staff(7))
        #expect(try replicaStore.read { tx in try tx.fetch(FetchRequest<Staff>().matching(\.salary, .equalTo(staff(3).salary))) }.map(\.id)
            == (0..<20).filter { staff($0).salary == staff(3).salary })

        // A later write on the primary shows up on the replica (polled, with a deadline).
        try primaryStore.write { tx in try tx.park(staff(100)) }
        #expect(eventually(within: 30) { (try? replicaStore.retrieve(Staff.self, id: 100)) != nil })

        // Replication lag, from both sides: the standby replayed a transaction, the primary
        // sees one standby attached.
        let standbySide = try replicaDriver.replicationLag()
        #expect(standbySide.isStandby)
        #expect(standbySide.standbys == 0)
        #expect(standbySide.lag.map { $0 >= .zero } == true)
        #expect(eventually(within: 30) { (try? primary.replicationLag())?.standbys ?? 0 >= 1 })
        #expect(try primary.replicationLag().isStandby == false)

        // The replica is read-only.
        #expect(throws: (any Error).self) {
            try replicaStore.write { tx in try tx.park(staff(200)) }
        }
    }

    /// A standby refuses `LISTEN`: its change notices never wake, and each wait ends by its
    /// deadline (a watcher there would poll), trying again without hanging.
    @Test func changeNoticesOnAStandbyEndEveryWaitByItsDeadline() throws {
        let configuration = try PostgresConfiguration(url: try #require(ReplicaServer.url))
        let replica = try PostgresDriver(configuration: configuration)
        defer { replica.close() }
        let notices = try #require(replica.changeNotices())
        defer { notices.close() }
        for _ in 0..<3 {
            let start = Date()
            #expect(!notices.wait(until: start.addingTimeInterval(1.2)), "no notice on a standby")
            let elapsed = Date().timeIntervalSince(start)
            #expect(elapsed >= 1 && elapsed < 8, "the wait lasted \(elapsed) s")
        }
    }
}
#endif

#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import Testing

/// A team whose lead is a reference: reading it reads the lead too (a second statement).
private struct Team: Document, Equatable {
    static var collection: String { "Team" }
    var id: Int
    var lead: Staff
}

/// `Store.retrieve` on PostgreSQL runs through `PostgresDriver.readFromFirstOperation`: first
/// as one statement outside a transaction (its own snapshot), again in a transaction when it
/// needs more.
@Suite("Gets in one statement", .enabled(if: PostgresTestServer.isAvailable, "DEPOT_POSTGRES_URL is not set"))
struct SingleStatementReadTests {
    @Test func aGetSeesEveryCommitMadeBeforeIt() throws {
        try PostgresTestServer.withHosts(2) { drivers in
            let reader = try Store(driver: drivers[0]), writer = try Store(driver: drivers[1])
            for round in 0..<20 {
                var lead = staff(1)
                lead.name = "round \(round)"
                try writer.write { tx in try tx.park(lead) }
                #expect(try reader.retrieve(Staff.self, id: 1)?.name == "round \(round)")
                // A write on the reader's own connections in between (a chained transaction
                // left on the connection ends before the next get).
                if round % 5 == 0 { try reader.write { tx in try tx.park(staff(100 + round)) } }
            }
            #expect(try reader.retrieve(Staff.self, id: 999) == nil)
        }
    }

    @Test func aGetThatNeedsMoreStatementsRunsInATransaction() throws {
        try PostgresTestServer.withDriver { driver in
            let store = try Store(driver: driver)
            let team = Team(id: 1, lead: staff(7))
            try store.write { tx in try tx.park(team) }
            for _ in 0..<3 { #expect(try store.retrieve(Team.self, id: 1) == team) }
            // The lead changed: the team's reference reads the new one.
            var lead = staff(7)
            lead.salary = 99
            try store.write { tx in try tx.park(lead) }
            #expect(try store.retrieve(Team.self, id: 1)?.lead.salary == 99)
        }
    }
}
#endif

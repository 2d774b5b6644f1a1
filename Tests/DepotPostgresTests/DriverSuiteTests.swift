#if Postgres
import Depot
import DepotDriverTesting
@testable import DepotPostgres
import Foundation
import Testing

/// Depot's driver conformance suite (the `DepotDriverTesting` product every driver runs:
/// documents, references, indexes, aliases, sync status, unique IDs, change sets, the key/value
/// kit, rollback, savepoints, snapshots), against PostgreSQL through `Store(driver:)`.
@Suite("Every storage driver, on PostgreSQL", .enabled(if: PostgresTestServer.isAvailable, "DEPOT_POSTGRES_URL is not set"))
struct DriverSuiteTests {
    @Test func passesTheDriverConformanceSuite() throws {
        var drivers: [PostgresDriver] = []
        defer {
            for driver in drivers {
                try? driver.dropSchema()
                driver.close()
            }
        }
        let report = try DriverConformance.check {
            let driver = try PostgresTestServer.driver(schema: PostgresTestServer.uniqueSchema())
            drivers.append(driver)
            return driver
        }
        print("DepotPostgres conformance: \(report)")
        #expect(report.skipped.isEmpty, "PostgreSQL claims transactions, savepoints and snapshots: nothing is skipped")
        #expect(!report.passed.isEmpty)
    }
}
#endif

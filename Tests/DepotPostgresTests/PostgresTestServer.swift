#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import Testing

/// The server the tests use: `DEPOT_POSTGRES_URL` (see scripts/with-postgres.sh). Without it
/// every server suite is skipped through `.enabled(if: isAvailable, …)`, which reports the reason.
enum PostgresTestServer {
    static let url: String? = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }

    static var isAvailable: Bool { url != nil }

    /// A fresh schema name, so that parallel tests never share data.
    static func uniqueSchema() -> String {
        "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20)
    }

    /// A driver on `schema` (one connection pool per call: a second call is a second "host").
    static func driver(schema: String, configure: (inout PostgresConfiguration) -> Void = { _ in }) throws -> PostgresDriver {
        guard let url else { throw PostgresDriverError.invalidConfiguration("DEPOT_POSTGRES_URL is not set") }
        var configuration = try PostgresConfiguration(url: url)
        configuration.schema = schema
        configure(&configuration)
        return try PostgresDriver(configuration: configuration)
    }

    /// Runs `body` with a driver on a new schema, then drops the schema.
    static func withDriver<R>(configure: (inout PostgresConfiguration) -> Void = { _ in },
                              _ body: (PostgresDriver) throws -> R) throws -> R {
        let driver = try driver(schema: uniqueSchema(), configure: configure)
        defer {
            try? driver.dropSchema()
            driver.close()
        }
        return try body(driver)
    }
}

/// The Depot condition for "eventually": polls `condition` until it holds or `seconds` pass.
func eventually(within seconds: Double = 10, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        usleep(10_000)
    }
    return try condition()
}
#endif

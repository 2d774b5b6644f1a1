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

    /// Runs `body` with `count` drivers on one new schema (as that many hosts would share a
    /// store), then drops the schema and closes them.
    static func withHosts<R>(_ count: Int, configure: (inout PostgresConfiguration) -> Void = { _ in },
                             _ body: ([PostgresDriver]) throws -> R) throws -> R {
        let schema = uniqueSchema()
        let drivers = try (0..<count).map { _ in try driver(schema: schema, configure: configure) }
        defer {
            try? drivers.first?.dropSchema()
            for driver in drivers { driver.close() }
        }
        return try body(drivers)
    }
}

/// Runs a control script with one argument and waits for it; its exit status (-1 when it did
/// not exit normally). `posix_spawn` and `waitpid` rather than Foundation's `Process`, whose
/// exit notification was seen lost on Linux when several tests ran commands at once.
func runControl(_ path: String, _ argument: String) throws -> Int32 {
    var pid: pid_t = 0
    let arguments = [path, argument]
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    let spawned = posix_spawn(&pid, path, nil, nil, &argv, environ)
    guard spawned == 0 else { throw PostgresDriverError.invalidConfiguration("could not run \(path) (errno \(spawned))") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 {
        guard errno == EINTR else { return -1 }
    }
    // WIFEXITED / WEXITSTATUS, which Swift does not import.
    return status & 0x7f == 0 ? (status >> 8) & 0xff : -1
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

#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import Synchronization
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

/// Runs `body(thread, step)` for `steps` steps on each of `threads` threads at once, and waits
/// (60 s at most per thread). Whether every thread finished, and the errors thrown, described
/// (a step that throws does not stop its thread).
func concurrently(threads: Int, steps: Int, _ body: @escaping @Sendable (_ thread: Int, _ step: Int) throws -> Void) -> (finished: Bool, failures: [String]) {
    let failures = Mutex<[String]>([])
    let done = DispatchSemaphore(value: 0)
    for thread in 0..<threads {
        Thread {
            for step in 0..<steps {
                do {
                    try body(thread, step)
                } catch {
                    failures.withLock { $0.append(String(describing: error)) }
                }
            }
            done.signal()
        }.start()
    }
    var finished = true
    for _ in 0..<threads where done.wait(timeout: .now() + 60) != .success { finished = false }
    return (finished, failures.withLock { $0 })
}

/// `writer` makes keyspace `name` and stores a key in it (so that its driver caches the
/// handle); then `other` (another host) drops the keyspace and makes it anew: `writer`'s cached
/// handle names a dropped keyspace.
func remakeKeyspace(_ name: String, cachedBy writer: PostgresDriver, remadeBy other: PostgresDriver) throws {
    try writer.write { txn in
        let space = try #require(try txn.keyspace(named: name, create: true, multiValue: false))
        try value([0], forKey: [0], in: space, txn)
    }
    try other.write { txn in
        if let gone = try txn.keyspace(named: name, create: false, multiValue: false) { try txn.drop(gone) }
    }
    try other.write { txn in _ = try txn.keyspace(named: name, create: true, multiValue: false) }

    func value(_ value: [UInt8], forKey key: [UInt8], in space: Keyspace, _ txn: any StorageTransaction) throws {
        try value.withUnsafeBytes { v in try key.withUnsafeBytes { try txn.put(v, forKey: $0, in: space) } }
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

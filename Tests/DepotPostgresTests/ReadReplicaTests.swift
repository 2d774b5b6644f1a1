#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import Logging
import PostgresNIO
import Testing

/// `read_replicas` / ``PostgresConfiguration/readReplicas``: parsing and validation (no server
/// needed).
@Suite("PostgreSQL read replica configuration")
struct ReadReplicaConfigurationTests {
    @Test func urlParameterListsTheStandbys() throws {
        let config = try PostgresConfiguration(url: "postgres://ada:secret@db1:5432/app?read_replicas=r1:5433,[::1]:5434,r3",
                                               environment: [:])
        #expect(config.readReplicas == [.init(host: "r1", port: 5433), .init(host: "::1", port: 5434), .init(host: "r3", port: 5432)])
        #expect(config.endpoints == [.init(host: "db1", port: 5432)], "standbys are not failover hosts")
        #expect(config.readReplicaServer == "ada@r1:5433,::1:5434,r3:5432/app")
        try config.validate()

        let none = try PostgresConfiguration(url: "postgres://ada@db1/app", environment: [:])
        #expect(none.readReplicas.isEmpty)
        #expect(PostgresConfiguration(username: "ada").readReplicas.isEmpty)
    }

    @Test(arguments: ["", "r1:0", "r1:99999", "r1,,r2", ":5432", "r1:port", "r1,"])
    func badReplicaListsAreConfigurationErrors(_ list: String) {
        do {
            let config = try PostgresConfiguration(url: "postgres://ada:secret@db1/app?read_replicas=\(list)", environment: [:])
            Issue.record("read_replicas=\(list) was accepted: \(config.readReplicas)")
        } catch let PostgresDriverError.invalidConfiguration(message) {
            #expect(message.contains("read_replicas"))
            #expect(!message.contains("secret"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func validationNamesTheSetting() {
        for replica in [PostgresConfiguration.Endpoint(host: "", port: 5432), .init(host: "r1", port: 0), .init(host: "r1", port: 70_000)] {
            var config = PostgresConfiguration(username: "ada")
            config.readReplicas = [replica]
            let error = #expect(throws: PostgresDriverError.self) { try config.validate() }
            guard case .invalidConfiguration(let message)? = error else {
                Issue.record("not a configuration error: \(String(describing: error))")
                continue
            }
            #expect(message.contains("readReplicas"))
        }
    }
}

/// Whether a read of `driver` ran on a standby (asked inside the read transaction itself).
private func readRunsOnStandby(_ driver: PostgresDriver) throws -> Bool {
    try driver.read { txn in
        let session = try #require(txn as? PostgresTransaction).session
        return try session.integers("SELECT pg_is_in_recovery()::int::bigint") == [1]
    }
}

/// Whether a write of `driver` ran on a standby.
private func writeRunsOnStandby(_ driver: PostgresDriver) throws -> Bool {
    try driver.write { txn in
        let session = try #require(txn as? PostgresTransaction).session
        return try session.integers("SELECT pg_is_in_recovery()::int::bigint") == [1]
    }
}

/// Reads routed to the streaming replica that `DEPOT_POSTGRES_REPLICA=1 scripts/with-postgres.sh`
/// starts; writes stay on the primary.
@Suite("PostgreSQL reads on a standby", .enabled(if: ReplicaServer.url != nil && PostgresTestServer.isAvailable,
                                                  "DEPOT_POSTGRES_REPLICA_URL is not set (run with DEPOT_POSTGRES_REPLICA=1)"))
struct ReadReplicaRoutingTests {
    /// A driver on the primary with the test replica as its read replica, on a new schema.
    private func withRoutedDriver(_ body: (PostgresDriver, Store) throws -> Void) throws {
        let replica = try PostgresConfiguration(url: try #require(ReplicaServer.url))
        try PostgresTestServer.withDriver(configure: { $0.readReplicas = [.init(host: replica.host, port: replica.port)] }) { driver in
            try body(driver, try Store(driver: driver))
        }
    }

    @Test func readsRunOnTheStandbyAndWritesOnThePrimary() throws {
        try withRoutedDriver { driver, store in
            try store.write { tx in for i in 0..<5 { try tx.park(staff(i)) } }
            // The schema and the documents reach the standby with the WAL.
            #expect(eventually(within: 30) { (try? store.retrieve(Staff.self, id: 4)) != nil })
            #expect(try readRunsOnStandby(driver))
            #expect(try writeRunsOnStandby(driver) == false)
            #expect(try driver.readingFromPrimary { try readRunsOnStandby(driver) } == false)
            // The scope ends with the call, and nests.
            #expect(try readRunsOnStandby(driver))
            try driver.readingFromPrimary { () throws in
                driver.readingFromPrimary { #expect(driver.isReadingFromPrimary) }
                #expect(driver.isReadingFromPrimary)
                #expect(try readRunsOnStandby(driver) == false)
            }
            #expect(!driver.isReadingFromPrimary)
            // Another thread is not in the scope.
            driver.readingFromPrimary {
                let other = onAnotherThread { driver.isReadingFromPrimary }
                #expect(other == false)
            }
        }
    }

    @Test func readingFromPrimarySeesEachWriteAtOnce() throws {
        try withRoutedDriver { driver, store in
            try store.write { tx in try tx.park(staff(0)) }
            #expect(eventually(within: 30) { (try? store.retrieve(Staff.self, id: 0)) != nil })
            for i in 1...20 {
                try store.write { tx in try tx.park(staff(i)) }
                #expect(try driver.readingFromPrimary { try store.retrieve(Staff.self, id: i) } == staff(i))
            }
        }
    }

    @Test func aWriteReachesStandbyReadsWithinADeadline() throws {
        try withRoutedDriver { driver, store in
            try store.write { tx in try tx.park(staff(0)) }
            #expect(eventually(within: 30) { (try? store.retrieve(Staff.self, id: 0)) != nil })
            try store.write { tx in try tx.park(staff(100)) }
            #expect(eventually(within: 30) { (try? store.retrieve(Staff.self, id: 100)) == staff(100) })
            #expect(try readRunsOnStandby(driver))
            #expect(try store.read { tx in try tx.fetch(FetchRequest<Staff>()) }.map(\.id) == [0, 100])
        }
    }
}

/// A read replica that refuses connections: reads run on the primary, each within its deadline.
@Suite("PostgreSQL read replica unreachable", .enabled(if: PostgresTestServer.isAvailable, "DEPOT_POSTGRES_URL is not set"))
struct ReadReplicaFallbackTests {
    @Test func readsFallBackToThePrimary() throws {
        try PostgresTestServer.withDriver(configure: {
            // Nothing listens on port 1 of the loopback address.
            $0.readReplicas = [.init(host: "127.0.0.1", port: 1)]
            $0.connectTimeout = .seconds(2)
            $0.callTimeout = .seconds(5)
        }) { driver in
            let store = try Store(driver: driver)
            try store.write { tx in for i in 0..<3 { try tx.park(staff(i)) } }
            let start = Date()
            for i in 0..<3 {
                #expect(try store.retrieve(Staff.self, id: i) == staff(i), "read at once: it ran on the primary")
                #expect(try readRunsOnStandby(driver) == false)
            }
            let elapsed = Date().timeIntervalSince(start)
            #expect(elapsed < 5, "six reads took \(elapsed) s")
        }
    }

    /// The fallback is logged once, not per read, and without the password.
    @Test func theFallbackIsLoggedOnce() throws {
        guard let url = PostgresTestServer.url else { return }
        var configuration = try PostgresConfiguration(url: url)
        configuration.schema = PostgresTestServer.uniqueSchema()
        configuration.readReplicas = [.init(host: "127.0.0.1", port: 1)]
        configuration.connectTimeout = .seconds(2)
        let captured = CapturedLog()
        let driver = try PostgresDriver(configuration: configuration,
                                        logger: Logger(label: "test") { _ in CapturingHandler(log: captured) })
        defer {
            try? driver.dropSchema()
            driver.close()
        }
        let store = try Store(driver: driver)
        try store.write { tx in try tx.park(staff(1)) }
        for _ in 0..<5 { #expect(try store.retrieve(Staff.self, id: 1) == staff(1)) }
        let warnings = captured.lines.filter { $0.contains("no read replica reachable") }
        #expect(warnings.count == 1, "\(captured.lines)")
        #expect(warnings.allSatisfy { $0.contains("127.0.0.1:1") })
        if let password = configuration.password, !password.isEmpty {
            #expect(!captured.lines.contains { $0.contains(password) })
        }
    }
}

/// Log lines captured by ``CapturingHandler``.
private final class CapturedLog: @unchecked Sendable {
    // @unchecked Sendable: `stored` is only touched under `lock`.
    private let lock = NSLock()
    private var stored: [String] = []

    var lines: [String] { lock.withLock { stored } }
    func append(_ line: String) { lock.withLock { stored.append(line) } }
}

/// A log handler that keeps every line (message and metadata) in a ``CapturedLog``.
private struct CapturingHandler: LogHandler {
    let log: CapturedLog
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .notice

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        log.append("\(event.level) \(event.message) \(event.metadata ?? [:])")
    }
}

/// The answer of `body` on a new thread (waited for).
private func onAnotherThread(_ body: @escaping @Sendable () -> Bool) -> Bool {
    final class Box: @unchecked Sendable {
        // @unchecked Sendable: `value` is written before `done` is signalled and read after.
        var value = false
        let done = DispatchSemaphore(value: 0)
    }
    let box = Box()
    Thread.detachNewThread {
        box.value = body()
        box.done.signal()
    }
    box.done.wait()
    return box.value
}
#endif

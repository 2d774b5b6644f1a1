#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import Synchronization
import Testing

/// The dedicated server of `DEPOT_POSTGRES_FAULTS=1 scripts/with-postgres.sh …` and its control
/// command (`kill-postmaster`, `start`, `freeze`, `thaw`, `terminate-clients`): the fault
/// tests crash, stop and cut it without touching the server the other tests use.
enum FaultServer {
    static let environment = ProcessInfo.processInfo.environment
    static let url = environment["DEPOT_POSTGRES_FAULT_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let control = environment["DEPOT_POSTGRES_FAULT_CONTROL"].flatMap { $0.isEmpty ? nil : $0 }
    static var isAvailable: Bool { url != nil && control != nil }

    /// Runs the control command; throws when it fails.
    static func run(_ action: String) throws {
        let status = try runControl(try #require(control), action)
        try #require(status == 0, "fault control \(action) exited with \(status)")
    }

    /// The call timeout of the drivers under test.
    static let callTimeout: Duration = .seconds(3)
    /// How much later than its deadline a call may return (thread scheduling on a loaded host).
    static let slack: Duration = .seconds(4)

    /// A driver on a fresh schema of the fault server, with a short call timeout.
    static func driver() throws -> PostgresDriver {
        var configuration = try PostgresConfiguration(url: try #require(url))
        configuration.schema = PostgresTestServer.uniqueSchema()
        configuration.callTimeout = callTimeout
        configuration.connectTimeout = .seconds(1)
        configuration.maximumConnections = 8
        configuration.maximumConcurrentWrites = 8
        return try PostgresDriver(configuration: configuration)
    }
}

/// Faults under 8 writers and a reader on the dedicated server: every call returns within its
/// deadline (plus scheduling slack), no acknowledged write is lost, none is half applied, and
/// the same driver writes again once the server is back. Serialized: they share the server.
@Suite("PostgreSQL faults", .serialized,
       .enabled(if: FaultServer.isAvailable, "DEPOT_POSTGRES_FAULT_* are not set (run with DEPOT_POSTGRES_FAULTS=1)"))
struct FaultTests {
    /// Runs the workload around `fault`, then checks the promises; the workload's outcome.
    @discardableResult
    func survive(_ fault: (FaultWorkload) throws -> Void) throws -> FaultWorkload.Outcome {
        let driver = try FaultServer.driver()
        defer {
            try? driver.dropSchema()
            driver.close()
        }
        let workload = FaultWorkload(driver: driver)
        workload.start()
        #expect(eventually(within: 20) { workload.acknowledgedSinceMark >= 20 }, "no writes before the fault")
        try fault(workload)
        // The same driver writes again.
        workload.mark()
        #expect(eventually(within: 60) { workload.acknowledgedSinceMark >= 20 }, "the driver did not write again after recovery")
        let outcome = workload.stop()
        #expect(outcome.longest <= FaultServer.callTimeout + FaultServer.slack,
                "a call took \(outcome.longest), past its \(FaultServer.callTimeout) deadline")
        try workload.checkStored(outcome)
        print("fault test: \(outcome.acknowledged.count) writes acknowledged, \(outcome.failures.count) calls failed, longest call \(outcome.longest)")
        return outcome
    }

    @Test func postmasterKilledUnderWritersThenRestarted() throws {
        let outcome = try survive { _ in
            try FaultServer.run("kill-postmaster")
            usleep(500_000)
            try FaultServer.run("start")
        }
        #expect(!outcome.failures.isEmpty, "no call saw the server go away")
    }

    @Test func backendsTerminatedEvery400Milliseconds() throws {
        try survive { _ in
            for _ in 0..<10 {
                try FaultServer.run("terminate-clients")
                usleep(400_000)
            }
        }
    }

    @Test func serverFrozenLongerThanTheDeadline() throws {
        let outcome = try survive { _ in
            try FaultServer.run("freeze")
            defer { try? FaultServer.run("thaw") }
            // Calls in flight and calls started now pass their deadline and return.
            let frozenFor = FaultServer.callTimeout + .seconds(2)
            usleep(UInt32(frozenFor.components.seconds) * 1_000_000)
        }
        #expect(outcome.failures.contains { $0.contains("deadline") || $0.contains("no answer") },
                "no call reported the frozen server")
    }
}
#endif

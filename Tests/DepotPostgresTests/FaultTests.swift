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

/// Writers that each store pairs of entries (`a/N` and `b/N`, one transaction per N) until
/// told to stop, recording which writes were acknowledged, which failed and how long the
/// longest call took.
final class FaultWorkload: Sendable {
    struct Outcome: Sendable {
        var acknowledged: Set<Int> = []
        var failures: [String] = []
        var longest: Duration = .zero
        var acknowledgedSinceMark = 0
    }

    let driver: PostgresDriver
    private let next = Atomic(0)
    private let stopping = Atomic(false)
    private let finished = Atomic(0)
    private let outcome = Mutex(Outcome())
    let writers: Int

    init(driver: PostgresDriver, writers: Int = 8) {
        self.driver = driver
        self.writers = writers
    }

    static func key(_ side: String, _ n: Int) -> [UInt8] { Array("\(side)/\(n)".utf8) }

    /// Starts the writer threads and one reader thread.
    func start() {
        for _ in 0..<writers {
            Thread { [self] in
                while !stopping.load(ordering: .acquiring) {
                    let n = next.add(1, ordering: .relaxed).newValue
                    let started = ContinuousClock.now
                    do {
                        try driver.write { txn in
                            guard let space = try txn.keyspace(named: "pairs", create: true, multiValue: false) else { return }
                            try txn.store([1], forKey: Self.key("a", n), in: space)
                            try txn.store([2], forKey: Self.key("b", n), in: space)
                        }
                        let took = ContinuousClock.now - started
                        outcome.withLock {
                            $0.acknowledged.insert(n)
                            $0.acknowledgedSinceMark += 1
                            $0.longest = max($0.longest, took)
                        }
                    } catch {
                        let took = ContinuousClock.now - started
                        outcome.withLock {
                            $0.failures.append(String(describing: error))
                            $0.longest = max($0.longest, took)
                        }
                        usleep(20_000)
                    }
                }
                finished.add(1, ordering: .releasing)
            }.start()
        }
        Thread { [self] in
            while !stopping.load(ordering: .acquiring) {
                let started = ContinuousClock.now
                _ = try? driver.read { txn in
                    try txn.keyspace(named: "pairs", create: false, multiValue: false).flatMap { try txn.value(Self.key("a", 1), in: $0) }
                }
                let took = ContinuousClock.now - started
                outcome.withLock { $0.longest = max($0.longest, took) }
                usleep(10_000)
            }
            finished.add(1, ordering: .releasing)
        }.start()
    }

    /// Counts acknowledgements from now on.
    func mark() { outcome.withLock { $0.acknowledgedSinceMark = 0 } }

    /// Acknowledged writes since ``mark()``.
    var acknowledgedSinceMark: Int { outcome.withLock { $0.acknowledgedSinceMark } }

    /// Stops the threads and waits for them (each returns within its call's deadline).
    func stop() -> Outcome {
        stopping.store(true, ordering: .releasing)
        _ = eventually(within: 30) { finished.load(ordering: .acquiring) == writers + 1 }
        return outcome.withLock { $0 }
    }

    /// Checks, on a working server: every acknowledged pair is there, and no pair is half there.
    func checkStored(_ outcome: Outcome) throws {
        let stored: [String: [UInt8]] = try driver.read { txn in
            var entries: [String: [UInt8]] = [:]
            guard let space = try txn.keyspace(named: "pairs", create: false, multiValue: false) else { return entries }
            try txn.scan(space, lower: nil, upper: nil, prefix: nil, reverse: false) { key, value in
                entries[String(decoding: key, as: UTF8.self)] = [UInt8](value)
                return true
            }
            return entries
        }
        let lost = outcome.acknowledged.filter { stored["a/\($0)"] != [1] || stored["b/\($0)"] != [2] }
        #expect(lost.isEmpty, "\(lost.count) acknowledged writes were lost")
        let halves = stored.keys.filter { key in
            let n = key.dropFirst(2)
            return key.hasPrefix("a/") ? stored["b/\(n)"] == nil : stored["a/\(n)"] == nil
        }
        #expect(halves.isEmpty, "\(halves.count) writes were half applied")
        #expect(stored.count == 2 * Set(stored.keys.map { $0.dropFirst(2) }).count)
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

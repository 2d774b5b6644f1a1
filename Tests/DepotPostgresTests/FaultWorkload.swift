#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import Synchronization
import Testing

/// Writers that each store pairs of entries (`a/N` and `b/N`, one transaction per N) until
/// told to stop, recording which writes were acknowledged, which failed and how long the
/// longest call took.
///
/// `@unchecked Sendable`: `outcomeValue` is only touched under `outcomeLock`, an `NSLock`
/// (pthread's mutex, which ThreadSanitizer follows: `Synchronization.Mutex` waits on futexes
/// it does not see, so each access under it was reported as a race); the rest is `Sendable`.
final class FaultWorkload: @unchecked Sendable {
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
    private let outcomeLock = NSLock()
    private var outcomeValue = Outcome()
    let writers: Int

    init(driver: PostgresDriver, writers: Int = 8) {
        self.driver = driver
        self.writers = writers
    }

    static func key(_ side: String, _ n: Int) -> [UInt8] { Array("\(side)/\(n)".utf8) }

    private func withOutcome<R>(_ body: (inout Outcome) -> R) -> R {
        outcomeLock.withLock { body(&outcomeValue) }
    }

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
                        withOutcome {
                            $0.acknowledged.insert(n)
                            $0.acknowledgedSinceMark += 1
                            $0.longest = max($0.longest, took)
                        }
                    } catch {
                        let took = ContinuousClock.now - started
                        withOutcome {
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
                withOutcome { $0.longest = max($0.longest, took) }
                usleep(10_000)
            }
            finished.add(1, ordering: .releasing)
        }.start()
    }

    /// Counts acknowledgements from now on.
    func mark() { withOutcome { $0.acknowledgedSinceMark = 0 } }

    /// Acknowledged writes since ``mark()``.
    var acknowledgedSinceMark: Int { withOutcome { $0.acknowledgedSinceMark } }

    /// Stops the threads and waits for them (each returns within its call's deadline).
    func stop() -> Outcome {
        stopping.store(true, ordering: .releasing)
        _ = eventually(within: 30) { finished.load(ordering: .acquiring) == writers + 1 }
        return withOutcome { $0 }
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
#endif

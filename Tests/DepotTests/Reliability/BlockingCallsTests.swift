import DepotSupport
import Foundation
import Testing

/// The threads that async APIs run blocking driver calls on (`BlockingCalls`).
@Suite("Blocking calls")
struct BlockingCallsTests {
    /// Calls never wait for each other: 24 calls that each block until all 24 are running are all
    /// running within 5 s (more than this machine's cores: a queue on libdispatch's global
    /// threads runs a few at a time, the others waiting behind them).
    @Test func callsRunAtOnceHoweverManyBlock() async throws {
        let count = 24
        let arrived = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        // Lets the calls go once every one is running (and blocked), on a call of its own, so
        // that no thread of Swift's cooperative pool blocks.
        async let running = BlockingCalls.shared.run { () -> Int in
            // libdispatch's global threads, blocked, grow by about one a second: 24 blocked
            // items on a concurrent queue would take some 20 s to all run on 2 cores.
            let deadline = DispatchTime.now() + 5
            var running = 0
            while running < count, arrived.wait(timeout: deadline) == .success { running += 1 }
            for _ in 0..<count { release.signal() }
            return running
        }
        let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<count {
                group.addTask {
                    try await BlockingCalls.shared.run {
                        arrived.signal()
                        return release.wait(timeout: .now() + 20) == .success
                    }
                }
            }
            var results: [Bool] = []
            for try await outcome in group { results.append(outcome) }
            return results
        }
        #expect(try await running == count, "not every call ran at once")
        #expect(outcomes.count == count && outcomes.allSatisfy { $0 })
    }

    /// One call after another reuses a thread instead of making one each.
    @Test func callsOneAfterAnotherReuseThreads() async throws {
        let pool = BlockingCalls(idleLifetime: 60)
        for i in 0..<50 {
            let value = try await pool.run { i * 2 }
            #expect(value == i * 2)
        }
        #expect(pool.threadsStarted <= 2, "\(pool.threadsStarted) threads for 50 calls one after another")
    }

    /// A thread idle for the pool's idle lifetime ends: a later call makes a new one.
    @Test func anIdleThreadEnds() async throws {
        let pool = BlockingCalls(idleLifetime: 0.2)
        _ = try await pool.run { 0 }
        let first = pool.threadsStarted
        let deadline = Date().addingTimeInterval(10)
        while pool.threadsStarted == first, Date() < deadline {
            try await Task.sleep(for: .milliseconds(300))
            _ = try await pool.run { 0 }
        }
        #expect(pool.threadsStarted > first, "no thread ended while idle")
    }

    @Test func errorsReachTheCaller() async throws {
        struct Refused: Error {}
        await #expect(throws: Refused.self) { try await BlockingCalls.shared.run { () throws -> Int in throw Refused() } }
    }
}

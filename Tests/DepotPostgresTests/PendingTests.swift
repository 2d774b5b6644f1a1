#if Postgres
@testable import DepotPostgres
import Foundation
import Testing

/// ``Pending``: a result set by another thread wakes a blocked waiter, a wait past its deadline
/// ends with nothing, the first result wins, and a failure reaches its handler once.
@Suite("Pending results")
struct PendingTests {
    struct Failure: Error, Equatable {}

    @Test func aResultSetOnAnotherThreadWakesTheWaiter() throws {
        for round in 0..<200 {
            let pending = Pending<Int>()
            // Odd rounds set the result a millisecond late, so that the wait has begun to block;
            // even rounds as soon as the thread runs (before the wait or during it).
            let setter = Thread {
                if round % 2 == 1 { usleep(1_000) }
                pending.set(.success(round))
            }
            let started = Date()
            setter.start()
            let result = pending.wait(until: Date().addingTimeInterval(10))
            #expect(try result?.get() == round)
            #expect(Date().timeIntervalSince(started) < 10, "round \(round) woke by its deadline only")
        }
    }

    @Test func aWaitEndsAtItsDeadlineWithNothing() throws {
        let pending = Pending<Int>()
        let started = Date()
        #expect(pending.wait(until: started.addingTimeInterval(0.05)) == nil)
        #expect(Date().timeIntervalSince(started) >= 0.05)
        // Set after the waiter gave up: the next wait returns it at once.
        #expect(pending.set(.success(3)))
        #expect(try pending.wait(until: .distantPast)?.get() == 3)
    }

    @Test func theFirstResultWinsAndAFailureReachesItsHandlerOnce() {
        let pending = Pending<Int>()
        let failures = NSLock()
        nonisolated(unsafe) var seen = 0
        pending.onFailure { error in
            #expect(error is Failure)
            failures.withLock { seen += 1 }
        }
        #expect(pending.set(.failure(Failure())))
        #expect(!pending.set(.success(1)))
        #expect(!pending.set(.failure(Failure())))
        #expect(failures.withLock { seen } == 1)
        // A handler added after the failure runs at once.
        pending.onFailure { _ in failures.withLock { seen += 1 } }
        #expect(failures.withLock { seen } == 2)
        guard case .failure? = pending.current else {
            Issue.record("expected the failure to stay")
            return
        }
    }
}
#endif

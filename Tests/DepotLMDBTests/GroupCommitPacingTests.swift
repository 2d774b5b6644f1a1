import Foundation
import Synchronization
import Testing
import DepotTestSupport
@testable import DepotLMDB

/// Who the group-commit writer waits for: callers writing in a loop, not callers writing once.
@Suite("Group commit pacing")
struct GroupCommitPacingTests {
    @Test func loopingCallersAreExpectedBackOneOffCallersAreNot() {
        var pacer = GroupCommitPacer()
        let all = Array(0..<16), a = Array(0..<8), b = Array(8..<16)
        // Sixteen callers in a loop, all in each batch: from the second batch on, all expected.
        pacer.finished(callers: all, queued: [], at: 1)
        #expect(pacer.expected == 0, "nobody has come back yet")
        pacer.finished(callers: all, queued: [], at: 2)
        #expect(pacer.expected == 16)
        // Two halves alternating, each queueing while the other commits: both halves expected.
        var halves = GroupCommitPacer()
        halves.finished(callers: a, queued: b, at: 1)
        #expect(halves.expected == 8, "the queued half only")
        halves.finished(callers: b, queued: a, at: 2)
        halves.finished(callers: a, queued: [], at: 3)
        #expect(halves.expected == 8, "a came back; b has not been seen returning yet")
        halves.finished(callers: b, queued: [], at: 4)
        #expect(halves.expected == 16, "both halves return: the next batch waits for all of them")
        // One-off callers (new tasks every batch): only what is queued.
        var oneOff = GroupCommitPacer()
        for round in 0..<5 {
            oneOff.finished(callers: (100 * round)..<(100 * round + 10), queued: [7_000 + round], at: UInt64(round))
            #expect(oneOff.expected == 1)
        }
        // A queued closure of a caller expected back is not counted twice.
        pacer.finished(callers: all.dropLast(), queued: [15], at: 5)
        #expect(pacer.expected == 16)
    }

    /// The pacer keeps its caller sets as sorted arrays; a plain `Set` model of the same rule
    /// must agree on every batch of unsorted callers with repeats, and on queued closures.
    @Test func theSortedArraysAgreeWithSetsOnRandomBatches() {
        struct Model {
            var last: Set<Int> = [], earlier: Set<Int> = [], lastReturning: Set<Int> = []
            mutating func finished(callers: [Int], queued: [Int]) -> Int {
                let current = Set(callers)
                let returning = current.filter { last.contains($0) || earlier.contains($0) }
                let back = returning.union(lastReturning)
                lastReturning = returning
                earlier = last
                last = current
                return back.count + queued.filter { !back.contains($0) }.count
            }
        }
        var rng = SeededRandom(seed: 0x9ACE)
        var pacer = GroupCommitPacer()
        var model = Model()
        for batch in 0..<2_000 {
            let callers = (0..<rng.below(40)).map { _ in rng.below(48) - 8 }
            let queued = (0..<rng.below(12)).map { _ in rng.below(60) - 8 }
            pacer.finished(callers: callers, queued: queued, at: UInt64(batch))
            let expected = model.finished(callers: callers, queued: queued)
            #expect(pacer.expected == expected, "batch \(batch)")
            if pacer.expected != expected { return }
        }
    }

    @Test func aTaskKeepsItsIdentityAndOthersDiffer() async {
        let mine = withUnsafeCurrentTask { Environment.identity(of: $0) }
        #expect(mine != 0)
        #expect(withUnsafeCurrentTask { Environment.identity(of: $0) } == mine)
        let other = await Task.detached { withUnsafeCurrentTask { Environment.identity(of: $0) } }.value
        #expect(other != mine)
        #expect(Environment.identity(of: nil) == 0)
    }

    @Test func nobodyWaitsAfterAnIdleSpell() {
        var pacer = GroupCommitPacer()
        pacer.finished(callers: 0..<4, queued: [], at: 1_000)
        pacer.finished(callers: 0..<4, queued: [], at: 2_000)
        #expect(pacer.target(at: 2_500, patience: 1_000) == 4)
        #expect(pacer.target(at: 3_001, patience: 1_000) == 1, "the callers expected back did not come")
        #expect(GroupCommitPacer().target(at: 5, patience: 1_000) == 1, "a fresh writer never waits")
    }

    /// Two halves of looping callers that start out committing in alternate batches (each half
    /// queueing while the other commits, as under a slow fsync) end up in one batch.
    @Test(.timeLimit(.minutes(5))) func halvesOfLoopingCallersJoinOneBatch() async throws {
        let folder = TemporaryFolder()
        var options = EnvironmentOptions()
        options.unsafeDurability = [.noSync]
        // Returning callers come back well within it, even while other tests keep the test
        // process's thread pool busy (the last batch waits it out once for callers that are done).
        options.groupCommit.adaptiveWait = .seconds(5)
        let env = try Environment.open(path: folder.path, options: options)
        let db = try env.openDatabase("w", key: BigEndian<Int64>.self, value: BigEndian<Int64>.self)
        let writer = try env.asyncWriter()
        let holderStarted = Mutex(false), holding = Mutex(false)
        let release = DispatchSemaphore(value: 0), holderDone = DispatchSemaphore(value: 0)
        // A synchronous write holds the writer while the first half queues: they form one batch.
        Thread {
            try? env.write { _ in
                holderStarted.withLock { $0 = true }
                release.wait()
            }
            holderDone.signal()
        }.start()
        for _ in 0..<2_000 where !holderStarted.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        let loop: @Sendable (Int64) async throws -> Void = { caller in
            for round in 0..<12 as Range<Int64> {
                try await env.write { txn in
                    // The first half's first batch lasts until the second half has queued.
                    if caller == 0 && round == 0 {
                        holding.withLock { $0 = true }
                        let deadline = Date().addingTimeInterval(30)
                        while writer.pending < 8 && Date() < deadline { usleep(1_000) }
                    }
                    usleep(1_000) // each closure takes a while, so the other half queues meanwhile
                    try txn.put(round, forKey: caller * 100 + round, in: db)
                }
                try await Task.sleep(for: .milliseconds(1)) // work between writes: back after the next batch began
            }
        }
        let half: @Sendable (Range<Int64>) async throws -> Void = { callers in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for caller in callers { group.addTask { try await loop(caller) } }
                try await group.waitForAll()
            }
        }
        let first = Task { try await half(0..<8) }
        for _ in 0..<2_000 where writer.pending < 8 { try await Task.sleep(for: .milliseconds(5)) }
        release.signal()
        for _ in 0..<2_000 where !holding.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        try #require(holding.withLock { $0 })
        let second = Task { try await half(8..<16) }
        try await first.value
        try await second.value
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { holderDone.wait(); continuation.resume() }
        }
        #expect(try env.read { try $0.count(db) } == 16 * 12)
        #expect(writer.statistics.largest == 16, "the halves joined")
    }

    /// Tasks that write once are not waited for: a lone one-off write after a batch of four
    /// commits at once, not after `adaptiveWait`.
    @Test(.timeLimit(.minutes(5))) func oneOffWritersAreNotWaitedFor() async throws {
        let folder = TemporaryFolder()
        var options = EnvironmentOptions()
        options.unsafeDurability = [.noSync]
        // Far beyond what starved test threads can delay the writes (the time limit, 5 minutes,
        // fails a writer that waits it out).
        options.groupCommit.adaptiveWait = .seconds(600)
        let env = try Environment.open(path: folder.path, options: options)
        let db = try env.openDatabase("w", key: BigEndian<Int64>.self, value: BigEndian<Int64>.self)
        let start = Date()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<4 as Range<Int64> { group.addTask { try await env.write { try $0.put(i, forKey: i, in: db) } } }
            try await group.waitForAll()
        }
        try await Task { try await env.write { try $0.put(4, forKey: 4, in: db) } }.value
        #expect(Date().timeIntervalSince(start) < 240, "waited for callers that write once")
        #expect(try env.read { try $0.count(db) } == 5)
    }
}

import Foundation
import Synchronization
import Testing
import DepotTestSupport
@testable import DepotLMDB

private struct Refused: Error, Equatable { let n: Int }
private struct PollTimedOut: Error { let what: String }

@Suite("Async writes and group commit")
struct AsyncWriteTests {
    @Test func concurrentWritersAreBatchedAndIsolated() async throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let db = try env.openDatabase("w", key: BigEndian<Int64>.self, value: StringCodec.self)
        let results = await withTaskGroup(of: (Int, Result<Int, Error>).self) { group in
            for i in 0..<400 {
                group.addTask {
                    do {
                        let r = try await env.write { txn -> Int in
                            try txn.put("v\(i)", forKey: Int64(i), in: db)
                            if i % 10 == 3 { throw Refused(n: i) } // only this closure's work is undone
                            return i * 2
                        }
                        return (i, .success(r))
                    } catch {
                        return (i, .failure(error))
                    }
                }
            }
            var all: [(Int, Result<Int, Error>)] = []
            for await r in group { all.append(r) }
            return all
        }
        #expect(results.count == 400)
        for (i, result) in results {
            switch result {
            case .success(let v): #expect(i % 10 != 3 && v == i * 2)
            case .failure(let e): #expect(i % 10 == 3 && (e as? Refused) == Refused(n: i))
            }
        }
        try env.read { txn throws in
            #expect(try txn.count(db) == 360)
            #expect(try txn.get(3, in: db) == nil)
            #expect(try txn.get(4, in: db) == "v4")
        }
        let stats = try env.asyncWriter().statistics
        #expect(stats.batches < 400, "some writes must share a commit")
    }

    @Test func syncAndAsyncWritersMix() async throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let db = try env.openDatabase("m", key: StringCodec.self, value: BigEndian<Int64>.self)
        try await env.write { try $0.put(0, forKey: "counter", in: db) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                if i % 2 == 0 {
                    group.addTask {
                        try await env.write { txn throws in
                            let v = try txn.get("counter", in: db) ?? 0
                            try txn.put(v + 1, forKey: "counter", in: db)
                        }
                    }
                } else {
                    group.addTask { try synchronousIncrement(env, db) }
                }
            }
            try await group.waitForAll()
        }
        #expect(try env.read { try $0.get("counter", in: db) } == 200)
    }

    @Test func cancelledBeforeRunningGetsCancellationError() async throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let db = try env.openDatabase("c", key: StringCodec.self, value: StringCodec.self)
        // Hold the writer on a thread of its own so the queued job cannot start, then cancel it.
        let holder = WriterHolder(env)
        let task = Task { try await env.write { txn in try txn.put("x", forKey: "cancelled", in: db) } }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        let outcome = await task.result
        holder.release()
        #expect(throws: CancellationError.self) { try outcome.get() }
        try await Task.sleep(for: .milliseconds(50))
        #expect(try env.read { try $0.get("cancelled", in: db) } == nil)
        try await env.write { try $0.put("y", forKey: "after", in: db) } // the writer still works
    }

    @Test func aTaskWaitingForAQueueSlotCanBeCancelled() async throws {
        let folder = TemporaryFolder()
        var options = EnvironmentOptions()
        options.groupCommit.maxQueueLength = 1
        let env = try Environment.open(path: folder.path, options: options)
        let db = try env.openDatabase("c", key: StringCodec.self, value: StringCodec.self)
        let writer = try env.asyncWriter()
        let holder = WriterHolder(env) // the queued write cannot start, so its slot stays taken
        let first = Task { try await env.write { try $0.put("1", forKey: "first", in: db) } }
        let ended = Mutex(false)
        let second = Task {
            defer { ended.withLock { $0 = true } }
            try await env.write { try $0.put("2", forKey: "second", in: db) }
        }
        try await poll("the second write waits for a slot") { writer.waitingForSlot == 1 }
        second.cancel()
        // It must end now, while the writer is still held — not when a slot frees up.
        let endedWhileHeld = (try? await poll("the cancelled write ends") { ended.withLock { $0 } }) != nil
        holder.release()
        #expect(endedWhileHeld)
        await #expect(throws: CancellationError.self) { try await second.value }
        try await first.value
        #expect(try env.read { try $0.get("second", in: db) } == nil)
        #expect(writer.waitingForSlot == 0)
        try await env.write { try $0.put("3", forKey: "third", in: db) } // the slot was not leaked
    }

    /// Waits until `condition` holds, checking every few milliseconds, for at most five minutes
    /// (the tasks it waits for need threads of the cooperative pool, which synchronous tests
    /// running beside it can hold for minutes on 2 cores; a passing test waits only until then).
    private func poll(_ what: String, _ condition: () -> Bool) async throws {
        guard await pollAsync(seconds: 300, condition) else { throw PollTimedOut(what: what) }
    }

    @Test func manyTasksNoDeadlockNoLostWakeup() async throws {
        let folder = TemporaryFolder()
        var options = EnvironmentOptions()
        options.groupCommit.maxQueueLength = 64 // force backpressure
        let env = try Environment.open(path: folder.path, options: options)
        let db = try env.openDatabase("n", key: BigEndian<Int64>.self, value: BigEndian<Int64>.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<10_000 {
                group.addTask { try await env.write { try $0.put(Int64(i), forKey: Int64(i), in: db) } }
            }
            try await group.waitForAll()
        }
        #expect(try env.read { try $0.count(db) } == 10_000)
        #expect(try env.asyncWriter().pending == 0)
        let stats = try env.asyncWriter().statistics
        #expect(stats.peakQueue <= 64, "backpressure keeps the queue bounded")
        #expect(stats.peakQueue > 1)
    }
}

/// Holds the environment's writer in a synchronous write on a thread of its own until released.
final class WriterHolder: @unchecked Sendable {
    private let started = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    init(_ env: Environment) {
        let thread = Thread { [started, done, finished] in
            try? env.write { _ in
                started.signal()
                done.wait()
            }
            finished.signal()
        }
        thread.start()
        started.wait()
    }
    func release() {
        done.signal()
        finished.wait()
    }
}

/// A synchronous write, called from async tasks to mix both kinds of writers.
func synchronousIncrement(_ env: Environment, _ db: Database<StringCodec, BigEndian<Int64>>) throws {
    try env.write { txn throws in
        let v = try txn.get("counter", in: db) ?? 0
        try txn.put(v + 1, forKey: "counter", in: db)
    }
}

@Suite("Async write guarantees")
struct AsyncGuaranteeTests {
    @Test func effectsOfOneCallerHappenInOrder() async throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let db = try env.openDatabase("o", key: StringCodec.self, value: BigEndian<Int64>.self)
        let log = try env.openDatabase("log", key: BigEndian<Int64>.self, value: BigEndian<Int64>.self)
        // Noise from other tasks, so batches mix callers.
        let noise = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<300 { group.addTask { try await env.write { try $0.put(Int64(i), forKey: "noise\(i)", in: db) } } }
                try await group.waitForAll()
            }
        }
        for step in 1...100 as ClosedRange<Int64> {
            try await env.write { txn in
                let previous = try txn.get("mine", in: db) ?? 0
                try txn.put(previous, forKey: step, in: log) // what this step saw
                try txn.put(step, forKey: "mine", in: db)
            }
            // Read-your-writes: the await returned after the commit.
            #expect(try env.read { try $0.get("mine", in: db) } == step)
        }
        try await noise.value
        let seen = try env.read { try $0.entries(in: log).map { $0.value } }
        #expect(seen == Array(0..<100))
    }

    @Test func acknowledgedWritesAreVisibleToANewProcess() async throws {
        let exe = try #require(depotExecutable())
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let db = try env.openDatabase("acks", key: StringCodec.self, value: StringCodec.self)
        let acknowledged = try await withThrowingTaskGroup(of: String.self) { group in
            for i in 0..<500 {
                group.addTask {
                    let key = String(format: "k%04d", i)
                    try await env.write { try $0.put("v\(i)", forKey: key, in: db) }
                    return key
                }
            }
            var keys: [String] = []
            for try await k in group { keys.append(k) }
            return keys
        }
        let listed = try runProcess(exe, ["list", "--path", folder.path, "--db", "acks"])
        let keys = listed.out.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
        #expect(keys == acknowledged.sorted())
    }
}

@Suite("Async write hand-off")
struct AsyncHandOffTests {
    private struct Abort: Error {}

    @Test func aFailedGroupCommitFailsExactlyTheWritesOfItsBatch() async throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let db = try env.openDatabase("f", key: StringCodec.self, value: StringCodec.self)
        try await env.write { try $0.put("1", forKey: "before", in: db) }
        // Hold the writer (in a write that aborts, so that it does not take the simulated fault)
        // while eight writes queue up behind it: they become one batch.
        let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
        Thread {
            try? env.write { _ in
                started.signal()
                release.wait()
                throw Abort()
            }
            finished.signal()
        }.start()
        started.wait()
        let writer = try env.asyncWriter()
        let batch = Task {
            await withTaskGroup(of: Result<Int, Error>.self) { group in
                for i in 0..<8 {
                    group.addTask {
                        do { return .success(try await env.write { txn in try txn.put("v", forKey: "k\(i)", in: db); return i }) }
                        catch { return .failure(error) }
                    }
                }
                var results: [Result<Int, Error>] = []
                for await r in group { results.append(r) }
                return results
            }
        }
        for _ in 0..<2_000 where writer.pending < 8 { try await Task.sleep(for: .milliseconds(5)) }
        try #require(writer.pending == 8)
        env.simulateMetaWriteFailureOnNextCommit()
        release.signal()
        finished.wait()
        let results = await batch.value
        #expect(results.count == 8)
        for result in results {
            #expect(throws: LMDBError.panic) { try result.get() }
        }
        // The next write recovers the environment; none of the failed batch's work is stored.
        let after = try await env.write { txn -> String? in
            try txn.put("2", forKey: "after", in: db)
            return nil
        }
        #expect(after == nil, "an optional result of nil is returned as such")
        try env.read { txn throws in
            #expect(try txn.get("before", in: db) == "1")
            #expect(try txn.get("after", in: db) == "2")
            for i in 0..<8 { #expect(try txn.get("k\(i)", in: db) == nil) }
        }
        #expect(writer.statistics.largest == 8)
    }

    @Test func resultsReachTheirOwnCallers() async throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let db = try env.openDatabase("r", key: BigEndian<Int64>.self, value: BigEndian<Int64>.self)
        // Many rounds of concurrent writers, each checking it got its own closure's result back.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<16 {
                group.addTask {
                    for i in 0..<50 {
                        let key = Int64(w * 1_000 + i)
                        let echoed = try await env.write { txn -> Int64 in
                            try txn.put(key * 3, forKey: key, in: db)
                            return key * 3
                        }
                        #expect(echoed == key * 3)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try env.read { try $0.count(db) } == 800)
        #expect(try env.asyncWriter().pending == 0)
    }
}

@Suite("Group commit waiting bounds")
struct GroupCommitWaitTests {
    @Test(.timeLimit(.minutes(5))) func aFullBatchCommitsWithoutWaitingForMaxWait() async throws {
        let folder = TemporaryFolder()
        var options = EnvironmentOptions()
        options.groupCommit.maxWait = .seconds(3_600) // would hang the test if a full batch waited for it
        options.groupCommit.maxBatchSize = 4
        let env = try Environment.open(path: folder.path, options: options)
        let db = try env.openDatabase("w", key: BigEndian<Int64>.self, value: BigEndian<Int64>.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<8 as Range<Int64> { group.addTask { try await env.write { try $0.put(i, forKey: i, in: db) } } }
            try await group.waitForAll()
        }
        #expect(try env.read { try $0.count(db) } == 8)
        #expect(try env.asyncWriter().statistics.largest == 4)
    }

    @Test func waitsAreConvertedWithoutOverflow() {
        #expect(AsyncWriter.nanoseconds(.microseconds(500)) == 500_000)
        #expect(AsyncWriter.nanoseconds(.seconds(2) + .nanoseconds(3)) == 2_000_000_003)
        #expect(AsyncWriter.nanoseconds(.zero) == 0)
        #expect(AsyncWriter.nanoseconds(.seconds(-5)) == 0, "a negative wait is no wait")
        #expect(AsyncWriter.nanoseconds(.seconds(Int64.max)) == 1_000_000_000 * 1_000_000_000, "capped, no overflow")
    }
}

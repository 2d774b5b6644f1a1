import CLMDBBench
import DepotLMDB
import Foundation

/// Durable single-record writes from many concurrent tasks through the binding:
/// (a) each write its own synchronous `env.write {}` transaction (one fsync per write), vs
/// (b) `try await env.write {}`, which the environment's writer thread group-commits.
struct GroupCommitSample: Sendable {
    var writers: Int
    var writes: Int
    var seconds: Double
    var latencies: [UInt64]
    /// Write transactions committed (LMDB's last transaction ID before and after): the mean batch
    /// size is writes / commits.
    var commits: Int
    var meanBatch: Double { Double(writes) / Double(max(commits, 1)) }
    var writesPerSecond: Double { Double(writes) / seconds }
    var p50Ms: Double { Double(percentile(latencies, 50)) / 1e6 }
    var p99Ms: Double { Double(percentile(latencies, 99)) / 1e6 }
    var json: [String: Any] {
        ["writers": writers, "writes": writes, "seconds": seconds.rounded(places: 4),
         "writesPerSecond": writesPerSecond.rounded(places: 1), "p50Ms": p50Ms.rounded(places: 3),
         "p99Ms": p99Ms.rounded(places: 3),
         "commits": commits, "meanBatch": meanBatch.rounded(places: 2)]
    }
}

/// One durable write in its own synchronous transaction. A nonisolated synchronous function, so
/// the calling task blocks its thread while it waits for the writer and the fsync, as code that
/// calls the synchronous API from async contexts does.
func syncDurableWrite(_ env: Environment, _ db: LMDBEngine.KV, key: UInt64, value: [UInt8]) throws -> UInt64 {
    let t0 = now()
    try env.write { txn in try txn.put(value, forKey: key, in: db) }
    return now() - t0
}

enum GroupCommitBench {
    /// Writer `w`'s `i`-th key is `w * perTask + i` (each writer appends in a range of its own, so
    /// the writes of one batch land on as many leaf pages as there are writers), or with
    /// `interleaved` `i * writers + w` (concurrent writes are neighbours, as with time-ordered IDs).
    static func run(writers: Int, totalWrites: Int, grouped: Bool, maxWait: Duration = .zero,
                    folder: String, value: [UInt8], noSync: Bool = false, interleaved: Bool = false) async throws -> GroupCommitSample {
        let (env, db) = try LMDBEngine.open(folder, maxWait: maxWait, noSync: noSync)
        defer { try? env.close() }
        let perTask = max(1, totalWrites / writers)
        let firstTransaction = try env.info().lastTransactionID
        let t0 = now()
        let latencies = try await withThrowingTaskGroup(of: [UInt64].self) { group in
            for w in 0..<writers {
                group.addTask {
                    var latencies: [UInt64] = []
                    latencies.reserveCapacity(perTask)
                    for i in 0..<perTask {
                        let key = UInt64(interleaved ? i * writers + w : w * perTask + i)
                        if grouped {
                            let start = now()
                            try await env.write { txn in try txn.put(value, forKey: key, in: db) }
                            latencies.append(now() - start)
                        } else {
                            latencies.append(try syncDurableWrite(env, db, key: key, value: value))
                        }
                    }
                    return latencies
                }
            }
            var all: [UInt64] = []
            for try await part in group { all += part }
            return all
        }
        let seconds = Double(now() - t0) / 1e9
        let commits = try env.info().lastTransactionID - firstTransaction
        let stored = try env.read { txn in try txn.count(db) }
        guard stored == perTask * writers else {
            throw BenchError("group commit: \(stored) records stored, expected \(perTask * writers)")
        }
        return GroupCommitSample(writers: writers, writes: perTask * writers, seconds: seconds, latencies: latencies,
                                 commits: commits)
    }

    /// The C baseline: one writer, one durable transaction per write.
    static func runC(writes: Int, folder: String, value: [UInt8]) throws -> GroupCommitSample {
        var latencies = [UInt64](repeating: 0, count: writes)
        let ns = try checked(latencies.withUnsafeMutableBufferPointer {
            clmdb_durable_single_writes(folder, 0, writes, value.count, $0.baseAddress)
        }, "durable single writes")
        return GroupCommitSample(writers: 1, writes: writes, seconds: Double(ns) / 1e9, latencies: latencies, commits: writes)
    }
}

extension Double {
    func rounded(places: Int) -> Double {
        guard isFinite else { return self }
        let scale = pow(10, Double(places))
        return (self * scale).rounded() / scale
    }
}

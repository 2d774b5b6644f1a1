import CLMDBBench
import DepotLMDB
import Foundation
import Synchronization
#if !DEPOT_COMPARE_NO_DOCUMENTS
import Depot
#endif

#if !DEPOT_COMPARE_NO_DOCUMENTS
/// `Person` without the macro: plain `Codable`, what a user writes first.
struct CodablePerson: Codable, Sendable, Identifiable, Document {
    var id: String
    var name: String
    var age: Int
    var email: String
    var tags: [String]
    init(_ p: Person) { id = p.id; name = p.name; age = p.age; email = p.email; tags = p.tags }
}
#endif

/// `depot-compare --read-scaling`: one read transaction per lookup (a service's request pattern)
/// from T threads at once, for C on liblmdb (`begin`/`get`/`abort`, reader slot kept per thread),
/// the binding (`env.read { withValue }`), and documents (`store.read { retrieve }`) with the
/// generated codec and with plain `Codable`. Every thread has its own keys and random generator.
/// Prints operations per second, each engine's ratio to C at the same thread count, and its
/// speed-up over its own one-thread rate.
enum ReadScaling {
    enum Engine: String, CaseIterable, Sendable {
        case c, lmdb, documents, codable
    }

    /// The stores every engine reads: `n` key/value records (8-byte big-endian keys, 100-byte
    /// values) and `n` documents twice (generated codec, plain Codable).
    struct Stores: Sendable {
        let kvFolder: String
        let documentFolder: String
        let codableFolder: String
        let ids: [String]
    }

    static func prepare(n: Int, scratch: Scratch) throws -> Stores {
        let people = Person.generate(n, seed: 42)
        let stores = Stores(kvFolder: scratch.folder("read-scaling-kv"), documentFolder: scratch.folder("read-scaling-doc"),
                            codableFolder: scratch.folder("read-scaling-codable"), ids: people.map(\.id))
        _ = try checked(clmdb_append_put(stores.kvFolder, n, 100, nil), "append put")
        #if !DEPOT_COMPARE_NO_DOCUMENTS
        var options = StoreOptions()
        options.environment.mapSize = 4 << 30
        for start in stride(from: 0, to: n, by: 100_000) {
            let batch = people[start..<min(n, start + 100_000)]
            let store = try Store(path: stores.documentFolder, options: options)
            try store.write { tx in for p in batch { try tx.park(p) } }
            let codable = try Store(path: stores.codableFolder, options: options)
            try codable.write { tx in for p in batch { try tx.park(CodablePerson(p)) } }
        }
        #endif
        return stores
    }

    /// One measurement: total read transactions, elapsed nanoseconds, checksum.
    struct Result { var ops: UInt64; var nanoseconds: UInt64; var checksum: UInt64
        var perSecond: Double { nanoseconds == 0 ? 0 : Double(ops) * 1e9 / Double(nanoseconds) }
    }

    /// Runs `engine` on `threads` threads for `seconds`, or exactly `opsPerThread` transactions
    /// each (one thread: on the calling thread, reading the clock exactly twice).
    static func run(_ engine: Engine, stores: Stores, threads: Int, seconds: Double, opsPerThread: Int = 0) throws -> Result {
        let n = UInt64(stores.ids.count)
        switch engine {
        case .c:
            var elapsed: UInt64 = 0, checksum: UInt64 = 0
            let ops = clmdb_read_transactions(stores.kvFolder, Int32(threads), seconds, UInt64(opsPerThread), n, &elapsed, &checksum)
            guard ops > 0 else { throw BenchError("c: the read transactions failed") }
            return Result(ops: ops, nanoseconds: elapsed, checksum: checksum)
        case .lmdb:
            let (env, db) = try LMDBEngine.open(stores.kvFolder)
            defer { try? env.close() }
            return try parallel(threads: threads, seconds: seconds, opsPerThread: opsPerThread) { _ in
                { (rng: inout SplitMix64) throws -> UInt64 in
                    let key = rng.next() % n
                    return try env.read { txn in try txn.withValue(forKey: key, in: db) { UInt64($0[0]) } } ?? 0
                }
            }
        case .documents, .codable:
            #if DEPOT_COMPARE_NO_DOCUMENTS
            throw BenchError("built without documents")
            #else
            let store = try Store(path: engine == .documents ? stores.documentFolder : stores.codableFolder)
            let ids = stores.ids
            return try parallel(threads: threads, seconds: seconds, opsPerThread: opsPerThread) { _ in
                // Per-thread copies: no string storage shared between threads.
                let mine = ids.map { String(decoding: Array($0.utf8), as: UTF8.self) }
                if engine == .documents {
                    return { (rng: inout SplitMix64) throws -> UInt64 in
                        let id = mine[Int(rng.next() % n)]
                        return try store.read { tx in UInt64(try tx.retrieve(Person.self, id: id)?.age ?? 0) }
                    }
                }
                return { (rng: inout SplitMix64) throws -> UInt64 in
                    let id = mine[Int(rng.next() % n)]
                    return try store.read { tx in UInt64(try tx.retrieve(CodablePerson.self, id: id)?.age ?? 0) }
                }
            }
            #endif
        }
    }

    /// A thread's loop body: made on the thread (so its state is its own), called per transaction.
    typealias MakeReader = @Sendable (Int) -> (inout SplitMix64) throws -> UInt64

    /// Runs `threads` threads, each calling its reader until the deadline (checked every 64
    /// calls) or `opsPerThread` times.
    static func parallel(threads: Int, seconds: Double, opsPerThread: Int, _ make: @escaping MakeReader) throws -> Result {
        if threads == 1 && opsPerThread > 0 {
            let read = make(0)
            var rng = SplitMix64(seed: 0x5EED)
            var sum: UInt64 = 0
            let t0 = now()
            for _ in 0..<opsPerThread { sum &+= try read(&rng) }
            let elapsed = now() - t0
            return Result(ops: UInt64(opsPerThread), nanoseconds: elapsed, checksum: sum)
        }
        let shared = SharedRun()
        let done = DispatchGroup()
        let make = make
        for index in 0..<threads {
            done.enter()
            let thread = Thread {
                defer { done.leave() }
                let read = make(index)
                var rng = SplitMix64(seed: 0x5EED &+ UInt64(index) &* 7919)
                shared.ready.add(1, ordering: .sequentiallyConsistent)
                while shared.deadline.load(ordering: .acquiring) == 0 {}
                let deadline = shared.deadline.load(ordering: .acquiring)
                var ops: UInt64 = 0, sum: UInt64 = 0
                do {
                    while true {
                        if opsPerThread > 0 ? ops == UInt64(opsPerThread) : (ops & 63 == 0 && now() >= deadline) { break }
                        sum &+= try read(&rng)
                        ops &+= 1
                    }
                } catch {
                    shared.failure.withLock { $0 = "\(error)" }
                }
                shared.ops.add(ops, ordering: .relaxed)
                shared.checksum.add(sum, ordering: .relaxed)
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        while shared.ready.load(ordering: .sequentiallyConsistent) < threads { sched_yield() }
        let t0 = now()
        shared.deadline.store(t0 + UInt64(seconds * 1e9), ordering: .releasing)
        done.wait()
        let elapsed = now() - t0
        if let failure = shared.failure.withLock({ $0 }) { throw BenchError("read scaling: \(failure)") }
        return Result(ops: shared.ops.load(ordering: .relaxed), nanoseconds: elapsed, checksum: shared.checksum.load(ordering: .relaxed))
    }

    final class SharedRun: Sendable {
        let ready = Atomic<Int>(0)
        let deadline = Atomic<UInt64>(0)
        let ops = Atomic<UInt64>(0)
        let checksum = Atomic<UInt64>(0)
        let failure = Mutex<String?>(nil)
    }

    /// The whole mode: every engine at every thread count, interleaved, printed as a table.
    static func measure(threadCounts: [Int], records: Int, seconds: Double, scratch: Scratch, json: String?) throws {
        log("read scaling: \(records) records, \(seconds) s per point, threads \(threadCounts.map(String.init).joined(separator: ",")), \(Machine.cores) cores")
        let stores = try prepare(n: records, scratch: scratch)
        // Untimed pass per engine: page faults of the fresh maps are not measured.
        for engine in Engine.allCases { _ = try run(engine, stores: stores, threads: 1, seconds: min(seconds, 0.5)) }
        var rates: [Engine: [Int: Double]] = [:]
        for threads in threadCounts {
            for engine in Engine.allCases {
                let result = try run(engine, stores: stores, threads: threads, seconds: seconds)
                rates[engine, default: [:]][threads] = result.perSecond
            }
        }
        print(table(rates, threadCounts: threadCounts, records: records, seconds: seconds))
        if let json {
            var rows: [[String: Any]] = []
            for threads in threadCounts {
                var row: [String: Any] = ["threads": threads]
                for engine in Engine.allCases { row[engine.rawValue] = (rates[engine]?[threads] ?? 0).rounded() }
                rows.append(row)
            }
            let object: [String: Any] = ["mode": "read-scaling", "records": records, "seconds": seconds,
                                         "cores": Machine.cores, "cpu": Machine.cpuModel ?? "unknown", "lmdb": Machine.lmdbVersion,
                                         "rows": rows]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
            try data.write(to: URL(fileURLWithPath: json))
            log("wrote \(json)")
        }
    }

    static func table(_ rates: [Engine: [Int: Double]], threadCounts: [Int], records: Int, seconds: Double) -> String {
        var lines = ["read transactions per second (one get each), \(records) records, \(seconds) s per point, \(Machine.cores) cores",
                     "| threads | C (begin/get/abort) | binding | × C | × own 1 thread | documents (macro) | × C | × own 1 thread | documents (Codable) | × C | × own 1 thread |",
                     "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        func rate(_ e: Engine, _ t: Int) -> Double { rates[e]?[t] ?? 0 }
        let first = threadCounts.first ?? 1
        for t in threadCounts {
            let c = rate(.c, t)
            var cells = ["\(t)", String(format: "%.0f", c)]
            for e in [Engine.lmdb, .documents, .codable] {
                let r = rate(e, t), own = rate(e, first)
                cells += [String(format: "%.0f", r), String(format: "%.2f", c > 0 ? r / c : 0),
                          String(format: "%.2f", own > 0 ? r / own : 0)]
            }
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }
}

// Micro-benchmarks of the DepotLMDB binding's hot paths, run by package-benchmark:
//
//     swift package --package-path Benchmarks benchmark
//
// Every benchmark does `benchmark.scaledIterations` (1,000 with `.kilo`) operations per
// iteration, so the reported numbers are per operation: wall clock time, mallocs (the goal is 0
// for get and put) and throughput. Transactions are begun outside the measured region.

import Benchmark
import DepotLMDB
import Foundation

/// Number of records in the benchmark database; keys are 0..<recordCount, big-endian.
let recordCount = 100_000

/// A fixed pseudo-random sequence of existing keys (SplitMix64), 64K long.
let randomExistingKeys: [UInt64] = {
    var state: UInt64 = 0x5EED
    return (0..<65_536).map { _ in
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return (z ^ (z >> 31)) % UInt64(recordCount)
    }
}()

struct Fixture: Sendable {
    let env: Environment
    let db: Database<BigEndian<UInt64>, BytesCodec>
    let value: [UInt8]

    static let shared: Fixture = {
        let folder = FileManager.default.temporaryDirectory.path + "/depot-benchmarks-\(getpid())"
        try? FileManager.default.removeItem(atPath: folder)
        do {
            var options = EnvironmentOptions()
            options.mapSize = 1 << 30
            let env = try Environment.open(path: folder, options: options)
            let db = try env.openDatabase("bench", key: BigEndian<UInt64>.self, value: BytesCodec.self)
            let value = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            try env.write { txn in
                for key in 0..<UInt64(recordCount) { try txn.put(value, forKey: key, in: db, flags: .append) }
            }
            return Fixture(env: env, db: db, value: value)
        } catch {
            fatalError("cannot set up the benchmark database in \(folder): \(error)")
        }
    }()
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .throughput],
        warmupIterations: 3,
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 1_000
    )

    Benchmark("binding get (random existing key, zero-copy withValue)") { benchmark in
        let f = Fixture.shared
        let keys = randomExistingKeys
        let txn = try f.env.beginTransaction(readOnly: true)
        defer { txn.abort() }
        var sum = 0
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            sum &+= try txn.withValue(forKey: keys[i & 0xFFFF], in: f.db) { Int($0[0]) } ?? 0
        }
        benchmark.stopMeasurement()
        blackHole(sum)
    }

    Benchmark("binding get (random existing key, decoded [UInt8])") { benchmark in
        let f = Fixture.shared
        let keys = randomExistingKeys
        let txn = try f.env.beginTransaction(readOnly: true)
        defer { txn.abort() }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            blackHole(try txn.get(keys[i & 0xFFFF], in: f.db))
        }
        benchmark.stopMeasurement()
    }

    Benchmark("binding put (overwrite random existing key)") { benchmark in
        let f = Fixture.shared
        let keys = randomExistingKeys
        let value = f.value
        let txn = try f.env.beginTransaction()
        defer { txn.abort() }   // aborted: the database stays as it was
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            try txn.put(value, forKey: keys[i & 0xFFFF], in: f.db)
        }
        benchmark.stopMeasurement()
    }

    Benchmark("binding put (append new keys)") { benchmark in
        let f = Fixture.shared
        let value = f.value
        let txn = try f.env.beginTransaction()
        defer { txn.abort() }
        let base = UInt64(recordCount)
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            try txn.put(value, forKey: base + UInt64(i), in: f.db, flags: .append)
        }
        benchmark.stopMeasurement()
    }

    Benchmark("binding scan (forEachRaw, per record)") { benchmark in
        let f = Fixture.shared
        let txn = try f.env.beginTransaction(readOnly: true)
        defer { txn.abort() }
        let n = benchmark.scaledIterations.count
        var seen = 0
        var sum = 0
        benchmark.startMeasurement()
        try txn.forEachRaw(in: f.db, range: .all) { _, value in
            sum &+= Int(value[0])
            seen += 1
            return seen < n
        }
        benchmark.stopMeasurement()
        blackHole(sum)
    }

    Benchmark("read transaction begin/end (env.read {})") { benchmark in
        let f = Fixture.shared
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try f.env.read { txn in txn.isActive })
        }
        benchmark.stopMeasurement()
    }

    Benchmark("read transaction begin/end (beginTransaction(readOnly:) + abort)") { benchmark in
        let f = Fixture.shared
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let txn = try f.env.beginTransaction(readOnly: true)
            txn.abort()
        }
        benchmark.stopMeasurement()
    }
}

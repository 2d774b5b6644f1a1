// Measures durable single-entry writes and point reads through the StorageDriver protocol:
// PostgreSQL (DEPOT_POSTGRES_URL, a fresh schema dropped at the end) against LMDB (a temporary
// folder), then documents through Store: inserts, gets by ID, indexed queries and 1/8/64
// concurrent writers. Usage: depot-postgres-bench [WRITES] [READS] [DOCUMENTS]
//
// `depot-postgres-bench compare [SECONDS]`: pgbench and Depot side by side on the same server
// (see Compare.swift), as the README's PostgreSQL table is measured.
// `depot-postgres-bench writers COUNT [SECONDS] [indexed|plain|watched] [threads|tasks]`: Depot's writers alone (no
// baseline), commits/s and CPU per commit, for profiling the server and the client side by side.
// `depot-postgres-bench trace writes|reads|gets|gets-in-read COUNT`: one kind of operation, for counting the
// statements the server logs (see Trace.swift).
#if Postgres
import Depot
import DepotLMDB
import DepotPostgres
import Foundation

let words = Array(CommandLine.arguments.dropFirst())
if ["compare", "writers-child", "trace", "writers"].contains(words.first) {
    guard let url = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"] else {
        print("DEPOT_POSTGRES_URL is not set")
        exit(1)
    }
    do {
        if words.first == "compare" {
            try Compare.run(url: url, seconds: words.dropFirst().first.flatMap { Double($0) } ?? 3)
        } else if words.first == "trace" {
            try Trace.run(Array(words.dropFirst()), url: url)
        } else if words.first == "writers" {
            try Compare.writersAlone(Array(words.dropFirst()), url: url)
        } else {
            try Compare.child(Array(words.dropFirst()), url: url)
        }
        exit(0)
    } catch {
        print("depot-postgres-bench: \(error)")
        exit(1)
    }
}

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let writes = arguments.first ?? 300
let reads = arguments.dropFirst().first ?? 2000
let documents = max(100, arguments.dropFirst(2).first ?? 400)
let writerCounts = [1, 8, 64]

func microseconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
}

func report(_ name: String, _ samples: [Double]) {
    let sorted = samples.sorted()
    guard !sorted.isEmpty else { return }
    let median = sorted[sorted.count / 2], p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
    let mean = sorted.reduce(0, +) / Double(sorted.count)
    print(String(format: "%-28@ n=%5d  median %8.1f µs  mean %8.1f µs  p99 %8.1f µs", name as NSString, sorted.count, median, mean, p99))
}

func measure(_ label: String, _ driver: any StorageDriver) throws {
    let value = [UInt8](repeating: 0xab, count: 100)
    func key(_ i: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(i).bigEndian) { [UInt8]($0) } }
    var samples: [Double] = []
    for i in 0..<writes {
        samples.append(try microseconds {
            try driver.write { txn in
                guard let space = try txn.keyspace(named: "bench", create: true, multiValue: false) else { return }
                try value.withUnsafeBytes { v in try key(i).withUnsafeBytes { try txn.put(v, forKey: $0, in: space) } }
            }
        })
    }
    report("\(label) write+commit", samples)
    samples = []
    for i in 0..<reads {
        samples.append(try microseconds {
            let found = try driver.read { txn in
                try txn.keyspace(named: "bench", create: false, multiValue: false).flatMap { space in
                    try key(i % writes).withUnsafeBytes { try txn.withValue(forKey: $0, in: space) { $0.count } }
                }
            }
            if found != value.count { print("missing value for key \(i % writes)") }
        })
    }
    report("\(label) point read", samples)
    samples = []
    for _ in 0..<min(reads, 500) {
        samples.append(try microseconds { try driver.read { _ in } })
    }
    report("\(label) empty read txn", samples)
    samples = []
    for _ in 0..<min(reads, 500) {
        samples.append(try microseconds { _ = try driver.read { try $0.keyspace(named: "bench", create: false, multiValue: false) } })
    }
    report("\(label) read txn + keyspace", samples)
    // One statement at a time inside one read transaction: the cost of a round trip.
    samples = []
    try driver.read { txn in
        guard let space = try txn.keyspace(named: "bench", create: false, multiValue: false) else { return }
        for i in 0..<min(reads, 500) {
            samples.append(try microseconds {
                _ = try key(i % writes).withUnsafeBytes { try txn.withValue(forKey: $0, in: space) { $0.count } }
            })
        }
    }
    report("\(label) get in open txn", samples)
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
try measure("LMDB", LMDBDriver(environment: Environment.open(path: folder.path)))
try measureDocuments("LMDB", Store(path: folder.path + "/documents"), documents: documents, writerCounts: writerCounts)

if let url = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"] {
    var configuration = try PostgresConfiguration(url: url)
    configuration.schema = "bench_" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    let driver = try PostgresDriver(configuration: configuration)
    defer { driver.close() }
    try measure("PostgreSQL", driver)
    // As many connections as writers, so that the 64-writer run measures the server's group
    // commit rather than the pool.
    var documentConfiguration = configuration
    documentConfiguration.schema = configuration.schema + "_docs"
    documentConfiguration.maximumConnections = writerCounts.max() ?? 8
    // DEPOT_BENCH_WRITE_SLOTS: the driver's maximumConcurrentWrites (default: the driver's, 1);
    // 64 lets every writer overlap, as before the write gate.
    if let slots = ProcessInfo.processInfo.environment["DEPOT_BENCH_WRITE_SLOTS"].flatMap({ Int($0) }) {
        documentConfiguration.maximumConcurrentWrites = slots
    }
    let documentDriver = try PostgresDriver(configuration: documentConfiguration)
    defer { documentDriver.close() }
    try measureDocuments("PostgreSQL", Store(driver: documentDriver), documents: documents, writerCounts: writerCounts)
    print("(schemas \(configuration.schema) and \(documentConfiguration.schema) left in place; drop them with DROP SCHEMA … CASCADE)")
} else {
    print("DEPOT_POSTGRES_URL is not set: PostgreSQL skipped")
}
#endif

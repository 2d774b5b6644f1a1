#if Postgres
import Depot
import DepotPostgres
import Foundation

/// `depot-postgres-bench trace KIND COUNT`: COUNT operations of one kind on a fresh schema, one
/// at a time, for counting the statements the server sees (with `log_min_duration_statement=0`:
/// run it with COUNT 0 and COUNT n and divide the difference of the log's statement lines by n)
/// and timing them. KIND: `writes` (`Store.write` of one new document with one index),
/// `plain-writes` (the same document without its index, one row, in a store holding only it:
/// no schema version),
/// `reads` (a point read through the driver, `driver.read`), `first-reads` (the same read whose
/// snapshot is its first statement, `driver.readFromFirstOperation`), `gets` (a document get by
/// ID, `store.retrieve`) or `gets-in-read` (the same get inside `store.read {}`). Prints the
/// mean latency in ms. `watched-writes`: the same writes with a change watcher attached (another
/// driver on the schema), so that each write logs its changes. `batch-writes`: `Store.write` of
/// ten new documents; `updates`: a write that retrieves a stored document and parks it back;
/// `deletes`: a write that deletes one stored document (COUNT of them stored first, untimed).
/// `DEPOT_TRACE_CONNECTIONS=N` sets
/// the pool size and `DEPOT_TRACE_DOCUMENTS=N` stores N documents in one write first (as
/// `compare` does before its reads).
enum Trace {
    static func run(_ arguments: [String], url: String) throws {
        guard arguments.count == 2, let count = Int(arguments[1]), count >= 0 else {
            throw PostgresDriverError.invalidConfiguration("usage: trace writes|plain-writes|watched-writes|batch-writes|updates|deletes|reads|first-reads|gets|gets-in-read COUNT")
        }
        var configuration = try PostgresConfiguration(url: url)
        configuration.schema = "trace_" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let environment = ProcessInfo.processInfo.environment
        if let connections = environment["DEPOT_TRACE_CONNECTIONS"].flatMap({ Int($0) }) { configuration.maximumConnections = connections }
        let documents = environment["DEPOT_TRACE_DOCUMENTS"].flatMap { Int($0) } ?? 0
        let driver = try PostgresDriver(configuration: configuration)
        defer { driver.close() }
        let watching = arguments[0] == "watched-writes" ? try Compare.Watching(configuration) : nil
        defer { watching?.stop() }
        let store = try Store(driver: driver)
        // plain-writes: a store holding only the document without an index (so no schema version).
        let plain = arguments[0] == "plain-writes"
        try store.write { tx in
            if plain { try tx.park(PlainBenchItem(0)) } else { try tx.park(BenchItem(0)) }
        }
        if documents > 0 { try store.write { tx in for id in 0..<documents { try tx.park(BenchItem(1_000_000 + id)) } } }
        let key = [UInt8](repeating: 7, count: 8)
        try driver.write { txn in
            guard let space = try txn.keyspace(named: "reads", create: true, multiValue: false) else { return }
            try key.withUnsafeBytes { k in try [UInt8](repeating: 0xab, count: 100).withUnsafeBytes { try txn.put($0, forKey: k, in: space) } }
        }
        // One of each first, so that every count includes the same warm-up.
        _ = try store.read { tx in plain ? try tx.retrieve(PlainBenchItem.self, id: 0) != nil : try tx.retrieve(BenchItem.self, id: 0) != nil }
        _ = try driver.read { txn in try txn.keyspace(named: "reads", create: false, multiValue: false) }
        if arguments[0] == "deletes", count > 0 {
            try store.write { tx in for i in 0..<count { try tx.park(BenchItem(3_000_000 + i)) } }
        }
        let start = ContinuousClock.now
        for i in 0..<count {
            switch arguments[0] {
            case "writes", "watched-writes":
                try store.write { tx in try tx.park(BenchItem(i + 1)) }
            case "plain-writes":
                try store.write { tx in try tx.park(PlainBenchItem(i + 1)) }
            case "batch-writes":
                try store.write { tx in for j in 0..<10 { try tx.park(BenchItem(2_000_000 + i * 10 + j)) } }
            case "updates":
                try store.write { tx in if let item = try tx.retrieve(BenchItem.self, id: 0) { try tx.park(item) } }
            case "deletes":
                _ = try store.write { tx in try tx.delete(BenchItem.self, id: 3_000_000 + i) }
            case "reads":
                _ = try driver.read { txn in try Compare.pointRead(txn, key) }
            case "first-reads":
                _ = try driver.readFromFirstOperation { txn in try Compare.pointRead(txn, key) }
            case "gets-in-read":
                _ = try store.read { tx in plain ? try tx.retrieve(PlainBenchItem.self, id: 0) != nil : try tx.retrieve(BenchItem.self, id: 0) != nil }
            default:
                _ = try store.retrieve(BenchItem.self, id: 0)
            }
        }
        let elapsed = ContinuousClock.now - start
        let ms = Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15
        print(String(format: "trace %@ %d: mean %.3f ms, %d retries, %d speculation misses", arguments[0], count, count > 0 ? ms / Double(count) : 0,
                     driver.writeRetries, driver.speculationMisses))
    }
}
#endif

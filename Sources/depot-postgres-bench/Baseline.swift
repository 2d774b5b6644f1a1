#if Postgres
import Foundation

/// The server's own figures from pgbench, on the server of the PG* variables, on a table of
/// its own (dropped by ``finish()``): one-row inserts (commits/s) and one-row selects by primary
/// key (mean latency in ms, 1 client). Each figure is measured right before Depot's matching
/// one, so that both see the same disk and load (fsync times on a shared machine move by 10×
/// within minutes).
final class Baseline {
    let pgbench: String
    let folder: URL
    let insert: String
    let select: String
    let drop: String
    let time: String

    init(pgbench: String, seconds: Double) throws {
        self.pgbench = pgbench
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-pgbench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let table = "depot_bench_pgbench_" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let setup = folder.appendingPathComponent("setup.sql").path
        try """
        CREATE TABLE \(table) (id bigserial PRIMARY KEY, payload text NOT NULL);
        INSERT INTO \(table) (payload) SELECT repeat('x', 100) FROM generate_series(1, 1000);
        """.write(toFile: setup, atomically: true, encoding: .utf8)
        insert = folder.appendingPathComponent("insert.sql").path
        try "INSERT INTO \(table) (payload) VALUES (repeat('x', 100));\n".write(toFile: insert, atomically: true, encoding: .utf8)
        select = folder.appendingPathComponent("select.sql").path
        try "\\set id random(1, 1000)\nSELECT payload FROM \(table) WHERE id = :id;\n".write(toFile: select, atomically: true, encoding: .utf8)
        drop = folder.appendingPathComponent("drop.sql").path
        try "DROP TABLE IF EXISTS \(table);\n".write(toFile: drop, atomically: true, encoding: .utf8)
        time = String(max(1, Int(seconds.rounded())))
        _ = try Self.run(pgbench, ["-n", "-f", setup, "-t", "1"])
    }

    /// One-row inserts from `clients` connections: commits/s, how many, and the CPU used
    /// meanwhile (pgbench's own is this program's: it is a waited-for child). Nil when pgbench
    /// reported no rate.
    func inserts(clients: Int) throws -> (perSecond: Double, commits: Int, cpu: CPUUse)? {
        let (output, cpu) = try CPUUse.measuring {
            try Self.run(pgbench, ["-n", "-f", insert, "-c", String(clients), "-j", String(min(clients, 4)), "-T", time])
        }
        guard let rate = Self.number(after: "tps = ", in: output) else { return nil }
        let commits = Self.number(after: "number of transactions actually processed: ", in: output).map { Int($0) } ?? 0
        return (rate, commits, cpu)
    }

    /// Mean latency (ms) of a one-row select by primary key, one client.
    func selectLatency() throws -> Double? {
        Self.number(after: "latency average = ", in: try Self.run(pgbench, ["-n", "-f", select, "-c", "1", "-T", time]))
    }

    /// Drops the table and the scripts.
    func finish() {
        _ = try? Self.run(pgbench, ["-n", "-f", drop, "-t", "1"])
        try? FileManager.default.removeItem(at: folder)
    }

    /// The number following `label` in pgbench's report.
    static func number(after label: String, in output: String) -> Double? {
        guard let range = output.range(of: label) else { return nil }
        return Double(output[range.upperBound...].prefix { $0.isNumber || $0 == "." })
    }

    /// Runs a program to completion; its standard output.
    static func run(_ program: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
#endif

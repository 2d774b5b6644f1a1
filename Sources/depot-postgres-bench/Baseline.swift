#if Postgres
import Foundation

/// The server's own figures from pgbench, on the server of the PG* variables: one-row inserts
/// (commits/s for 1, 8 and 64 clients) and one-row selects by primary key (mean latency in
/// ms, 1 client), on a table of its own that is dropped afterwards.
enum Baseline {
    static func measure(pgbench: String, seconds: Double) throws -> [String: Double] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-pgbench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let table = "depot_bench_pgbench_" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let setup = folder.appendingPathComponent("setup.sql").path
        try """
        DROP TABLE IF EXISTS \(table);
        CREATE TABLE \(table) (id bigserial PRIMARY KEY, payload text NOT NULL);
        INSERT INTO \(table) (payload) SELECT repeat('x', 100) FROM generate_series(1, 1000);
        """.write(toFile: setup, atomically: true, encoding: .utf8)
        let insert = folder.appendingPathComponent("insert.sql").path
        try "INSERT INTO \(table) (payload) VALUES (repeat('x', 100));\n".write(toFile: insert, atomically: true, encoding: .utf8)
        let select = folder.appendingPathComponent("select.sql").path
        try "\\set id random(1, 1000)\nSELECT payload FROM \(table) WHERE id = :id;\n".write(toFile: select, atomically: true, encoding: .utf8)
        let drop = folder.appendingPathComponent("drop.sql").path
        try "DROP TABLE IF EXISTS \(table);\n".write(toFile: drop, atomically: true, encoding: .utf8)

        let time = String(max(1, Int(seconds.rounded())))
        _ = try run(pgbench, ["-n", "-f", setup, "-t", "1"])
        defer { _ = try? run(pgbench, ["-n", "-f", drop, "-t", "1"]) }
        var figures: [String: Double] = [:]
        for clients in [1, 8, 64] {
            let output = try run(pgbench, ["-n", "-f", insert, "-c", String(clients), "-j", String(min(clients, 4)), "-T", time])
            figures["insert\(clients)"] = number(after: "tps = ", in: output)
        }
        let output = try run(pgbench, ["-n", "-f", select, "-c", "1", "-T", time])
        figures["select"] = number(after: "latency average = ", in: output)
        return figures
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

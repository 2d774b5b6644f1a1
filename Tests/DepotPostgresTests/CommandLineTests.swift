#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import Synchronization
import Testing

/// `depot-pg` (the document commands on PostgreSQL) run as a child process against the server:
/// seed the CorporateMayhem fixture, query it, export it.
@Suite("depot-pg command line", .enabled(if: PostgresTestServer.isAvailable, "DEPOT_POSTGRES_URL is not set"))
struct CommandLineTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The built `depot-pg`, next to the test binary (or in the package's debug folder).
    static var executable: URL? {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("depot-pg"),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("depot-pg"),
            packageRoot.appendingPathComponent(".build/debug/depot-pg"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `depot-pg ARGS --url URL` to completion.
    func run(_ arguments: [String], url: String) throws -> Output {
        let process = Process()
        guard let executable = Self.executable else {
            Issue.record("depot-pg is not built (swift build --traits Postgres)")
            throw CocoaError(.fileNoSuchFile)
        }
        process.executableURL = executable
        process.arguments = arguments + ["--url", url]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes to the end before waiting, so that a full pipe cannot stall the child.
        let errData = Mutex(Data())
        let reader = Thread { errData.withLock { $0 = err.fileHandleForReading.readDataToEndOfFile() } }
        reader.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(eventually(within: 30) { reader.isFinished }, "standard error was not closed")
        return Output(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: errData.withLock { String(decoding: $0, as: UTF8.self) })
    }

    @Test func seedQueryAndExport() throws {
        let base = try #require(PostgresTestServer.url)
        let schema = PostgresTestServer.uniqueSchema()
        let url = base + (base.contains("?") ? "&" : "?") + "schema=" + schema
        defer { if let driver = try? PostgresTestServer.driver(schema: schema) { try? driver.dropSchema(); driver.close() } }
        let fixture = Self.packageRoot.appendingPathComponent("Fixtures/CorporateMayhem/Main.seed.json").path

        let seeded = try run(["seed", fixture, "--json"], url: url)
        #expect(seeded.status == 0, "\(seeded.stderr)")
        #expect(seeded.stdout.contains("\"documentsPerCollection\":{\"Company\":2,\"Department\":1,\"Employee\":8}"))

        let query = try run(["query", "--collection", "Employee", "--where", "employeeSalary", ">", "100000", "--sort", "employeeSalary:desc", "--limit", "2"], url: url)
        #expect(query.status == 0, "\(query.stderr)")
        let salaries = query.stdout.split(separator: "\n").compactMap { line -> Int? in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return (object?["document"] as? [String: Any])?["employeeSalary"] as? Int
        }
        #expect(salaries.count == 2)
        #expect(salaries == salaries.sorted(by: >) && salaries.allSatisfy { $0 > 100_000 })
        #expect(query.stdout.contains("Margaret Hamilton"))

        let export = try run(["export"], url: url)
        #expect(export.status == 0, "\(export.stderr)")
        let lines = export.stdout.split(separator: "\n")
        #expect(lines.count == 11)
        #expect(lines.allSatisfy { $0.hasPrefix("{\"collection\":") })

        let missing = try run(["export", "--collection", "Nope"], url: url)
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no collection named 'Nope'"))
        // The password is never printed, even on errors.
        if let password = try PostgresConfiguration(url: base).password, !password.isEmpty {
            #expect(!missing.stderr.contains(password) && !seeded.stdout.contains(password))
        }
    }
}
#endif

#if Postgres
import Depot
@testable import DepotPostgres
import DepotTestSupport
import Foundation
import Testing

/// `depot` (built with the `Postgres` trait) on a PostgreSQL store named by `--url` or
/// `DEPOT_URL`, run as a child process against the server: the same commands as on an LMDB folder.
@Suite("depot on postgres:// URLs", .enabled(if: PostgresTestServer.isAvailable, "DEPOT_POSTGRES_URL is not set"))
struct CommandLineTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixture = packageRoot.appendingPathComponent("Fixtures/CorporateMayhem/Main.seed.json").path

    /// Runs `body` with the URL of a fresh schema, dropped afterwards.
    func withSchemaURL(_ body: (String) throws -> Void) throws {
        let base = try #require(PostgresTestServer.url)
        let schema = PostgresTestServer.uniqueSchema()
        defer { if let driver = try? PostgresTestServer.driver(schema: schema) { try? driver.dropSchema(); driver.close() } }
        try body(base + (base.contains("?") ? "&" : "?") + "schema=" + schema)
    }

    @Test func seedQueryAndExport() throws {
        try withSchemaURL { url in
            let seeded = try depot("seed", "--url", url, Self.fixture, "--json")
            #expect(seeded.status == 0, "\(seeded)")
            #expect(seeded.out.contains("\"documentsPerCollection\":{\"Company\":2,\"Department\":1,\"Employee\":8}"))

            let query = try depot("query", "--url", url, "--collection", "Employee", "--where", "employeeSalary", ">", "100000",
                                  "--sort", "employeeSalary:desc", "--limit", "2")
            #expect(query.status == 0, "\(query)")
            let salaries = query.out.split(separator: "\n").compactMap { line -> Int? in
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                return (object?["document"] as? [String: Any])?["employeeSalary"] as? Int
            }
            #expect(salaries.count == 2)
            #expect(salaries == salaries.sorted(by: >) && salaries.allSatisfy { $0 > 100_000 })
            #expect(query.out.contains("Margaret Hamilton"))
            // The one-argument condition and the checks of `depot query` hold on every driver.
            let quoted = try depot("query", "--url", url, "--collection", "Employee", "--where", "employeeSalary > 100000")
            #expect(quoted.status == 0 && quoted.out.split(separator: "\n").count >= 2, "\(quoted)")
            let badSort = try depot("query", "--url", url, "--collection", "Employee", "--sort", "name:sideways")
            #expect(badSort.status == 64 && badSort.err.contains("asc or desc"), "\(badSort)")

            let export = try depot("export", "--url", url)
            #expect(export.status == 0, "\(export)")
            let lines = export.out.split(separator: "\n")
            #expect(lines.count == 11)
            #expect(lines.allSatisfy { $0.hasPrefix("{\"collection\":") })

            let missing = try depot("export", "--url", url, "--collection", "Nope")
            #expect(missing.status == 1)
            #expect(missing.err.contains("no collection named 'Nope'"), "\(missing)")
            // The password is never printed, even on errors.
            if let password = try PostgresConfiguration(url: url).password, !password.isEmpty {
                #expect(!missing.err.contains(password) && !seeded.out.contains(password))
            }
        }
    }

    @Test func documentAndKeyValueCommandsThroughDEPOT_URL() throws {
        try withSchemaURL { url in
            let environment = ["DEPOT_URL": url, "DEPOT_PATH": ""]
            let put = try depot(["doc", "put", "--collection", "Person", "--id", "00123", #"{"name": "Ada"}"#], environment: environment)
            #expect(put.status == 0, "\(put)")
            let got = try depot(["doc", "get", "--collection", "Person", "--id", "00123"], environment: environment)
            #expect(got.status == 0 && got.out.contains(#""id":"00123""#) && got.out.contains("Ada"), "\(got)")

            #expect(try depot(["kv", "set", "name", "Grace"], environment: environment).status == 0)
            let value = try depot(["kv", "get", "name"], environment: environment)
            #expect(value.status == 0 && value.out == "\"Grace\"\n", "\(value)")
            let keys = try depot(["kv", "list", "--json"], environment: environment)
            #expect(keys.out == "{\"key\":\"name\"}\n", "\(keys)")

            let collections = try depot(["collections", "--json"], environment: environment)
            #expect(collections.status == 0 && collections.out.contains(#""collection":"Person""#) && collections.out.contains(#""idKind":"string""#), "\(collections)")
            let stat = try depot(["stat", "--json"], environment: environment)
            #expect(stat.status == 0 && stat.out.contains(#""documents":1"#) && stat.out.contains("postgres://"), "\(stat)")
            // Replication as the server sees it: this is a primary.
            #expect(stat.out.contains(#""standby":false"#) && stat.out.contains(#""standbys":"#), "\(stat)")
            let text = try depot(["stat"], environment: environment)
            #expect(text.status == 0 && text.out.contains("a primary with"), "\(text)")
            if let replica = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_REPLICA_URL"],
               let schema = url.split(separator: "?").last.flatMap({ $0.split(separator: "&").first { $0.hasPrefix("schema=") } }) {
                // The same schema on the standby, once it has replayed the writes above.
                let standbyURL = replica + (replica.contains("?") ? "&" : "?") + schema
                var standby = try depot(["stat", "--json", "--url", standbyURL], environment: ["DEPOT_URL": "", "DEPOT_PATH": ""])
                _ = try eventually(within: 30) {
                    standby = try depot(["stat", "--json", "--url", standbyURL], environment: ["DEPOT_URL": "", "DEPOT_PATH": ""])
                    return standby.status == 0
                }
                #expect(standby.status == 0 && standby.out.contains(#""standby":true"#), "\(standby)")
            }

            #expect(try depot(["doc", "delete", "--collection", "Person", "--id", "00123"], environment: environment).status == 0)
            let gone = try depot(["doc", "get", "--collection", "Person", "--id", "00123"], environment: environment)
            #expect(gone.status == 1 && gone.err.contains("no Person document"), "\(gone)")
        }
    }

    /// Read commands on a schema that holds no store created the schema and reported an empty
    /// store (exit 0), where a folder without a store is an error: a mistyped schema looked like
    /// an empty store and was left behind. They fail now (code `noStore`) and create nothing;
    /// a command that writes creates the store, as with a folder. Driver errors carry a code.
    @Test func readsOfASchemaWithoutAStoreFailAndCreateNothing() throws {
        try withSchemaURL { url in
            let schema = try PostgresConfiguration(url: url).schema
            let reads: [[String]] = [["export"], ["collections"], ["stat"], ["query", "--collection", "C"],
                                     ["doc", "get", "--collection", "C", "--id", "1"], ["kv", "get", "k"], ["kv", "delete", "k"]]
            for command in reads {
                let result = try depot(command + ["--url", url, "--json"])
                let error = jsonErrorObject(result.err)
                #expect(result.status == 1 && error?["code"] as? String == "noStore", "\(command): \(result)")
                #expect((error?["message"] as? String)?.contains(schema) == true, "\(command): \(result.err)")
            }
            let error = #expect(throws: PostgresDriverError.self) {
                try PostgresTestServer.driver(schema: schema) { $0.createsSchema = false }.close()
            }
            if case .noStore = error {} else { Issue.record("expected noStore (nothing created), got \(String(describing: error))") }
            #expect(try depot("kv", "set", "--url", url, "k", "1").status == 0, "a write creates the store")
            #expect(try depot("kv", "get", "--url", url, "k").out == "1\n")
            #expect(try depot("export", "--url", url).status == 0)
            let opened = try PostgresTestServer.driver(schema: schema) { $0.createsSchema = false }
            opened.close()
        }
        let full = PostgresDriverError.server(sqlState: "53200", message: "out of shared memory")
        #expect("\(full)".contains("--batch") && "\(full)".contains("max_locks_per_transaction"), "the lock table's hint")
    }

    @Test func lmdbOnlyCommandsSayTheyNeedAFolder() throws {
        try withSchemaURL { url in
            for command in [["backup", "--to", "/tmp/never"], ["verify"], ["list", "--db", "a"], ["fill", "--db", "a", "--count", "1"]] {
                let run = try depot(command + ["--url", url])
                #expect(run.status == 64, "\(command): \(run)")
                #expect(run.err.contains("works on an LMDB store folder only"), "\(command): \(run)")
                if let password = try PostgresConfiguration(url: url).password, !password.isEmpty {
                    #expect(!run.err.contains(password), "\(command): the password is never printed")
                }
            }
        }
    }
}
#endif

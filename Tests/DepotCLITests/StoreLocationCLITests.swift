import Depot
import DepotTestSupport
import Foundation
import Testing

/// Issue 29: one `depot` over every driver. A store is a folder (`--path`, `DEPOT_PATH`) or a
/// server URL (`--url`, `DEPOT_URL`); LMDB-only commands say so when given a URL.
@Suite("depot: a store is a path or a URL")
struct StoreLocationCLITests {
    let folder = TemporaryFolder("depot-location")
    /// A URL whose password must never be printed (no server listens there: port 1).
    let url = "postgres://ada:hunter2-secret@127.0.0.1:1/nowhere"
    /// Without DEPOT_PATH or DEPOT_URL from the test's own environment.
    let clean = ["DEPOT_PATH": "", "DEPOT_URL": ""]

    @Test func documentCommandsOnAFolderTakeDEPOT_PATHAsBefore() throws {
        let put = try depot(["doc", "put", "--collection", "Person", "--id", "p1", #"{"name": "Ada"}"#],
                            environment: clean.merging(["DEPOT_PATH": folder.path]) { $1 })
        #expect(put.status == 0, "\(put)")
        let got = try depot(["doc", "get", "--path", folder.path, "--collection", "Person", "--id", "p1"], environment: clean)
        #expect(got.status == 0 && got.out.contains("Ada"), "\(got)")
    }

    #if !Postgres
    @Test func aURLWithoutThePostgresTraitSaysHowToBuild() throws {
        for command in [["export"], ["query", "--collection", "Person"], ["collections"], ["stat"], ["kv", "get", "k"],
                        ["doc", "get", "--collection", "P", "--id", "1"], ["seed", "/nonexistent.json"]] {
            for run in [try depot(command + ["--url", url], environment: clean),
                        try depot(command, environment: clean.merging(["DEPOT_URL": url]) { $1 })] {
                #expect(run.status == 1, "\(command): \(run)")
                #expect(run.err.contains("built without the Postgres trait") && run.err.contains("--traits Postgres"), "\(command): \(run.err)")
                #expect(!run.err.contains("hunter2"), "\(command): the password is never printed")
            }
        }
        let json = try depot(["export", "--url", url, "--json"], environment: clean)
        let object = try JSONSerialization.jsonObject(with: Data(json.err.utf8)) as? [String: Any]
        #expect((object?["error"] as? [String: Any])?["code"] as? String == "driverUnavailable", "\(json.err)")
    }
    #endif

    @Test func lmdbOnlyCommandsRefuseAURL() throws {
        let commands = [["backup", "--to", folder.sub("copy")], ["verify"], ["list", "--db", "a"], ["get", "--db", "a", "k"],
                        ["fill", "--db", "a", "--count", "1"], ["torture", "--count", "1"]]
        for command in commands {
            for run in [try depot(command + ["--url", url], environment: clean),
                        try depot(command + ["--path", url], environment: clean),
                        try depot(command, environment: clean.merging(["DEPOT_URL": url]) { $1 })] {
                #expect(run.status == 64, "\(command): \(run)")
                #expect(run.err.contains("'depot \(command[0])' works on an LMDB store folder only"), "\(command): \(run.err)")
                #expect(!run.err.contains("hunter2"), "\(command): the password is never printed")
            }
        }
    }

    @Test func pathAndURLAreNotMixedUp() throws {
        let both = try depot(["export", "--path", folder.path, "--url", url], environment: clean)
        #expect(both.status == 64 && both.err.contains("not both"), "\(both)")
        let urlAsPath = try depot(["export", "--path", url], environment: clean)
        #expect(urlAsPath.status == 64 && urlAsPath.err.contains("pass it with --url") && !urlAsPath.err.contains("hunter2"), "\(urlAsPath)")
        let pathAsURL = try depot(["export", "--url", folder.path], environment: clean)
        #expect(pathAsURL.status == 64 && pathAsURL.err.contains("use --path"), "\(pathAsURL)")
        let otherScheme = try depot(["export", "--url", "mysql://host/db"], environment: clean)
        #expect(otherScheme.status == 64 && otherScheme.err.contains("unknown store URL scheme 'mysql'"), "\(otherScheme)")
        let bothVariables = try depot(["export"], environment: ["DEPOT_PATH": folder.path, "DEPOT_URL": url])
        #expect(bothVariables.status == 64 && bothVariables.err.contains("both DEPOT_PATH and DEPOT_URL"), "\(bothVariables)")
        let neither = try depot(["export"], environment: clean)
        #expect(neither.status == 64 && neither.err.contains("--url") && neither.err.contains("DEPOT_URL"), "\(neither)")
    }

    @Test func helpNamesTheURLFormAndTheKey() throws {
        let help = try depot(["export", "--help"], environment: clean)
        #expect(help.out.contains("--url") && help.out.contains("DEPOT_URL"), "\(help.out)")
        #expect(help.out.contains("--key-file") && help.out.contains("DEPOT_KEY"), "\(help.out)")
        let top = try depot(["--help"], environment: clean)
        #expect(top.out.contains("DEPOT_URL") && top.out.contains("--key-file"), "\(top.out)")
    }
}

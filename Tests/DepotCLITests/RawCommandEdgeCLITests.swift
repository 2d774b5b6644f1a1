import Depot
import DepotTestSupport
import Foundation
import Testing

/// The raw key/value commands, backup, fill and the demo on cases a third round of outside
/// testing found mishandled (2026-12-07).
@Suite("depot: raw commands, backup, fill and demo edge cases found by black-box testing")
struct RawCommandEdgeCLITests {
    let folder = TemporaryFolder("depot-raw-edges")

    /// `demo --path DIR` emptied DIR/documents and DIR/growth whatever they held (a user's store,
    /// their files). A subfolder the demo did not make is refused now, and left as it was.
    @Test func theDemoNeverEmptiesAFolderItDidNotMake() throws {
        let root = folder.sub("demo-root")
        try FileManager.default.createDirectory(atPath: root + "/growth", withIntermediateDirectories: true)
        try Data("important\n".utf8).write(to: URL(fileURLWithPath: root + "/growth/readme.txt"))
        #expect(try depot("doc", "put", "--path", root + "/documents", "--collection", "Mine", "--id", "x", #"{"p":1}"#).status == 0)
        let demo = try depot("demo", "--path", root, "--json")
        #expect(demo.status == 1 && demo.err.contains(#""code":"notDemoFolder""#), "\(demo)")
        #expect(FileManager.default.fileExists(atPath: root + "/growth/readme.txt"), "the user's file is kept")
        let mine = try depot("doc", "get", "--path", root + "/documents", "--collection", "Mine", "--id", "x")
        #expect(mine.status == 0 && mine.out.contains(#""p":1"#), "the user's store is kept: \(mine)")
    }

    /// A store of the user's under `documents` alone (the tours before it run), and a demo run
    /// twice in its own folder: the second replaces the stores the first made.
    @Test func theDemoKeepsADocumentStoreAndRunsTwiceInItsOwnFolder() throws {
        let root = folder.sub("demo-documents")
        #expect(try depot("doc", "put", "--path", root + "/documents", "--collection", "Mine", "--id", "x", #"{"p":1}"#).status == 0)
        let demo = try depot("demo", "--path", root, "--json")
        #expect(demo.status == 1 && demo.err.contains(#""code":"notDemoFolder""#) && demo.err.contains("documents"), "\(demo)")
        let mine = try depot("doc", "get", "--path", root + "/documents", "--collection", "Mine", "--id", "x")
        #expect(mine.status == 0 && mine.out.contains(#""p":1"#), "the user's store is kept: \(mine)")

        let own = folder.sub("demo-own")
        for run in 1...2 {
            let again = try depot("demo", "--path", own, "--json")
            #expect(again.status == 0, "run \(run): \(again.err)")
        }
        #expect(FileManager.default.fileExists(atPath: own + "/documents/.depot-demo-store"))
    }

    /// Each `put` into a new named database succeeded, but a store with more than 256 of them
    /// could then not be read as a whole (stat, verify, export: MDB_DBS_FULL), and verify called
    /// it damaged. The CLI opens such a store with room for every database.
    @Test func aStoreWithManyNamedDatabasesStaysReadable() throws {
        let store = folder.sub("many-databases")
        #expect(try depot("put", "--path", store, "--db", "d0", "k", "v").status == 0)
        // 300 databases in one process would need maxDatabases: made through the library here.
        let env = try Environment.open(path: store, options: EnvironmentOptions(maxDatabases: 400))
        for i in 1..<300 {
            let db = try env.openDatabase("d\(i)")
            try env.write { txn in try txn.put([1], forKey: [1], in: db) }
        }
        try env.close()
        for arguments in [["stat"], ["verify"], ["list", "--db", "d299"]] {
            let run = try depot([arguments[0], "--path", store, "--json"] + arguments.dropFirst())
            #expect(run.status == 0, "\(arguments[0]): \(run)")
        }
    }

    /// `get KEY | put KEY2 -` dropped a value's trailing "\r" ("\r\n" is one Character to Swift):
    /// only the newline is dropped.
    @Test func aTrailingCarriageReturnIsKept() throws {
        let store = folder.sub("carriage-return")
        #expect(try depot("put", "--path", store, "--db", "f", "cr", "x\r").status == 0)
        let got = try depot("get", "--path", store, "--db", "f", "cr")
        #expect(try depot("put", "--path", store, "--db", "f", "cr2", "-", input: Data(got.out.utf8)).status == 0)
        let copy = try depot("get", "--path", store, "--db", "f", "cr2", "--json")
        #expect(copy.out.contains(#""value":"x\r""#), "\(copy)")
    }

    /// A URL of another scheme (or DEPOT_URL's text) was called "a PostgreSQL store".
    @Test func lmdbOnlyCommandsNameWhatTheyWereGiven() throws {
        let run = try depot("get", "--path", "file:///tmp/x", "--db", "a", "k", "--json")
        #expect(run.status == 64 && run.err.contains("scheme 'file'") && !run.err.contains("PostgreSQL"), "\(run)")
        let server = try depot("get", "--path", "postgres://localhost/x", "--db", "a", "k", "--json")
        #expect(server.status == 64 && server.err.contains("PostgreSQL store"), "\(server)")
    }

    /// `fill --key-prefix` too long for its keys failed at the first put (exit 1); it is a usage
    /// error as an oversized key is for `put`. `backup --to` creates the folders above it.
    @Test func fillPrefixAndBackupFolders() throws {
        let store = folder.sub("fill-prefix")
        let long = try depot("fill", "--path", store, "--db", "b", "--count", "2", "--key-prefix", String(repeating: "p", count: 503), "--json")
        #expect(long.status == 64 && long.err.contains("--key-prefix"), "\(long)")
        #expect(try depot("fill", "--path", store, "--db", "b", "--count", "2").status == 0)
        let backup = try depot("backup", "--path", store, "--to", folder.sub("backups/a/b"), "--json")
        #expect(backup.status == 0, "\(backup)")
        #expect(try depot("verify", "--path", folder.sub("backups/a/b")).status == 0)
    }
}

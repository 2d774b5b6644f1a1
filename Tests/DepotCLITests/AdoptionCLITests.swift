import Depot
import DepotLMDB
import DepotTestSupport
import Foundation
import Testing

struct CLIUUIDDoc: Document {
    static var collection: String { "Tagged" }
    var id: UUID
    var label: String
}

struct CLIIndexed: Document {
    static var collection: String { "Indexed" }
    var id: Int
    var email: String
    static var indexes: [DocumentIndex<CLIIndexed>] { [.init(\.email, unique: true)] }
}

struct CLINote: Codable { var text: String }

@Suite("depot CLI: adoption (version, DEPOT_PATH, suggestions, stdin, errors, JSON style)")
struct CLIAdoptionTests {
    let folder = TemporaryFolder("depot-adopt")

    @Test func versionEverywhere() throws {
        let version = try depot("--version")
        #expect(version.status == 0 && version.out == DepotVersion.current + "\n")
        _ = try depot("put", "--path", folder.path, "--db", "a", "k", "v")
        #expect(try depot("stat", "--path", folder.path).out.contains("Depot version:    \(DepotVersion.current)"))
        let json = try depot("stat", "--path", folder.path, "--json")
        #expect(json.out.split(separator: "\n").count == 1, "one object per line")
        #expect(json.out.contains("\"depotVersion\":\"\(DepotVersion.current)\""))
        #expect(!json.out.contains("\\/"), "slashes are not escaped: \(json.out)")
    }

    @Test func depotPathIsTheDefaultForPath() throws {
        let put = try depot(["put", "--db", "a", "k", "from-env"], environment: ["DEPOT_PATH": folder.path])
        #expect(put.status == 0, "\(put.err)")
        #expect(try depot("get", "--path", folder.path, "--db", "a", "k").out == "from-env\n")
        let other = folder.sub("other")
        _ = try depot("put", "--path", other, "--db", "a", "k", "explicit")
        let explicit = try depot(["get", "--path", other, "--db", "a", "k"], environment: ["DEPOT_PATH": folder.path])
        #expect(explicit.out == "explicit\n", "--path wins over DEPOT_PATH")
        let missing = try depot(["get", "--db", "a", "k"], environment: ["DEPOT_PATH": ""])
        #expect(missing.status == 64 && missing.err.contains("DEPOT_PATH"))
    }

    @Test func mistypedCommandsGetASuggestion() throws {
        let top = try depot("qurey", "--path", folder.path)
        #expect(top.status == 64)
        #expect(top.err.contains("unknown command 'qurey'; did you mean 'query'?"), "\(top.err)")
        #expect(!top.err.contains("Unknown option"))
        let nested = try depot("kv", "gte", "--path", folder.path, "k")
        #expect(nested.status == 64 && nested.err.contains("did you mean 'get'?"), "\(nested.err)")
        let nothingClose = try depot("frobnicate")
        #expect(nothingClose.status == 64 && nothingClose.err.contains("unknown command 'frobnicate'") && !nothingClose.err.contains("did you mean"))
    }

    @Test func dashReadsTheValueFromStandardInput() throws {
        let put = try runProcess(try #require(depotExecutable()), ["put", "--path", folder.path, "--db", "a", "k", "-"], input: Data("from stdin\n".utf8))
        #expect(put.status == 0, "\(put.err)")
        #expect(try depot("get", "--path", folder.path, "--db", "a", "k").out == "from stdin\n", "one trailing newline dropped")
        let kv = try runProcess(try #require(depotExecutable()), ["kv", "set", "--path", folder.path, "conf", "-"], input: Data(#"{"a": [1, 2]}"#.utf8))
        #expect(kv.status == 0, "\(kv.err)")
        #expect(try depot("kv", "get", "--path", folder.path, "conf").out == "{\"a\":[1,2]}\n")
    }

    @Test func lmdbJargonStaysOutOfMessagesButNotOutOfJSON() throws {
        _ = try depot("put", "--path", folder.path, "--db", "a", "k", "v")
        let dup = try depot("put", "--path", folder.path, "--db", "a", "--no-overwrite", "k", "secret-v2")
        #expect(dup.status == 1)
        #expect(dup.err.contains("already exists") && !dup.err.contains("MDB_"), "\(dup.err)")
        #expect(!dup.err.contains("secret-v2"))
        let bad = folder.sub("bad")
        try FileManager.default.createDirectory(atPath: bad, withIntermediateDirectories: true)
        try Data(repeating: 0x5A, count: 16_384).write(to: URL(fileURLWithPath: bad + "/data.mdb"))
        let text = try depot("stat", "--path", bad)
        #expect(text.status == 1 && text.err.contains("is not an LMDB file") && !text.err.contains("MDB_"))
        let json = try depot("stat", "--path", bad, "--json")
        #expect(json.status == 1)
        let object = try JSONSerialization.jsonObject(with: Data(json.err.utf8)) as? [String: Any]
        let error = object?["error"] as? [String: Any]
        #expect(error?["code"] as? String == "MDB_INVALID")
        #expect(error?["lmdbCode"] as? Int == Int(LMDBError.invalid.code))
    }

    @Test func progressOnlyOnATerminal() throws {
        let exe = try #require(depotExecutable())
        let piped = try depot("fill", "--path", folder.path, "--db", "load", "--count", "2500", "--value-size", "10", "--batch", "1000")
        #expect(piped.status == 0 && piped.err.isEmpty, "nothing extra when piped: \(piped.err)")
        guard let script = which("script") else {
            Issue.record("script (util-linux) missing: cannot give the child a terminal")
            return
        }
        let command = "\(exe.path) fill --path \(folder.sub("tty")) --db load --count 2500 --value-size 10 --batch 1000"
        let tty = try runProcess(script, ["-qec", command, "/dev/null"])
        #expect(tty.status == 0, "\(tty.err)")
        #expect(tty.out.contains("2,500/2,500 records"), "real counts against the total: \(tty.out)")
        #expect(tty.out.contains("100%") && tty.out.contains("24.4 KiB/24.4 KiB"))
        #expect(tty.out.contains("wrote 2500 records"))
    }
}

@Suite("depot collections, doc, import")
struct CLIDocumentToolsTests {
    let folder = TemporaryFolder("depot-doctools")

    func makeStore(_ path: String) throws {
        let store = try Store(path: path)
        try store.write { tx in
            for i in [-3, 1, 2, 40] { try tx.park(CLIDoc(id: i, title: "t/\(i) ✓", owner: i > 0 ? CLIOwner(id: "o\(i % 2)", name: "Owner \(i % 2)") : nil)) }
            try tx.park(CLIUUIDDoc(id: UUID(), label: "a"))
            try tx.park(CLIUUIDDoc(id: UUID(), label: "b"))
            try tx.park(CLIIndexed(id: 1, email: "a@example.com"))
            _ = try tx.park(unidentified: CLINote(text: "loose note"))
            try tx.alias("Other").park(CLIDoc(id: 9, title: "other alias", owner: nil))
        }
    }

    @Test func collectionsListsAliasesCountsAndIndexes() throws {
        try makeStore(folder.path)
        let text = try depot(["collections", "--path", folder.path])
        #expect(text.status == 0, "\(text.err)")
        #expect(text.out.contains("alias 'default': 5 collections"))
        #expect(text.out.contains("alias 'Other': 1 collection"))
        #expect(text.out.contains("4 documents, signed IDs"))
        #expect(text.out.contains("email (email, unique)"))
        let json = try depot(["collections", "--path", folder.path, "--alias", "default", "--json"])
        let lines = json.out.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.count == 5)
        let indexed = lines.first { $0["collection"] as? String == "Indexed" }
        #expect((indexed?["indexes"] as? [[String: Any]])?.first?["unique"] as? Bool == true)
        #expect(lines.first { $0["collection"] as? String == "Tagged" }?["idKind"] as? String == "uuid")
    }

    @Test func exportImportExportIsExact() throws {
        try makeStore(folder.sub("a"))
        let first = try depot(["export", "--path", folder.sub("a")])
        #expect(first.status == 0 && first.err.isEmpty, "\(first.err)")
        let file = folder.sub("dump.jsonl")
        try Data(first.out.utf8).write(to: URL(fileURLWithPath: file))
        let imported = try depot(["import", "--path", folder.sub("b"), file])
        #expect(imported.status == 0, "\(imported.err)")
        #expect(imported.out.contains("imported 10 documents"))
        let second = try depot(["export", "--path", folder.sub("b")])
        #expect(second.out == first.out, "export → import → export prints the same lines")
        // The other alias, through standard input and in batches.
        let other = try depot(["export", "--path", folder.sub("a"), "--alias", "Other"])
        let viaStdin = try depot(["import", "--path", folder.sub("b"), "--alias", "Other", "--batch", "1", "-"], input: Data(other.out.utf8))
        #expect(viaStdin.status == 0, "\(viaStdin.err)")
        #expect(try depot(["export", "--path", folder.sub("b"), "--alias", "Other"]).out == other.out)
        // Typed reads work on the imported store (ID kinds kept).
        let store = try Store(path: folder.sub("b"))
        let docs = try store.read { tx in try tx.retrieveAll(CLIDoc.self) }
        #expect(docs.map(\.id) == [-3, 1, 2, 40])
        #expect(docs.last?.owner?.name == "Owner 0")
        #expect(try store.read { tx in try tx.retrieveAll(CLIUUIDDoc.self) }.count == 2)
    }

    @Test func importIsAllOrNothingAndNamesTheLine() throws {
        let input = """
            {"collection": "P", "id": 1, "document": {"id": 1}}
            {"collection": "P", "id": 2, "document": [1]}
            """
        let failed = try depot(["import", "--path", folder.path, "-"], input: Data(input.utf8))
        #expect(failed.status == 1)
        #expect(failed.err.contains("line 2") && failed.err.contains("nothing was stored"), "\(failed.err)")
        let store = try Store(path: folder.path)
        #expect(try store.read { tx in try tx.collections() }.isEmpty)
    }

    @Test func docPutGetDelete() throws {
        let path = folder.path
        let fromStdin = try depot(["doc", "put", "--path", path, "--collection", "Person", "-"], input: Data(#"{"id": 8, "name": "Grace"}"#.utf8))
        #expect(fromStdin.status == 0, "\(fromStdin.err)")
        let put = try depot(["doc", "put", "--path", path, "--collection", "Person", "--id", "7", #"{"name": "Ada", "site": "a/b"}"#])
        #expect(put.status == 0, "\(put.err)")
        #expect(try depot(["doc", "get", "--path", path, "--collection", "Person", "--id", "7"]).out == "{\"id\":7,\"name\":\"Ada\",\"site\":\"a/b\"}\n")
        let exported = try depot(["export", "--path", path])
        #expect(exported.out.contains(#""id":8,"document":{"id":8,"name":"Grace"}"#), "integer IDs stay integers")
        let noID = try depot(["doc", "put", "--path", path, "--collection", "Person", #"{"name": "x"}"#])
        #expect(noID.status == 1 && noID.err.contains("--id"))
        #expect(try depot(["doc", "delete", "--path", path, "--collection", "Person", "--id", "7"]).status == 0)
        let gone = try depot(["doc", "get", "--path", path, "--collection", "Person", "--id", "7"])
        #expect(gone.status == 1 && gone.err.contains("no Person document with ID '7'"))
        #expect(try depot(["doc", "delete", "--path", path, "--collection", "Person", "--id", "7"]).status == 1)
    }

    @Test func queryWarnsAboutFieldsNoDocumentHas() throws {
        let store = try Store(path: folder.path)
        try store.write { tx in for i in 0..<5 { try tx.park(CLIPerson(id: i, name: "P\(i)", age: 20 + i, city: "Oslo")) } }
        let typo = try depot(["query", "--path", folder.path, "--collection", "Person", "--where", "agee", ">", "3"])
        #expect(typo.status == 0 && typo.out.isEmpty)
        #expect(typo.err.contains("warning: no Person document has a field 'agee'") && typo.err.contains("did you mean 'age'?"), "\(typo.err)")
        let fine = try depot(["query", "--path", folder.path, "--collection", "Person", "--where", "age", ">", "100"])
        #expect(fine.out.isEmpty && fine.err.isEmpty, "no warning when the field exists: \(fine.err)")
    }
}

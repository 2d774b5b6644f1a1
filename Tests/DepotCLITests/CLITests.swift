import Foundation
import Testing
import DepotTestSupport
import Depot

@Suite("depot CLI (key/value)")
struct CLIKeyValueTests {
    let folder = TemporaryFolder("depot-cli")
    var dir: String { folder.sub("env") }

    @Test func putGetDeleteList() throws {
        #expect(try depot("put", "--path", dir, "--db", "colors", "sky", "blue").status == 0)
        #expect(try depot("put", "--path", dir, "--db", "colors", "grass", "green").status == 0)
        #expect(try depot("put", "--path", dir, "--db", "colors", "sea", "blue-green 🌊").status == 0)
        let got = try depot("get", "--path", dir, "--db", "colors", "sea")
        #expect(got.status == 0)
        #expect(got.out == "blue-green 🌊\n")
        let list = try depot("list", "--path", dir, "--db", "colors")
        #expect(list.out == "grass\tgreen\nsea\tblue-green 🌊\nsky\tblue\n")
        let prefixed = try depot("list", "--path", dir, "--db", "colors", "--prefix", "s", "--limit", "1", "--json")
        #expect(prefixed.out == "{\"key\":\"sea\",\"value\":\"blue-green 🌊\"}\n")
        #expect(try depot("delete", "--path", dir, "--db", "colors", "sky").status == 0)
        let missing = try depot("get", "--path", dir, "--db", "colors", "sky")
        #expect(missing.status == 1)
        #expect(missing.err.contains("'sky' not found"))
        #expect(try depot("delete", "--path", dir, "--db", "colors", "sky").status == 1)
    }

    @Test func errorsNameWhatWasWrong() throws {
        let noEnv = try depot("get", "--path", folder.sub("nowhere"), "--db", "x", "k")
        #expect(noEnv.status == 1)
        #expect(noEnv.err.contains("no environment at"))
        #expect(!FileManager.default.fileExists(atPath: folder.sub("nowhere")), "reading must not create a folder")
        _ = try depot("put", "--path", dir, "--db", "a", "k", "v")
        let noDB = try depot("get", "--path", dir, "--db", "b", "k")
        #expect(noDB.status == 1)
        #expect(noDB.err.contains("no database named 'b'"))
        let usage = try depot("get", "--path", dir)
        #expect(usage.status == 64, "usage errors exit with argument-parser's code")
        let longKey = try depot("put", "--path", dir, "--db", "a", String(repeating: "x", count: 600), "v")
        #expect(longKey.status == 64, "a key over LMDB's limit is a usage error")
        #expect(longKey.err.contains("600 bytes"))
        let dup = try depot("put", "--path", dir, "--db", "a", "--no-overwrite", "k", "v2")
        #expect(dup.status == 1)
        #expect(dup.err.contains("already exists"))
        #expect(!dup.err.contains("v2"), "errors never print stored values")
        let badLimit = try depot("list", "--path", dir, "--db", "a", "--limit", "-3")
        #expect(badLimit.status == 64)
    }

    @Test func statAndBackup() throws {
        _ = try depot("put", "--path", dir, "--db", "things", "k", "v")
        let stat = try depot("stat", "--path", dir)
        #expect(stat.status == 0)
        #expect(stat.out.contains("LMDB 0.9"))
        #expect(stat.out.contains("things: 1 entries"))
        let json = try depot("stat", "--path", dir, "--json")
        let object = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any]
        #expect((object?["lmdbVersion"] as? String)?.hasPrefix("LMDB") == true)
        #expect(((object?["databases"] as? [String: Any])?["things"] as? [String: Any])?["entries"] as? Int == 1)
        let backup = try depot("backup", "--path", dir, "--to", folder.sub("copy"), "--compact")
        #expect(backup.status == 0, "\(backup.err)")
        #expect(try depot("get", "--path", folder.sub("copy"), "--db", "things", "k").out == "v\n")
        #expect(try depot("backup", "--path", dir, "--to", folder.sub("copy")).status == 1)
    }

    @Test func interoperatesWithLMDBTools() throws {
        guard let dump = which("mdb_dump"), let load = which("mdb_load") else {
            Issue.record("mdb_dump/mdb_load missing: install lmdb-utils")
            return
        }
        _ = try depot("put", "--path", dir, "--db", "fruit", "apple", "red")
        _ = try depot("put", "--path", dir, "--db", "fruit", "banana", "yellow")
        let dumped = try runProcess(dump, ["-p", "-s", "fruit", dir])
        #expect(dumped.status == 0, "\(dumped.err)")
        #expect(dumped.out.contains("\n apple\n red\n"))
        #expect(dumped.out.contains("\n banana\n yellow\n"))
        // The other way: a database written by mdb_load reads back through depot.
        let input = "VERSION=3\nformat=print\ntype=btree\nHEADER=END\n cherry\n dark red\n kiwi\n green\nDATA=END\n"
        let loadPlain = try runProcess(load, ["-s", "imported", dir], input: Data(input.utf8))
        #expect(loadPlain.status == 0, "\(loadPlain.err)")
        #expect(try depot("get", "--path", dir, "--db", "imported", "cherry").out == "dark red\n")
        #expect(try depot("list", "--path", dir, "--db", "imported").out == "cherry\tdark red\nkiwi\tgreen\n")
    }

    @Test func fillWritesRecords() throws {
        let filled = try depot("fill", "--path", dir, "--db", "load", "--count", "2500", "--value-size", "10", "--batch", "1000")
        #expect(filled.status == 0)
        #expect(filled.out.contains("wrote 2500 records"))
        let listed = try depot("list", "--path", dir, "--db", "load", "--limit", "2")
        #expect(listed.out.hasPrefix("key-000000001\t"))
    }
}

struct CLIDoc: Document, Equatable {
    static var collection: String { "Doc" }
    var id: Int
    var title: String
    var owner: CLIOwner?
}
struct CLIOwner: Document, Equatable {
    static var collection: String { "Owner" }
    var id: String
    var name: String
}

@Suite("depot export (a second process reads committed documents)")
struct CLIExportTests {
    @Test func exportShowsDocumentsAndReferences() throws {
        let folder = TemporaryFolder("depot-export")
        let store = try Store(path: folder.path)
        try store.write { tx in
            try tx.park(CLIDoc(id: 2, title: "Zwei ✓", owner: CLIOwner(id: "o1", name: "Ann")))
            try tx.park(CLIDoc(id: -1, title: "minus one", owner: nil))
            try tx.alias("Other").park(CLIDoc(id: 7, title: "other", owner: nil))
        }
        let exe = try #require(depotExecutable())
        let out = try runProcess(exe, ["export", "--path", folder.path, "--collection", "Doc"])
        #expect(out.status == 0, "\(out.err)")
        let lines = out.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
        #expect(first?["id"] as? Int == -1, "integer IDs export in numeric order")
        let second = try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any]
        let doc = second?["document"] as? [String: Any]
        #expect(doc?["title"] as? String == "Zwei ✓")
        let ref = (doc?["owner"] as? [String: Any])?["$ref"] as? [String: Any]
        #expect(ref?["collection"] as? String == "Owner" && ref?["id"] as? String == "o1")
        let all = try runProcess(exe, ["export", "--path", folder.path])
        #expect(all.out.split(separator: "\n").count == 3, "Doc ×2 and Owner ×1 in the default alias")
        let other = try runProcess(exe, ["export", "--path", folder.path, "--alias", "Other"])
        #expect(other.out.contains("\"title\":\"other\""))
        let missing = try runProcess(exe, ["export", "--path", folder.path, "--alias", "Nope"])
        #expect(missing.status == 1 && missing.err.contains("no alias named 'Nope'"))
        let noCollection = try runProcess(exe, ["export", "--path", folder.path, "--collection", "Nope"])
        #expect(noCollection.status == 1 && noCollection.err.contains("no collection named 'Nope'"))
    }
}

struct CLIPerson: Document {
    static var collection: String { "Person" }
    var id: Int
    var name: String
    var age: Int
    var city: String
    static var indexes: [DocumentIndex<CLIPerson>] { [.init(\.age)] }
}

@Suite("depot query")
struct CLIQueryTests {
    @Test func whereSortLimitAndIndexUse() throws {
        let folder = TemporaryFolder("depot-query")
        let store = try Store(path: folder.path)
        let cities = ["Oslo", "Lima", "Rome"]
        try store.write { tx in
            for i in 0..<60 { try tx.park(CLIPerson(id: i, name: "P\(i)", age: (i * 7) % 50 - 10, city: cities[i % 3])) }
        }
        let exe = try #require(depotExecutable())
        func query(_ args: String...) throws -> (status: Int32, ids: [Int], err: String) {
            let r = try runProcess(exe, ["query", "--path", folder.path, "--collection", "Person"] + args)
            let ids = r.out.split(separator: "\n").compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? Int
            }
            return (r.status, ids, r.err)
        }
        let people = (0..<60).map { (id: $0, age: ($0 * 7) % 50 - 10, city: cities[$0 % 3]) }
        let older = try query("--where", "age", ">=", "30", "--where", "city", "==", "Oslo", "--sort", "id", "--explain")
        #expect(older.status == 0)
        #expect(older.ids == people.filter { $0.age >= 30 && $0.city == "Oslo" }.map(\.id).sorted())
        #expect(older.err.contains("index 'age'"), "the age index serves the range")
        let negative = try query("--where", "age", "<", "-5", "--sort", "age:desc", "--sort", "id")
        #expect(negative.ids == people.filter { $0.age < -5 }.sorted { ($0.age, -$0.id) > ($1.age, -$1.id) }.map(\.id))
        let limited = try query("--where", "city", "prefix", "R", "--limit", "3")
        #expect(limited.ids == people.filter { $0.city.hasPrefix("R") }.map(\.id).prefix(3).map { $0 })
        let quoted = try query("--where", "name", "==", "\"P7\"")
        #expect(quoted.ids == [7])
        let oneArgument = try query("--where", "age >= 30", "--where", "city  ==  Oslo", "--sort", "id")
        #expect(oneArgument.status == 0 && oneArgument.ids == older.ids, "a condition quoted as one argument")
        #expect(try query("--where", "name == P 7").ids.isEmpty, "the rest of the argument, spaces and all, is the value")
        #expect(try query("--where", "age = 3").status == 64, "'=' is not an operator: the argument is not split")
        let wrong = try query("--where", "age => 30", "--limit", "1")
        #expect(wrong.status == 64 && wrong.err.contains("unknown operator '=>'"), "the arguments after it stay options: \(wrong.err)")
        #expect(try query("--where", "age", "~", "3").status == 64)
        #expect(try query("--where", "age").status == 64)
        let missing = try runProcess(exe, ["query", "--path", folder.path, "--collection", "Nobody"])
        #expect(missing.status == 1 && missing.err.contains("no collection named 'Nobody'"))
    }
}

@Suite("depot seed")
struct CLISeedTests {
    func fixture() -> String {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            let candidate = url.appendingPathComponent("Fixtures/CorporateMayhem/Main.seed.json")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate.path }
        }
        return "Fixtures/CorporateMayhem/Main.seed.json"
    }

    @Test func seedsThenExportShowsReferences() throws {
        let exe = try #require(depotExecutable())
        let folder = TemporaryFolder("depot-seed")
        let seeded = try runProcess(exe, ["seed", "--path", folder.path, "--json", fixture()])
        #expect(seeded.status == 0, "\(seeded.err)")
        let summary = try JSONSerialization.jsonObject(with: Data(seeded.out.utf8)) as? [String: Any]
        #expect((summary?["documentsPerCollection"] as? [String: Int]) == ["Company": 2, "Employee": 8, "Department": 1])
        #expect(seeded.err.isEmpty, "no progress when standard error is not a terminal")
        let exported = try runProcess(exe, ["export", "--path", folder.path, "--collection", "Company"])
        #expect(exported.out.contains("\"$ref\":{\"collection\":\"Employee\""))
        #expect(exported.out.contains("Foo Inc."))
        let text = try runProcess(exe, ["seed", "--path", folder.path, fixture()])
        #expect(text.out.contains("seeded 11 documents from 10 files"))
    }

    @Test func aBadTreeExitsOneAndStoresNothing() throws {
        let exe = try #require(depotExecutable())
        let folder = TemporaryFolder("depot-seed-bad")
        let bad = folder.sub("bad.seed.json")
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        try Data(#"{"seedlings": [{"seedFile": "../../etc/passwd"}]}"#.utf8).write(to: URL(fileURLWithPath: bad))
        let result = try runProcess(exe, ["seed", "--path", folder.sub("store"), bad])
        #expect(result.status == 1)
        #expect(result.err.contains("outsideRoot") && result.err.contains("bad.seed.json"))
        #expect(result.err.contains("nothing was stored"))
        // With --json, the error names the file and the JSON path as fields (as `import` does).
        let json = try runProcess(exe, ["seed", "--path", folder.sub("store"), bad, "--json"])
        #expect(json.status == 1)
        let line = try #require(json.err.split(separator: "\n").last.map(String.init))
        let report = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let error = (report["error"] as? [String: Any]) ?? report
        #expect(error["code"] as? String == "outsideRoot")
        #expect((error["file"] as? String)?.hasSuffix("bad.seed.json") == true, "\(report)")
        #expect((error["jsonPath"] as? String)?.hasPrefix("$") == true, "\(report)")
        let missing = try runProcess(exe, ["seed", "--path", folder.sub("store"), folder.sub("nope.json")])
        #expect(missing.status == 1 && missing.err.contains("does not exist"))
    }
}

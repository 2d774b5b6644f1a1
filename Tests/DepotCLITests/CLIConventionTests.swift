import Depot
import DepotLMDB
import DepotTestSupport
import Foundation
import Testing

/// The conventions of issue 29, item 4: --json everywhere, kv, raw values on a terminal, stat's
/// map size, negative limits, import without input, readable help.
@Suite("depot CLI conventions")
struct CLIConventionTests {
    let folder = TemporaryFolder("depot-conventions")
    var path: String { folder.sub("env") }

    /// The one JSON object an error prints on standard error with --json.
    func errorObject(_ text: String) -> [String: Any]? {
        let lines = text.split(separator: "\n")
        guard lines.count == 1, let object = try? JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any] else { return nil }
        return object["error"] as? [String: Any]
    }

    @Test func everyCommandTakesJSONAndPrintsErrorsAsOneObject() throws {
        let missing = folder.sub("missing")
        let commands: [[String]] = [
            ["get", "--path", missing, "--db", "d", "k"], ["delete", "--path", missing, "--db", "d", "k"],
            ["list", "--path", missing, "--db", "d"], ["stat", "--path", missing], ["backup", "--path", missing, "--to", folder.sub("b")],
            ["collections", "--path", missing], ["doc", "get", "--path", missing, "--collection", "c", "--id", "1"],
            ["doc", "delete", "--path", missing, "--collection", "c", "--id", "1"], ["export", "--path", missing],
            ["import", "--path", missing, folder.sub("no-such-file.jsonl")], ["query", "--path", missing, "--collection", "c"],
            ["verify", "--path", missing], ["kv", "get", "--path", missing, "k"], ["kv", "delete", "--path", missing, "k"],
            ["kv", "list", "--path", missing], ["seed", "--path", missing, folder.sub("no-such-seed.json")],
        ]
        for command in commands {
            let run = try depot(command + ["--json"])
            #expect(run.status == 1, "\(command)")
            let error = errorObject(run.err)
            #expect(error?["message"] is String, "\(command): \(run.err)")
            #expect(!run.err.contains("Unknown option"), "\(command)")
        }
        let usage = try depot(["list", "--path", path, "--json"])
        #expect(usage.status == 64)
        #expect(errorObject(usage.err)?["code"] as? String == "usage", "\(usage.err)")
    }

    @Test func jsonOutputFollowsTheConvention() throws {
        #expect(try depot(["put", "--path", path, "--db", "d", "k", "v", "--json"]).status == 0)
        let got = try depot(["get", "--path", path, "--db", "d", "k", "--json"])
        #expect(got.out == #"{"key":"k","value":"v"}"# + "\n")
        let put = try depot(["doc", "put", "--path", path, "--collection", "P", "--id", "a", "{}", "--json"])
        #expect(put.out == #"{"collection":"P","id":"a","revision":1}"# + "\n", "\(put.err)")
        let query = try depot(["query", "--path", path, "--collection", "P", "--json"])
        #expect(query.status == 0 && query.out.hasPrefix(#"{"collection":"P""#), "\(query.err)")
        let warned = try depot(["query", "--path", path, "--collection", "P", "--where", "nme", "==", "x", "--json"])
        let warning = try JSONSerialization.jsonObject(with: Data(warned.err.utf8)) as? [String: Any]
        #expect((warning?["warning"] as? [String: Any])?["message"] is String, "\(warned.err)")
        let help = try depot(["--help"])
        #expect(help.out.contains("JSON Lines") && help.out.contains(#"{"error": {"message""#), "\(help.out)")
    }

    @Test func reportsAreOneObjectAndDemoStepsAreJSONLines() throws {
        let fill = try depot(["fill", "--path", path, "--db", "d", "--count", "10", "--json"])
        let filled = try JSONSerialization.jsonObject(with: Data(fill.out.utf8)) as? [String: Any]
        #expect(filled?["records"] as? Int == 10 && filled?["mapSize"] is Int, "\(fill.out)")
        let backup = try depot(["backup", "--path", path, "--to", folder.sub("copy"), "--json"])
        let copied = try JSONSerialization.jsonObject(with: Data(backup.out.utf8)) as? [String: Any]
        #expect(copied?["to"] as? String == folder.sub("copy") && copied?["bytes"] is Int, "\(backup.out)")
        let demo = try depot(["demo", "--path", folder.sub("demo"), "--json"])
        #expect(demo.status == 0, "\(demo.err)")
        let steps = demo.out.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(steps.count > 3 && steps.allSatisfy { $0?["step"] is String && $0?["milliseconds"] is Double }, "\(demo.out)")
    }

    @Test func kvTakesPlainStringsAndJSON() throws {
        #expect(try depot(["kv", "set", "--path", path, "name", "Ada"]).status == 0)
        #expect(try depot(["kv", "set", "--path", path, "limits", #"{"max": 10}"#]).status == 0)
        #expect(try depot(["kv", "set", "--path", path, "zip", "01234"]).status == 0, "not JSON (a leading zero): a string")
        #expect(try depot(["kv", "set", "--path", path, "count", "42", "--string"]).status == 0)
        #expect(try depot(["kv", "get", "--path", path, "name"]).out == "\"Ada\"\n")
        #expect(try depot(["kv", "get", "--path", path, "limits"]).out == #"{"max":10}"# + "\n")
        #expect(try depot(["kv", "get", "--path", path, "zip"]).out == "\"01234\"\n")
        #expect(try depot(["kv", "get", "--path", path, "count"]).out == "\"42\"\n")
        let strict = try depot(["kv", "set", "--path", path, "x", "Ada", "--json-value"])
        #expect(strict.status == 1 && strict.err.contains("not valid JSON"))
        // JSON that Depot cannot store was kept as a string without a word; refused now
        // (--string stores the text).
        for unstorable in [#"{"a":1e400}"#, "123456789012345678901234567890"] {
            let refused = try depot(["kv", "set", "--path", path, "big", unstorable, "--json"])
            #expect(refused.status == 1 && jsonErrorObject(refused.err)?["code"] as? String == "unstorableJSON", "\(unstorable): \(refused)")
            #expect(try depot(["kv", "get", "--path", path, "big"]).status == 1, "nothing stored")
        }
        // Text that only starts as JSON is no JSON: a string, as before.
        for text in ["12345678901234567890123-A", "1e999 reasons", #"{"a":1,"a":2"#] {
            #expect(try depot(["kv", "set", "--path", path, "text", text]).status == 0, "\(text)")
            let stored = try depot(["kv", "get", "--path", path, "text"]).out
            let decoded = try? JSONSerialization.jsonObject(with: Data(stored.utf8), options: .fragmentsAllowed) as? String
            #expect(decoded == text, "\(text) stored as a string: \(stored)")
        }
        let repeated = try depot(["kv", "set", "--path", path, "rep", #"{"a":1,"a":2}"#, "--json"])
        #expect(repeated.status == 1 && jsonErrorObject(repeated.err)?["code"] as? String == "unstorableJSON", "\(repeated)")
        #expect(try depot(["kv", "set", "--path", path, "big", #"{"a":1e400}"#, "--string"]).status == 0)
        #expect(try depot(["kv", "get", "--path", path, "big"]).out == #""{\"a\":1e400}""# + "\n")
        let store = try Store(path: path)
        #expect(store.keyValue()["name"] as String? == "Ada")
    }

    @Test func kvDeletesAndListsKeysByPrefix() throws {
        for key in ["user.1", "user.2", "users", "zeta"] {
            #expect(try depot(["kv", "set", "--path", path, key, "1"]).status == 0)
        }
        #expect(try depot(["kv", "list", "--path", path]).out == "user.1\nuser.2\nusers\nzeta\n")
        #expect(try depot(["kv", "list", "--path", path, "--prefix", "user.", "--limit", "1"]).out == "user.1\n")
        #expect(try depot(["kv", "list", "--path", path, "--prefix", "z", "--json"]).out == #"{"key":"zeta"}"# + "\n")
        #expect(try depot(["kv", "delete", "--path", path, "user.1"]).status == 0)
        let again = try depot(["kv", "delete", "--path", path, "user.1"])
        #expect(again.status == 1 && again.err.contains("'user.1' not found"))
        #expect(try depot(["kv", "list", "--path", path, "--prefix", "user"]).out == "user.2\nusers\n")
    }

    @Test func rawValuesAreEscapedOnATerminalUnlessRaw() throws {
        let exe = try #require(depotExecutable())
        let bytes: [UInt8] = [0x41, 0x00, 0x1B, 0x5B, 0x32, 0x4A, 0xFF, 0x5C]
        do {
            let env = try Environment.open(path: path)
            let db = try env.openDatabase("d", key: StringCodec.self, value: BytesCodec.self)
            try env.write { try $0.put(bytes, forKey: "k", in: db) }
        }
        let shown = try #require(try runOnTerminal(exe, ["get", "--path", path, "--db", "d", "k"]))
        #expect(shown.status == 0)
        #expect(String(decoding: shown.terminal, as: UTF8.self) == "A\\x00\\x1b[2J\\xff\\\\\n")
        let raw = try #require(try runOnTerminal(exe, ["get", "--path", path, "--db", "d", "k", "--raw"]))
        #expect(raw.terminal == bytes + [0x0A])
        let piped = try runProcess(exe, ["get", "--path", path, "--db", "d", "k"])
        #expect(piped.status == 0, "piped: the exact bytes (checked by the tests of raw values)")
        let text = try #require(try runOnTerminal(exe, ["get", "--path", path, "--db", "d", "k2"]))
        #expect(text.status == 1)
        #expect(try depot(["put", "--path", path, "--db", "d", "t", "blue-green 🌊\tok"]).status == 0)
        let plain = try #require(try runOnTerminal(exe, ["get", "--path", path, "--db", "d", "t"]))
        #expect(String(decoding: plain.terminal, as: UTF8.self) == "blue-green 🌊\tok\n", "printable text is shown as it is")
    }

    @Test func statReportsTheMapSizeAsMdbStatDoes() throws {
        guard let mdbStat = which("mdb_stat") else {
            Issue.record("mdb_stat missing: install lmdb-utils")
            return
        }
        // A writer that grew the map records a map size larger than the used part of the file.
        #expect(try depot(["fill", "--path", path, "--db", "d", "--count", "20000", "--value-size", "1000"]).status == 0)
        let reference = try runProcess(mdbStat, ["-e", path])
        let line = try #require(reference.out.split(separator: "\n").first { $0.contains("Map size:") })
        let expected = try #require(Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)))
        let text = try depot(["stat", "--path", path])
        #expect(text.out.contains("map size:         \(expected) bytes"), "\(text.out) vs mdb_stat \(expected)")
        let json = try depot(["stat", "--path", path, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any]
        #expect((object?["info"] as? [String: Any])?["mapSize"] as? Int == expected)
    }

    @Test func negativeLimitsAreRangeErrors() throws {
        #expect(try depot(["put", "--path", path, "--db", "d", "k", "v"]).status == 0)
        for command in [["list", "--path", path, "--db", "d"], ["query", "--path", path, "--collection", "c"], ["kv", "list", "--path", path]] {
            let run = try depot(command + ["--limit", "-1"])
            #expect(run.status == 64, "\(command)")
            #expect(run.err.contains("--limit must be 0 or more, got -1"), "\(command): \(run.err)")
            #expect(!run.err.contains("Missing value"))
        }
    }

    @Test func importWithoutInputOnATerminalSaysSo() throws {
        let exe = try #require(depotExecutable())
        let run = try #require(try runOnTerminal(exe, ["import", "--path", path], terminalInput: true, deadline: 10))
        #expect(run.status == 64)
        #expect(run.err.contains("give the JSON Lines file to import"), "\(run.err)")
    }

    /// `--dates` has no default (without it, dates are `{"$date": …}`): its help lists its
    /// values, never the option type's debug description.
    @Test func exportHelpShowsTheDateOptions() throws {
        let help = try depot(["export", "--help"])
        #expect(help.out.contains("values:") && help.out.contains("iso8601") && help.out.contains("{\"$date\": …}"), "\(help.out)")
        #expect(!help.out.contains("DateOption"))
    }

    @Test func whereMatchesAnElementOfAnArrayField() throws {
        let lines = """
            {"collection": "Dev", "id": 1, "document": {"id": 1, "skills": ["Go", "Swift"]}}
            {"collection": "Dev", "id": 2, "document": {"id": 2, "skills": ["Rust"]}}
            {"collection": "Dev", "id": 3, "document": {"id": 3, "skills": "Swift"}}
            """
        #expect(try depot(["import", "--path", path, "-"], input: Data(lines.utf8)).status == 0)
        let swift = try depot(["query", "--path", path, "--collection", "Dev", "--where", #"skills == "Swift""#])
        #expect(swift.out.split(separator: "\n").map { $0.contains(#""id":1,"document""#) || $0.contains(#""id":3,"document""#) } == [true, true], "\(swift.out)")
        let notSwift = try depot(["query", "--path", path, "--collection", "Dev", "--where", "skills", "!=", "Swift"])
        #expect(notSwift.out.contains(#""id":2,"document""#) && notSwift.out.split(separator: "\n").count == 1, "\(notSwift.out)")
        // The library's own query agrees (one implementation).
        let store = try Store(path: path)
        let found = try store.read { tx in
            try tx.query(collection: "Dev", conditions: [FieldCondition(field: "skills", op: .equal, value: .string("Swift"))]).documents
        }
        #expect(found.map(\.id) == [.int(1), .int(3)])
    }

    @Test func pipedImportIsAsFastAsFileImport() throws {
        var text = ""
        for i in 0..<20_000 { text += #"{"collection": "P", "id": \#(i), "document": {"id": \#(i), "name": "person \#(i)"}}"# + "\n" }
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        let file = folder.sub("input.jsonl")
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        let started = Date()
        #expect(try depot(["import", "--path", folder.sub("from-file"), file]).status == 0)
        let fromFile = Date().timeIntervalSince(started)
        let pipedStart = Date()
        #expect(try depot(["import", "--path", folder.sub("from-pipe"), "-"], input: Data(text.utf8)).status == 0)
        let fromPipe = Date().timeIntervalSince(pipedStart)
        // Before the fix a pipe took about 9 times as long (1 MiB zero-filled per 64 KiB read).
        #expect(fromPipe < fromFile * 2 + 0.5, "piped \(fromPipe) s, file \(fromFile) s")
    }
}

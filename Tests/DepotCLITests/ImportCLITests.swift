import Depot
import DepotTestSupport
import Foundation
import Testing

@Suite("depot import: bad input, counts, round trips, no leftovers, JSON errors")
struct CLIImportTests {
    let folder = TemporaryFolder("depot-import")

    /// Writes `bytes` to a file in the folder and returns its path.
    func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: folder.sub(name)))
        return folder.sub(name)
    }

    func file(_ name: String, _ text: String) throws -> String { try file(name, Array(text.utf8)) }

    /// How many documents the store at `path` holds (0 when there is no store).
    func storedDocuments(_ path: String) throws -> Int {
        guard FileManager.default.fileExists(atPath: path + "/data.mdb") else { return 0 }
        let store = try Store(path: path)
        return try store.aliases().reduce(0) { total, alias in
            try total + store.alias(alias).read { tx in try tx.collections().reduce(0) { try $0 + (tx.collectionInfo($1)?.count ?? 0) } }
        }
    }

    /// The one JSON object `--json` printed on standard error, as `error`'s fields.
    func jsonError(_ text: String) -> [String: Any]? {
        let lines = text.split(separator: "\n")
        guard lines.count == 1, let object = try? JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any] else { return nil }
        return object["error"] as? [String: Any]
    }

    @Test func invalidUTF8IsRefusedWithFileLineAndOffset() throws {
        let first = Array(#"{"collection":"p","id":1,"document":{"name":"ok"}}"#.utf8) + [0x0A]
        let prefix = Array(#"{"collection":"p","id":2,"document":{"name":"S"#.utf8)
        let second = prefix + [0xFF, 0xFE] + Array(#"X"}}"#.utf8) + [0x0A]
        let path = try file("bad-utf8.jsonl", first + second)
        let store = folder.sub("store")
        let result = try depot("import", "--path", store, path)
        #expect(result.status == 1, "\(result.out)")
        #expect(result.err.contains(path) && result.err.contains("line 2"), "\(result.err)")
        #expect(result.err.contains("UTF-8") && result.err.contains("byte \(prefix.count) of the line"), "\(result.err)")
        #expect(result.err.contains("byte \(first.count + prefix.count) of the input"), "\(result.err)")
        #expect(!result.err.contains("ok"), "no input value is echoed: \(result.err)")
        #expect(try storedDocuments(store) == 0, "nothing is stored")
    }

    /// A document whose own ID differs from its line's is refused with its line and JSON path
    /// (it would be stored under one ID and name another); nothing is stored. The same ID
    /// written both ways (integer and string of a UUID, as `export` prints them) is fine.
    @Test func aDocumentNamingAnotherIDThanItsLineIsRefused() throws {
        let path = try file("mismatch.jsonl", #"{"collection":"P","id":1,"document":{"id":1,"x":1}}"# + "\n"
                            + #"{"collection":"P","id":2,"document":{"id":3,"x":1}}"# + "\n")
        let store = folder.sub("store-mismatch")
        let result = try depot("import", "--json", "--path", store, path)
        #expect(result.status == 1, "\(result.out)")
        let error = jsonError(result.err)
        #expect(error?["line"] as? Int == 2 && error?["jsonPath"] as? String == "$.document.id", "\(result.err)")
        #expect(try storedDocuments(store) == 0, "nothing is stored")
        let same = try file("same.jsonl", #"{"collection":"P","id":2,"document":{"id":2,"x":1}}"# + "\n")
        #expect(try depot("import", "--path", store, same).status == 0)
        #expect(try depot("doc", "get", "--path", store, "--collection", "P", "--id", "2").status == 0)
    }

    /// A key a line does not have (a misspelling, an option of another tool) was dropped without
    /// a word (black-box testing, 2026-12-07): it is refused with its line and JSON path now, and
    /// nothing is stored.
    @Test func aLineWithAnUnknownKeyIsRefused() throws {
        for (key, path) in [("alias", "$.alias"), ("odd key", #"$["odd key"]"#)] {
            let input = try file("unknown.jsonl", #"{"collection":"P","id":1,"document":{"x":1}}"# + "\n"
                                 + #"{"collection":"P","id":2,"document":{"x":2},"\#(key)":"other"}"# + "\n")
            let store = folder.sub("store-unknown")
            let result = try depot("import", "--json", "--path", store, input)
            #expect(result.status == 1, "\(result.out)")
            let error = jsonError(result.err)
            #expect(error?["line"] as? Int == 2 && error?["jsonPath"] as? String == path && error?["code"] as? String == "invalidLine", "\(result.err)")
            #expect(!result.err.contains("other"), "no input value is echoed: \(result.err)")
            #expect(try storedDocuments(store) == 0, "nothing is stored")
        }
    }

    /// A collection name the store refuses was named by its line only with `--batch 1` (the
    /// error named the batch, "lines 1–2"): it is refused with its line now, nothing stored.
    @Test func anInvalidCollectionNameIsRefusedWithItsLine() throws {
        for name in ["bad/name", "", "tab\\tname"] {
            let input = try file("names.jsonl", #"{"collection":"ok","id":1,"document":{}}"# + "\n"
                                 + #"{"collection":"\#(name)","id":2,"document":{}}"# + "\n")
            let store = folder.sub("store-names")
            let result = try depot("import", "--json", "--path", store, input)
            #expect(result.status == 1, "\(result.out)")
            let error = jsonError(result.err)
            #expect(error?["line"] as? Int == 2 && error?["jsonPath"] as? String == "$.collection" && error?["code"] as? String == "invalidCollectionName",
                    "'\(name)': \(result.err)")
            #expect(try storedDocuments(store) == 0, "nothing is stored")
        }
    }

    /// A line that is not an object is named as such (not as a collection that is no string).
    @Test func aLineThatIsNotAnObjectIsNamedAsSuch() throws {
        for (line, kind) in [("[1,2]", "an array"), ("42", "a number"), ("null", "null"), (#""x""#, "a string")] {
            let path = try file("scalar.jsonl", line + "\n")
            let result = try depot("import", "--json", "--path", folder.sub("store-scalar"), path)
            #expect(result.status == 1, "\(line)")
            let error = jsonError(result.err)
            #expect(error?["jsonPath"] as? String == "$" && (error?["message"] as? String)?.contains("found \(kind)") == true, "\(line): \(result.err)")
        }
    }

    /// An input with no line break (as `/dev/zero` is) is refused once its line passes
    /// `--max-line-size`, instead of filling memory; nothing is stored. Lines within it import.
    @Test func aLineLongerThanTheLimitIsRefused() throws {
        let store = folder.sub("store-long")
        let first = #"{"collection":"P","id":1,"document":{"x":1}}"# + "\n"
        let endless = Data(first.utf8) + Data(count: 3_000_000)
        let result = try depot("import", "--json", "--path", store, "--max-line-size", "1000000", "-", input: endless)
        #expect(result.status == 1, "\(result.out)")
        let error = jsonError(result.err)
        #expect(error?["line"] as? Int == 2, "\(result.err)")
        #expect((error?["message"] as? String)?.contains("longer than 1000000 bytes") == true, "\(result.err)")
        #expect(try storedDocuments(store) == 0, "nothing is stored")
        #expect(try depot("import", "--path", store, "--max-line-size", "100", "-", input: Data(first.utf8)).status == 0)
        #expect(try depot("import", "--path", store, "--max-line-size", "0", "-", input: Data(first.utf8)).status == 64)
    }

    /// `--max-line-size` was checked only for a line longer than what one read returned: short
    /// lines past the limit were imported from a file, and from a pipe the first refused line was
    /// a later one. Every line is checked now, and the first one past the limit is named.
    @Test func everyLineIsCheckedAgainstTheLimit() throws {
        func line(_ id: Int, padding: Int) -> String {
            #"{"collection":"P","id":\#(id),"document":{"pad":""# + String(repeating: "x", count: padding) + "\"}}\n"
        }
        let input = line(1, padding: 200) + line(2, padding: 5_000) + line(3, padding: 70_000)
        let file = folder.sub("long-lines.jsonl")
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(input.utf8).write(to: URL(fileURLWithPath: file))
        for (label, arguments, stdin) in [("file", [file], Data?.none), ("pipe", ["-"], Data(input.utf8))] {
            let store = folder.sub("store-limit-\(label)")
            let result = try depot(["import", "--json", "--path", store, "--max-line-size", "100"] + arguments, input: stdin)
            #expect(result.status == 1, "\(label): \(result)")
            let error = jsonError(result.err)
            #expect(error?["line"] as? Int == 1, "\(label): \(result.err)")
            #expect((error?["message"] as? String)?.contains("longer than 100") == true, "\(label): \(result.err)")
            #expect(try storedDocuments(store) == 0, "\(label): nothing is stored")
        }
        let store = folder.sub("store-limit-fits")
        #expect(try depot("import", "--path", store, "--max-line-size", "70100", file).status == 0)
        #expect(try storedDocuments(store) == 3)
    }

    @Test func duplicateIDsAreCountedOnceAndTheReplacingLinesNamed() throws {
        let input = """
            {"collection":"c","id":1,"document":{"v":1}}
            {"collection":"c","id":2,"document":{"v":2}}
            {"collection":"c","id":1,"document":{"v":3}}
            {"collection":"d","id":"x","document":{"v":4}}
            {"collection":"c","id":1,"document":{"v":5}}
            """
        let path = try file("dups.jsonl", input)
        let text = try depot("import", "--path", folder.sub("a"), path)
        #expect(text.status == 0, "\(text.err)")
        #expect(text.out.contains("imported 3 documents"), "\(text.out)")
        #expect(text.out.contains("  c: 2\n") && text.out.contains("  d: 1\n"), "\(text.out)")
        #expect(text.out.contains("2 lines replaced a document of an earlier line") && text.out.contains("lines 3, 5"), "\(text.out)")
        #expect(try storedDocuments(folder.sub("a")) == 3)
        let exported = try depot("export", "--path", folder.sub("a"), "--collection", "c")
        #expect(exported.out.hasPrefix(#"{"collection":"c","id":1,"document":{"v":5}}"#), "the last line wins: \(exported.out)")
        let json = try depot("import", "--path", folder.sub("b"), "--json", path)
        let summary = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any]
        #expect(summary?["documents"] as? Int == 3)
        #expect(summary?["replacedLines"] as? Int == 2)
        #expect(summary?["replacedLineNumbers"] as? [Int] == [3, 5])
        #expect((summary?["documentsPerCollection"] as? [String: Int]) == ["c": 2, "d": 1])
        // One document: no plural.
        let one = try depot("import", "--path", folder.sub("c"), try file("one.jsonl", #"{"collection":"c","id":1,"document":{}}"#))
        #expect(one.out.contains("imported 1 document into"), "\(one.out)")
    }

    @Test func theDeepestStorableDocumentSurvivesExportAndImport() throws {
        func nested(_ levels: Int) -> String {
            String(repeating: #"{"a":"#, count: levels - 1) + "{}" + String(repeating: "}", count: levels - 1)
        }
        let put = try depot("doc", "put", "--path", folder.sub("a"), "--collection", "c", "--id", "1", "-", input: Data(nested(512).utf8))
        #expect(put.status == 0, "the store takes 512 levels: \(put.err)")
        let exported = try depot("export", "--path", folder.sub("a"))
        #expect(exported.status == 0, "\(exported.err)")
        let dump = try file("deep.jsonl", exported.out)
        let imported = try depot("import", "--path", folder.sub("b"), dump)
        #expect(imported.status == 0, "\(imported.err)")
        #expect(try depot("export", "--path", folder.sub("b")).out == exported.out)
        let tooDeep = try file("too-deep.jsonl", #"{"collection":"c","id":1,"document":"# + nested(513) + "}\n")
        let refused = try depot("import", "--path", folder.sub("c"), tooDeep)
        #expect(refused.status == 1 && refused.err.contains("line 1") && refused.err.contains("512"), "\(refused.err)")
        #expect(try depot("doc", "put", "--path", folder.sub("c"), "--collection", "c", "--id", "1", nested(513)).status == 1,
                "what import refuses, doc put refuses too")
    }

    /// Export lost a collection's ID kind where its IDs' JSON reads as another kind (unsigned
    /// IDs that all fit a signed integer, string IDs that all look like UUIDs): the import made
    /// them signed (or UUID) collections, which the Swift types could no longer read. Such lines
    /// name the kind now, and the import keeps it.
    @Test func exportAndImportKeepEachCollectionsIDKind() throws {
        struct Ticket: Document, Equatable { var id: UInt64; var title: String }
        struct Label: Document, Equatable { var id: String; var text: String }
        let uuidText = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
        do {
            let store = try Store(path: folder.sub("a"))
            try store.write { tx in
                try tx.park(Ticket(id: 7, title: "seven"))
                try tx.park(Label(id: uuidText, text: "label"))
            }
        }
        let exported = try depot("export", "--path", folder.sub("a"))
        #expect(exported.status == 0, "\(exported.err)")
        #expect(exported.out.contains(#""id":7,"idKind":"unsigned""#), "\(exported.out)")
        #expect(exported.out.contains(#""idKind":"string""#), "\(exported.out)")
        let dump = try file("kinds.jsonl", exported.out)
        let imported = try depot("import", "--path", folder.sub("b"), dump)
        #expect(imported.status == 0, "\(imported.err)")
        let store = try Store(path: folder.sub("b"))
        #expect(try store.read { tx in try tx.retrieve(Ticket.self, id: 7) } == Ticket(id: 7, title: "seven"))
        #expect(try store.read { tx in try tx.retrieve(Label.self, id: uuidText) } == Label(id: uuidText, text: "label"))
        #expect(try depot("export", "--path", folder.sub("b")).out == exported.out)

        // A line naming a kind its ID cannot have, an unknown kind, or another kind than the
        // store's collection, is refused with its line.
        let wrong = try file("wrong.jsonl", #"{"collection":"T","id":-1,"idKind":"unsigned","document":{}}"# + "\n")
        let refused = try depot("import", "--path", folder.sub("c"), wrong)
        #expect(refused.status == 1 && refused.err.contains("line 1") && refused.err.contains("unsigned"), "\(refused.err)")
        let upper = try file("upper.jsonl", #"{"collection":"H","id":""# + String(repeating: "AB", count: 32) + #"","idKind":"content","document":{}}"# + "\n")
        let upperRun = try depot("import", "--path", folder.sub("c"), upper)
        #expect(upperRun.status == 1 && upperRun.err.contains("content"), "a content hash is spelled in lower case: \(upperRun.err)")
        let unknown = try file("unknown.jsonl", #"{"collection":"T","id":1,"idKind":"number","document":{}}"# + "\n")
        let unknownRun = try depot("import", "--path", folder.sub("c"), unknown)
        #expect(unknownRun.status == 1 && unknownRun.err.contains("$.idKind"), "\(unknownRun.err)")
        let other = try file("other.jsonl", #"{"collection":"Ticket","id":8,"idKind":"signed","document":{"title":"eight"}}"# + "\n")
        let otherRun = try depot("import", "--path", folder.sub("b"), other)
        #expect(otherRun.status == 1 && otherRun.err.contains("has unsigned IDs in the store"), "\(otherRun.err)")
        #expect(try storedDocuments(folder.sub("c")) == 0)
    }

    @Test func anEmptyImportExportsAsNothing() throws {
        let empty = try file("empty.jsonl", "")
        let imported = try depot("import", "--path", folder.sub("a"), empty)
        #expect(imported.status == 0 && imported.out.contains("imported 0 documents"), "\(imported.err)")
        let exported = try depot("export", "--path", folder.sub("a"))
        #expect(exported.status == 0 && exported.out.isEmpty && exported.err.isEmpty, "\(exported.err)")
        // An alias whose collections hold no documents exports nothing too.
        #expect(try depot("doc", "put", "--path", folder.sub("b"), "--collection", "c", "--id", "1", "{}").status == 0)
        #expect(try depot("doc", "delete", "--path", folder.sub("b"), "--collection", "c", "--id", "1").status == 0)
        let cleared = try depot("export", "--path", folder.sub("b"))
        #expect(cleared.status == 0 && cleared.out.isEmpty && cleared.err.isEmpty, "\(cleared.err)")
        // A store with other aliases still names a mistyped one.
        let typo = try depot("export", "--path", folder.sub("b"), "--alias", "defualt")
        #expect(typo.status == 1 && typo.err.contains("no alias named 'defualt'"), "\(typo.err)")
    }

    @Test func theInputIsCheckedFirstAndAFailedImportLeavesNoNewFolders() throws {
        let bad = try file("bad.jsonl", "{\"collection\":\"c\",\"id\":1,\"document\":{}}\nnot json\n")
        let fresh = folder.sub("new/deeper")
        let failed = try depot("import", "--path", fresh, bad)
        #expect(failed.status == 1 && failed.err.contains("line 2"), "\(failed.err)")
        #expect(!FileManager.default.fileExists(atPath: folder.sub("new")), "no empty store (nor its folders) is left behind")
        // A store error in a new store (the second ID does not fit the collection's integer IDs).
        let mixed = try file("mixed.jsonl", "{\"collection\":\"c\",\"id\":1,\"document\":{}}\n{\"collection\":\"c\",\"id\":\"x\",\"document\":{}}\n")
        let rejected = try depot("import", "--path", fresh, mixed)
        #expect(rejected.status == 1 && rejected.err.contains("line 2"), "\(rejected.err)")
        #expect(try storedDocuments(fresh) == 0, "the new store stays (never deleted: another process may use it), empty")
        // A folder that existed (without a store) stays, without store files.
        try FileManager.default.createDirectory(atPath: folder.sub("kept"), withIntermediateDirectories: true)
        #expect(try depot("import", "--path", folder.sub("kept"), bad).status == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.sub("kept")).isEmpty)
        // An existing store keeps its documents.
        #expect(try depot("doc", "put", "--path", folder.sub("old"), "--collection", "c", "--id", "9", "{}").status == 0)
        #expect(try depot("import", "--path", folder.sub("old"), mixed).status == 1)
        #expect(try storedDocuments(folder.sub("old")) == 1)
        // A bad alias is a usage error before anything is read or created.
        #expect(try depot("import", "--path", folder.sub("alias"), "--alias", "a/b", mixed).status == 64)
        #expect(!FileManager.default.fileExists(atPath: folder.sub("alias")))
        // A folder, a missing file: named, plain language, and no store is created.
        let directory = try depot("import", "--path", folder.sub("d"), folder.path)
        #expect(directory.status == 1 && directory.err.contains("'\(folder.path)' is a folder, not a file"), "\(directory.err)")
        #expect(!directory.err.contains("NSCocoaErrorDomain"))
        let missing = try depot("import", "--path", folder.sub("d"), folder.sub("nope.jsonl"))
        #expect(missing.status == 1 && missing.err.contains("'\(folder.sub("nope.jsonl"))' does not exist"), "\(missing.err)")
        #expect(!FileManager.default.fileExists(atPath: folder.sub("d")))
    }

    @Test func devicesAndLongLinesAreRead() throws {
        let null = try depot("import", "--path", folder.sub("null"), "/dev/null")
        #expect(null.status == 0, "\(null.err)")
        // One line of 5 MiB, read in 1 MiB chunks, between two short ones.
        let long = String(repeating: "x", count: 5 << 20)
        let path = try file("long.jsonl", "{\"collection\":\"c\",\"id\":1,\"document\":{}}\n"
            + "{\"collection\":\"c\",\"id\":2,\"document\":{\"text\":\"\(long)\"}}\n{\"collection\":\"c\",\"id\":3,\"document\":{}}\n")
        let run = try depot("import", "--path", folder.sub("long"), path)
        #expect(run.status == 0, "\(run.err)")
        #expect(try storedDocuments(folder.sub("long")) == 3)
    }

    @Test func jsonErrorsAreOneJSONObject() throws {
        let bad = try file("bad.jsonl", "{\"collection\":\"c\",\"id\":1,\"document\":{}}\n{\"collection\":\"c\",\"id\":2,\"document\":{\"a\":1,\"a\":2}}\n")
        let line = try depot("import", "--path", folder.sub("a"), "--json", bad)
        #expect(line.status == 1)
        let error = try #require(jsonError(line.err), "one JSON object on stderr: \(line.err)")
        #expect(error["file"] as? String == bad && error["line"] as? Int == 2, "\(error)")
        #expect(error["jsonPath"] as? String == "$.document.a" && error["code"] as? String == "invalidJSON", "\(error)")
        #expect((error["message"] as? String)?.contains("nothing was stored") == true)
        let missing = try depot("import", "--path", folder.sub("a"), "--json", folder.sub("nope.jsonl"))
        let unreadable = try #require(jsonError(missing.err), "\(missing.err)")
        #expect(missing.status == 1 && unreadable["code"] as? String == "unreadableFile" && unreadable["file"] as? String == folder.sub("nope.jsonl"))
        let fromStdin = try depot("import", "--path", folder.sub("a"), "--json", "-", input: Data([0x7B, 0xC3, 0x0A]))
        let utf8 = try #require(jsonError(fromStdin.err), "\(fromStdin.err)")
        #expect(utf8["code"] as? String == "invalidUTF8" && utf8["file"] as? String == "-" && utf8["line"] as? Int == 1 && utf8["offset"] as? Int == 1, "\(utf8)")
    }
}

import DepotTestSupport
import Foundation
import Testing

/// Document commands on inputs an outside tester found mishandled (2026-12-07): Unicode
/// spellings that Swift calls equal and LMDB does not, ID kinds an export loses, and errors that
/// differed between similar commands.
@Suite("depot: document edge cases found by black-box testing")
struct DocumentEdgeCLITests {
    let folder = TemporaryFolder("depot-document-edges")
    /// "é" precomposed (NFC) and as "e" plus a combining accent (NFD): equal as Swift strings.
    let composed = "\u{E9}", decomposed = "e\u{301}"

    func file(_ name: String, _ text: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: folder.sub(name)))
        return folder.sub(name)
    }

    func jsonError(_ text: String) -> [String: Any]? { jsonErrorObject(text) }

    /// Two spellings of one collection name were one collection in memory and two catalog
    /// entries on disk: a document written under one replaced the other's, and the counts were
    /// wrong. A new collection or alias must be named in NFC now; nothing is written otherwise.
    @Test func aNewNameNotInNFCIsRefused() throws {
        let store = folder.sub("names")
        #expect(try depot("doc", "put", "--path", store, "--collection", composed, "--id", "1", #"{"v":"A"}"#).status == 0)
        for arguments in [["--collection", decomposed], ["--alias", "x" + decomposed, "--collection", "P"]] {
            let run = try depot(["doc", "put", "--path", store, "--id", "1", #"{"v":"B"}"#, "--json"] + arguments)
            #expect(run.status == 1 && run.err.contains("normalization form C"), "\(arguments): \(run)")
        }
        let kv = try depot("kv", "set", "--path", store, "--alias", "y" + decomposed, "k", "v", "--json")
        #expect(kv.status == 1 && kv.err.contains("normalization form C"), "\(kv)")
        let get = try depot("doc", "get", "--path", store, "--collection", composed, "--id", "1")
        #expect(get.out.contains(#""v":"A""#), "the first document is intact: \(get)")
        let collections = try depot("collections", "--path", store, "--json")
        #expect(collections.out.split(separator: "\n").count == 1, "one collection: \(collections.out)")
    }

    /// `kv list` merged keys that are stored apart (one per spelling); `kv get` read each.
    @Test func keyValueKeysAreListedAsStored() throws {
        let store = folder.sub("kv")
        #expect(try depot("kv", "set", "--path", store, composed, "1").status == 0)
        #expect(try depot("kv", "set", "--path", store, decomposed, "2").status == 0)
        let list = try depot("kv", "list", "--path", store, "--json")
        #expect(list.status == 0 && list.out.split(separator: "\n").count == 2, "\(list)")
    }

    /// `kv list` printed a key holding a newline as two lines (three keys looked like four):
    /// keys are escaped as the raw `list` escapes them.
    @Test func keyValueKeysWithLineBreaksAreListedOneALine() throws {
        let store = folder.sub("kv-lines")
        for (key, value) in [("a\nb", "1"), ("a", "2"), ("b", "3"), ("t\tab\\", "4")] {
            #expect(try depot("kv", "set", "--path", store, key, value).status == 0)
        }
        let list = try depot("kv", "list", "--path", store)
        #expect(list.status == 0 && list.out == "a\na\\nb\nb\nt\\tab\\\\\n", "\(list)")
    }

    /// JSON keys are compared by their characters (RFC 8259), so two spellings are two keys: they
    /// were refused as a repeated key, and `kv set` then stored the text as a string.
    @Test func jsonKeysInTwoSpellingsAreTwoKeys() throws {
        let store = folder.sub("json-keys")
        let object = #"{"\#(composed)":1,"\#(decomposed)":2}"#
        let put = try depot("doc", "put", "--path", store, "--collection", "P", "--id", "1", object)
        #expect(put.status == 0, "\(put)")
        let get = try depot("doc", "get", "--path", store, "--collection", "P", "--id", "1")
        #expect(get.out.contains(":1,") && get.out.contains(":2"), "\(get)")
        #expect(try depot("kv", "set", "--path", store, "k", object, "--json-value").status == 0)
        let value = try depot("kv", "get", "--path", store, "k")
        #expect(value.out.hasPrefix("{"), "stored as an object, not a string: \(value)")
        let many = "{" + (0..<20).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + #","\#(composed)":1,"\#(decomposed)":2,"\#(composed)":3}"#
        let repeated = try depot("doc", "put", "--path", store, "--collection", "P", "--id", "2", many, "--json")
        #expect(repeated.status != 0 && repeated.err.contains("more than once"), "a key repeated byte for byte is still refused: \(repeated)")
    }

    /// Export, import into an empty store and export again print the same lines, whatever the
    /// first ID of a collection looks like: the kind comes from all of its IDs.
    @Test func exportsWhoseFirstIDMisleadsImportBack() throws {
        let upper = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", lower = upper.lowercased()
        let unsignedLine = Data((#"{"collection":"P","id":18446744073709551615,"document":{}}"# + "\n").utf8)
        let seedFile = try file("two-cases.json", #"{"P":[{"id":"\#(upper)"},{"id":"\#(lower)"}]}"#)
        // Each case: its name, the steps that make the source store, and how many documents it holds.
        let cases: [(String, [([String], Data?)], Int)] = [
            ("strings", [(["doc", "put", "--collection", "P", "--id", "a", "{}"], nil),
                         (["doc", "put", "--collection", "P", "--id", upper, "{}"], nil)], 2),
            ("unsigned", [(["import", "-"], unsignedLine), (["doc", "put", "--collection", "P", "--id", "1", "{}"], nil)], 2),
            ("uuid-case", [(["doc", "put", "--collection", "P", "--id", upper, "{}"], nil),
                           (["doc", "put", "--collection", "P", #"{"id":"\#(lower)","v":2}"#], nil)], 1), // one UUID, replaced
            ("seeded", [(["seed", seedFile], nil)], 2), // seeding keeps them as strings
        ]
        for (name, steps, documents) in cases {
            let source = folder.sub("source-\(name)"), copy = folder.sub("copy-\(name)")
            for (arguments, input) in steps {
                let run = try depot(arguments + ["--path", source], input: input)
                #expect(run.status == 0, "\(name): \(arguments): \(run)")
            }
            let exported = try depot("export", "--path", source)
            let lines = exported.out.split(separator: "\n").count
            #expect(exported.status == 0 && lines == documents, "\(name): \(exported)")
            let exportFile = try file("export-\(name).jsonl", exported.out)
            let imported = try depot("import", "--path", copy, exportFile)
            #expect(imported.status == 0, "\(name): \(imported)")
            #expect(try depot("export", "--path", copy).out == exported.out, "\(name): the round trip changed the lines")
        }
    }

    /// A document spelling its line's UUID in another case is the same ID only in a UUID
    /// collection; in a string collection the two spellings are two IDs, so the line is refused.
    @Test func aUUIDInAnotherCaseIsOneIDOnlyInAUUIDCollection() throws {
        let upper = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", lower = upper.lowercased()
        let line = #"{"collection":"P","id":"\#(upper)","document":{"id":"\#(lower)"}}"#
        let uuids = try file("uuid-case.jsonl", line + "\n")
        #expect(try depot("import", "--path", folder.sub("uuid-case"), uuids).status == 0)
        let strings = try file("string-case.jsonl", #"{"collection":"P","id":"a","document":{}}"# + "\n" + line + "\n")
        let run = try depot("import", "--path", folder.sub("string-case"), strings, "--json")
        #expect(run.status == 1 && jsonError(run.err)?["line"] as? Int == 2 && jsonError(run.err)?["jsonPath"] as? String == "$.document.id", "\(run)")
    }

    /// Integer and string IDs in one new collection: refused before the store is made (a store
    /// was left behind, empty, by the failed import).
    @Test func integerAndStringIDsInOneCollectionAreRefusedFirst() throws {
        let input = try file("mixed.jsonl", #"{"collection":"P","id":1,"document":{}}"# + "\n" + #"{"collection":"P","id":"x","document":{}}"# + "\n")
        let store = folder.sub("mixed")
        let run = try depot("import", "--path", store, input, "--json")
        #expect(run.status == 1 && jsonError(run.err)?["line"] as? Int == 2 && jsonError(run.err)?["code"] as? String == "invalidLine", "\(run)")
        #expect(!FileManager.default.fileExists(atPath: store), "no store is made")
    }

    /// `doc delete` said "no document" for a missing alias or collection, where `doc get` names
    /// what is missing.
    @Test func docDeleteNamesAMissingAliasOrCollection() throws {
        let store = folder.sub("delete")
        #expect(try depot("doc", "put", "--path", store, "--collection", "P", "--id", "1", "{}").status == 0)
        for (arguments, code) in [(["--alias", "nope", "--collection", "P"], "noAlias"), (["--collection", "Nope"], "noCollection"),
                                  (["--collection", "P"], "notFound")] {
            for command in ["get", "delete"] {
                let run = try depot(["doc", command, "--path", store, "--id", "2", "--json"] + arguments)
                #expect(run.status == 1 && jsonError(run.err)?["code"] as? String == code, "doc \(command) \(arguments): \(run)")
            }
        }
    }

    /// A seed error under an empty or odd key had a JSON path such as `$.[0]` or `$.a/b[0]`.
    @Test func seedErrorPathsQuoteOddKeys() throws {
        for (json, path) in [(#"{"":[{"id":1}]}"#, #"$[""][0]"#), (#"{"a/b":[{"id":1}]}"#, #"$["a/b"][0]"#)] {
            let seed = try file("odd.json", json)
            let run = try depot("seed", "--path", folder.sub("seed-odd"), seed, "--json")
            #expect(run.status != 0 && jsonError(run.err)?["jsonPath"] as? String == path, "\(json): \(run)")
        }
    }

    /// `collections` padded names by UTF-16 units and cut a name's emoji in two (U+FFFD).
    @Test func collectionNamesWithEmojiAreListedWhole() throws {
        let store = folder.sub("emoji")
        for name in ["集合🚀", "a"] {
            let put = try depot("doc", "put", "--path", store, "--collection", name, "--id", "1", "{}")
            #expect(put.status == 0, "\(put.err)")
        }
        let listed = try depot("collections", "--path", store)
        #expect(listed.status == 0 && listed.out.contains("集合🚀  ") && !listed.out.contains("\u{FFFD}"), "\(listed.out)")
    }
}

import Depot
import DepotTestSupport
import Foundation
import Testing

/// A typed document as an app stores it: dates and UUIDs, an index on the date.
struct CLIEvent: Document, Equatable {
    static var collection: String { "Event" }
    var id: Int
    var title: String
    var when: Date
    var token: UUID
    var payload: Data
    static var indexes: [DocumentIndex<CLIEvent>] { [.init(\.when)] }
}

/// Export and import between the Swift API and the CLI keep typed values typed: dates, UUIDs
/// and bytes went out as strings and came back as strings (found 2026-12-08: an index range on
/// a date missed every imported document, `depot query` could not compare a date, and export,
/// import and export again differed in the stored values).
@Suite("depot export/import: typed values (dates, UUIDs, bytes) survive")
struct TypedValueCLITests {
    let folder = TemporaryFolder("depot-typed")
    static let start = Date(timeIntervalSince1970: 1_780_000_000.123456)

    static func events() -> [CLIEvent] {
        (0..<10).map { i in
            CLIEvent(id: i, title: "E\(i)", when: start.addingTimeInterval(Double(i) * 3_600.25),
                     token: UUID(uuidString: String(format: "%08X-1111-4222-8333-444455556666", i))!,
                     payload: Data([UInt8(i), 0xFF, 0x00]))
        }
    }

    /// A store holding ``events()``; the given IDs marked synced.
    func typedStore(_ name: String, synced: [Int] = []) throws -> String {
        let path = folder.sub(name)
        let store = try Store(path: path)
        try store.write { tx in
            for event in Self.events() { try tx.park(event) }
            try tx.setSyncStatus(.synced, for: CLIEvent.self, ids: synced)
        }
        return path
    }

    /// Writes `text` to a file in the folder and returns its path.
    func file(_ name: String, _ text: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: folder.sub(name)))
        return folder.sub(name)
    }

    func export(_ store: String, _ extra: String...) throws -> String {
        let result = try depot(["export", "--path", store] + extra)
        #expect(result.status == 0, "\(result)")
        return result.out
    }

    func importFile(_ file: String, into store: String, _ extra: String...) throws -> CommandResult {
        try depot(["import", "--path", store] + extra + [file])
    }

    /// (a) After export and import, a typed range query on the indexed date finds the imported
    /// documents (the index held strings, so `when > x` found none of them).
    @Test func anIndexRangeOnADateFindsImportedDocuments() throws {
        let source = try typedStore("source")
        let lines = try file("events.jsonl", try export(source))
        let target = folder.sub("target")
        let imported = try importFile(lines, into: target)
        #expect(imported.status == 0, "\(imported)")
        let store = try Store(path: target)
        // A typed write reconciles the schema: the date index is built from the stored values.
        try store.write { tx in try tx.park(CLIEvent(id: 100, title: "new", when: Self.start.addingTimeInterval(-10), token: UUID(), payload: Data())) }
        let after = Self.events()[4].when
        let result = try store.read { tx in try tx.execute(FetchRequest<CLIEvent>().matching(\.when, .greaterThan(after))) }
        #expect(result.map(\.id).sorted() == [5, 6, 7, 8, 9], "plan: \(result.plan)")
        let typed = try store.read { tx in try tx.retrieve(CLIEvent.self, id: 3) }
        #expect(typed == Self.events()[3])
    }

    /// (b) `depot query` compares typed values written as `{"$date": …}` and `{"$uuid": …}`,
    /// through the date index.
    @Test func queryComparesTypedDatesAndUUIDs() throws {
        let source = try typedStore("query")
        func ids(_ arguments: String...) throws -> [Int] {
            let result = try depot(["query", "--path", source, "--collection", "Event", "--sort", "id"] + arguments)
            #expect(result.status == 0, "\(result)")
            return result.out.split(separator: "\n").compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? Int
            }
        }
        let after = #"{"$date": "\#(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: 1_780_014_402)))"}"#
        #expect(try ids("--where", "when", ">", after) == [5, 6, 7, 8, 9])
        #expect(try ids("--where", "when > \(after)") == [5, 6, 7, 8, 9], "one quoted argument")
        let explained = try depot("query", "--path", source, "--collection", "Event", "--where", "when", "<=", after, "--explain")
        #expect(explained.err.contains("index 'when'"), "\(explained)")
        let token = Self.events()[4].token.uuidString.lowercased()
        #expect(try ids("--where", "token", "==", #"{"$uuid": "\#(token)"}"#) == [4])
        let bad = try depot("query", "--path", source, "--collection", "Event", "--where", "when", ">", #"{"$date": "secret-text"}"#)
        #expect(bad.status == 64 && bad.err.contains("$date") && !bad.err.contains("secret-text"), "\(bad)")
    }

    /// (c) Export, import into an empty store and export again: the same lines, and the stored
    /// values are the same values (type-exact: dates, UUIDs and bytes, not strings).
    @Test func exportImportExportIsFaithful() throws {
        let source = try typedStore("faithful")
        let first = try export(source)
        #expect(first.contains(#""when":{"$date":""#) && first.contains(#""token":{"$uuid":""#), "\(first)")
        #expect(first.contains(#""payload":{"$binary":{"base64":""#), "\(first)")
        let target = folder.sub("faithful-copy")
        #expect(try importFile(try file("faithful.jsonl", first), into: target).status == 0)
        #expect(try export(target) == first)
        let original = try Store(path: source), copy = try Store(path: target)
        for id in 0..<10 {
            let a = try original.read { try $0.document(in: "Event", id: .int(Int64(id))) }
            let b = try copy.read { try $0.document(in: "Event", id: .int(Int64(id))) }
            #expect(a != nil && a == b, "document \(id)")
        }
    }

    /// A file written before typed values (dates and UUIDs as strings) imports as before, and
    /// typed reads still decode it.
    @Test func anOldExportImportsAsBefore() throws {
        let old = try file("old.jsonl", #"{"collection":"Event","id":1,"document":{"id":1,"title":"x","when":"2026-05-28T20:26:40.123456Z","token":"00000001-1111-4222-8333-444455556666","payload":"AP8A"}}"# + "\n")
        let target = folder.sub("old")
        #expect(try importFile(old, into: target).status == 0)
        let store = try Store(path: target)
        let stored = try store.read { try $0.document(in: "Event", id: .int(1)) }
        #expect(stored?["when"] == .string("2026-05-28T20:26:40.123456Z") && stored?["token"] == .string("00000001-1111-4222-8333-444455556666"))
        let event = try store.read { try $0.retrieve(CLIEvent.self, id: 1) }
        #expect(event?.token == UUID(uuidString: "00000001-1111-4222-8333-444455556666"))
    }

    /// A malformed typed value is refused with the file, line and JSON path, never its text, and
    /// nothing is stored.
    @Test func malformedTypedValuesAreRefusedWithTheirPath() throws {
        let good = #"{"collection":"Event","id":1,"document":{"when":{"$date":"2026-01-01T00:00:00Z"}}}"#
        let cases: [(String, String)] = [
            (#"{"when":{"$date":"secret-1"}}"#, "$.document.when"),
            (#"{"when":{"$date":17}}"#, "$.document.when"),
            (#"{"a":[{"$uuid":"secret-2"}]}"#, "$.document.a[0]"),
            (#"{"b":{"$binary":{"base64":"secret-3!","subType":"00"}}}"#, "$.document.b"),
            (#"{"b":{"$binary":{"base64":"AP8A","subType":"05"}}}"#, "$.document.b"),
            (#"{"n":{"$numberDouble":"secret-4"}}"#, "$.document.n"),
            (#"{"l":{"$literal":"secret-5"}}"#, "$.document.l"),
        ]
        for (document, path) in cases {
            let input = try file("bad.jsonl", good + "\n" + #"{"collection":"Event","id":2,"document":\#(document)}"# + "\n")
            let store = folder.sub("bad-store")
            let result = try importFile(input, into: store, "--json")
            #expect(result.status == 1, "\(document): \(result)")
            #expect(result.err.contains(input) && result.err.contains("line 2") && result.err.contains(path), "\(document): \(result.err)")
            #expect(!result.err.contains("secret"), "no input value is echoed: \(result.err)")
            #expect(!FileManager.default.fileExists(atPath: store + "/data.mdb"), "nothing is stored")
        }
    }

    /// `doc put` reads typed values, `doc get` prints them; `--plain` prints dates, UUIDs and
    /// bytes as strings and reads `$`-objects as plain objects.
    @Test func docPutAndGetUseTypedValues() throws {
        let store = folder.sub("doc")
        let body = #"{"title":"x","when":{"$date":"2026-01-02T03:04:05.5Z"},"token":{"$uuid":"00000001-1111-4222-8333-444455556666"},"payload":{"$binary":{"base64":"AP8A","subType":"00"}}}"#
        let put = try depot("doc", "put", "--path", store, "--collection", "Event", "--id", "1", body)
        #expect(put.status == 0, "\(put)")
        let stored = try Store(path: store).read { try $0.document(in: "Event", id: .string("1")) }
        #expect(stored?["when"] == .date(Date(timeIntervalSince1970: 1_767_323_045.5)))
        #expect(stored?["token"] == .uuid(UUID(uuidString: "00000001-1111-4222-8333-444455556666")!))
        #expect(stored?["payload"] == .bytes([0, 0xFF, 0]))
        let get = try depot("doc", "get", "--path", store, "--collection", "Event", "--id", "1")
        #expect(get.out.contains(#""when":{"$date":"2026-01-02T03:04:05.500Z"}"#), "\(get)")
        let plain = try depot("doc", "get", "--path", store, "--collection", "Event", "--id", "1", "--plain")
        #expect(plain.out.contains(#""when":"2026-01-02T03:04:05.500Z""#) && plain.out.contains(#""payload":"AP8A""#), "\(plain)")
        let literal = try depot("doc", "put", "--path", store, "--collection", "Event", "--id", "2", "--plain", #"{"when":{"$date":"not a date"}}"#)
        #expect(literal.status == 0, "\(literal)")
        let kept = try Store(path: store).read { try $0.document(in: "Event", id: .string("2")) }
        #expect(kept?["when"] == .object([.init("$date", .string("not a date"))]))
    }

    /// `--plain` export writes what earlier versions wrote (dates as ISO-8601 text, UUIDs as
    /// text, bytes as base64); `--dates` still chooses how dates are written.
    @Test func plainExportAndDatesKeepTheirOutput() throws {
        let source = try typedStore("plain")
        let plain = try export(source, "--plain")
        #expect(plain.contains(#""token":"00000000-1111-4222-8333-444455556666""#) && !plain.contains("$date") && !plain.contains("$uuid"), "\(plain)")
        let seconds = try export(source, "--dates", "seconds")
        #expect(seconds.contains(#""when":1780000000.12"#) && seconds.contains("$uuid"), "\(seconds)")
    }
}

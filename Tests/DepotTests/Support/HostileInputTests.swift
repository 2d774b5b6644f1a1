import Foundation
import Testing
@testable import DepotCore
import Depot
import DepotTestSupport
import DepotEngine
import DepotSupport

/// The library side of what black-box testing of the CLI found (2026-12-07): a path helper that
/// never traps, paths parsed once per query, wide objects built in linear time, and damaged
/// keys named without their bytes.
@Suite("Hostile input: paths, wide objects, damaged keys")
struct HostileInputTests {
    @Test func parentOfAPathMatchesFoundationWithoutTrapping() {
        // Foundation's NSString.deletingLastPathComponent traps on "s" (Swift 6.3, Linux).
        let expected: [(String, String)] = [
            ("s", ""), ("ab", ""), ("", ""), ("/", "/"), ("/a", "/"), ("/a/b", "/a"), ("a/b", "a"),
            ("a/b/", "a"), ("a//b", "a"), ("//a", "/"), ("./s", "."), ("x/sub", "x"), ("/a/b//", "/a"), ("é/ü", "é"),
        ]
        for (path, parent) in expected {
            #expect(FilePaths.parent(of: path) == parent, "parent of '\(path)'")
        }
        // Where Foundation does not trap, the same answers.
        for (path, _) in expected where path.count > 1 {
            #expect(FilePaths.parent(of: path) == (path as NSString).deletingLastPathComponent, "'\(path)' as Foundation")
        }
    }

    @Test func aPathParsedOnceFindsWhatTheSubscriptFinds() throws {
        let document = DocumentValue.object([
            .init("name", .string("Ada")),
            .init("address", .object([.init("zip", .string("12345")), .init("2", .string("two"))])),
            .init("tags", .array([.string("a"), .string("b"), .array([.int(7), .int(8)])])),
            .init("items", .array([.object([.init("name", .string("first"))])])),
        ])
        let paths = ["name", "address.zip", "address.2", "tags[1]", "tags.1", "tags[2][1]", "tags.2.0", "items[0].name",
                     "items.0.name", "", ".", "name.", "tags[", "tags[x]", "tags[9]", "missing", "address.zip.more",
                     "tags[-1]", "[0]", "name[0]"]
        for path in paths {
            #expect(IndexFieldPath(path).value(in: document) == document[path: path], "path '\(path)'")
        }
    }

    @Test func aWideObjectKeepsFirstPlacesAndLastValues() {
        var fields: [(String, DocumentValue)] = (0..<5_000).map { ("f\($0)", .int(Int64($0))) }
        fields.append(("f10", .string("again")))   // a repeated name: its first place, its last value
        fields.append(("id", .int(-1)))            // the ID given separately comes first
        let wide = DynamicObject(entity: "P", id: .int(1), fields: fields)
        #expect(wide.fields.count == 5_001)
        #expect(wide.fields.first?.key == "id" && wide.fields.first?.value == .int(-1))
        #expect(wide.fields[11].key == "f10" && wide.fields[11].value == .string("again"))
        #expect(wide.fields.last?.key == "f4999")

        // The same as setting the fields one by one (the path a few fields take).
        let small = Array(fields.prefix(10)) + [("f3", DocumentValue.null)]
        var byHand = DynamicObject(entity: "P", id: .int(1))
        for (k, v) in small { byHand[dynamicMember: k] = v }
        var many = small
        many += (0..<20).map { ("g\($0)", DocumentValue.bool(true)) }
        var byHandMany = byHand
        for (k, v) in many.suffix(20) { byHandMany[dynamicMember: k] = v }
        #expect(DynamicObject(entity: "P", id: .int(1), fields: many).fields.map(\.key) == byHandMany.fields.map(\.key))
        #expect(DynamicObject(entity: "P", id: .int(1), fields: many).value == byHandMany.value)
    }

    @Test func aKeyOfAnotherShapeIsNamedBySizeOnly() {
        let record: [UInt8] = [0x01, 0x02, 0x01, 0, 0, 0, 0x53, 0x45, 0x43, 0x52, 0x45, 0x54]
        record.withUnsafeBytes { key in
            for kind in [IDKind.signed, .unsigned, .uuid, .content, .string] {
                let shown = kind.display(key: key)
                let what = kind == .string ? "a damaged entry, or an ID holding NUL (named by its size only)" : "a damaged entry"
                #expect(shown == "(a key of 12 bytes that is no \(kind.rawValue) ID: \(what))", "\(kind): \(shown)")
            }
        }
        let eight: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 42]
        #expect(eight.withUnsafeBytes { IDKind.unsigned.display(key: $0) } == "42")
        #expect(Array("alice".utf8).withUnsafeBytes { IDKind.string.display(key: $0) } == "alice")
        // A string ID may hold control characters (JSON "a\tb"): still an ID, not damage.
        #expect(Array("a\tb".utf8).withUnsafeBytes { IDKind.string.display(key: $0) } == "a\tb")
    }
}

/// Names and messages of the second outside-testing round (2026-12-07, afternoon).
@Suite("Reserved names and seed ID messages")
struct ReservedNameTests {
    let folder = TemporaryFolder()

    /// `$kv` names the key/value kit's records in change sets and errors: a document collection
    /// of that name could not be told from them.
    @Test func theKeyValueKitsNameIsNoCollectionName() throws {
        let store = try Store(path: folder.path)
        let object = DynamicObject(entity: "$kv", id: .string("a"), fields: [("id", .string("a"))])
        let error = #expect(throws: DepotError.self) { try store.write { tx in _ = try tx.park(object) } }
        #expect(error?.code == .invalidCollectionName && error?.message.contains("key/value") == true, "\(String(describing: error))")
    }

    /// A key/value record that did not open was named by its keyspace (`depot.kv/default`), as
    /// `$kv` everywhere else.
    @Test func aKeyValueRecordThatDoesNotOpenIsNamedAsKeyValue() {
        let error = [UInt8]("pin".utf8).withUnsafeBytes {
            DepotError.transformFailed(keyspace: StoreLayout.keyValueDatabase(alias: "default"), key: $0, detail: "x")
        }
        #expect(error.collection == "$kv" && error.id == "pin", "\(error)")
    }

    /// A seeded ID of the wrong shape was "must be a non-empty signed of at most 511 bytes".
    @Test func aBadSeededIDSaysWhatAnIDMustBe() throws {
        #expect(Seeder.describe(.signed) == "an integer from -9223372036854775808 to 9223372036854775807")
        #expect(Seeder.describe(.unsigned).hasPrefix("an integer from 0 to"))
        #expect(Seeder.describe(.uuid) == "a UUID")
        #expect(Seeder.describe(.string).hasPrefix("a non-empty string of at most"))
    }
}

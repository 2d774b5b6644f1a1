@testable import Depot
@testable import DepotCore
import Foundation
import Testing
import DepotTestSupport

@Suite struct DocumentValueTests {
    let sample: DocumentValue = [
        "name": "Ada", "age": 36, "height": 1.7, "admin": false, "nothing": .null,
        "address": ["street": "Main", "zip": 8000],
        "tags": ["a", "b", "c"],
        "big": .uint(UInt64.max),
    ]

    @Test func binaryRoundTrip() throws {
        let values: [DocumentValue] = [
            sample, .null, .bool(true), .int(.min), .uint(.max), .double(-0.5), .string("ü🎉"),
            .bytes([0, 255]), .date(Date(timeIntervalSinceReferenceDate: -1.25)), .uuid(UUID()),
            .array([]), .object([]), .reference(collection: "users", id: "u1"),
            .reference(collection: "x", id: .uuid(UUID())), .reference(collection: "x", id: .uint(7)),
        ]
        for v in values {
            #expect(try DocumentValue(binary: v.binary()) == v)
        }
    }

    @Test func binaryInteropWithCodable() throws {
        // Codable -> binary -> DocumentValue
        let c = Contact(name: "n", address: CodecAddress(street: "s", zip: 12), tags: ["t"], scores: [1, -2], nickname: nil)
        let tree = try DocumentValue(binary: BinaryEncoder().encode(c))
        #expect(tree[path: "address.zip"] == .int(12))
        #expect(tree[path: "scores[1]"] == .int(-2))
        #expect(tree["nickname"] == nil)  // encodeIfPresent skips nil
        // DocumentValue -> binary -> Codable
        let doc: DocumentValue = ["name": "n", "address": ["zip": 12, "street": "s"], "tags": ["t"], "scores": [1, -2]]
        #expect(try BinaryDecoder().decode(Contact.self, from: doc.binary()) == c)
        // DocumentValue decoded through BinaryDecoder from encoder output
        #expect(try BinaryDecoder().decode(DocumentValue.self, from: BinaryEncoder().encode(c)) == tree)
        // and encoded through BinaryEncoder
        #expect(try BinaryEncoder().encode(tree) == tree.binary())
    }

    @Test func specialTypesFromDocumentStrings() throws {
        struct Special: Codable, Equatable {
            var when: Date
            var id: UUID
            var link: URL
            var amount: Decimal
            var blob: Data
        }
        let s = Special(when: Date(timeIntervalSince1970: 1_700_000_000), id: UUID(), link: URL(string: "https://x.y/z")!,
                        amount: Decimal(string: "10.25")!, blob: Data([1, 2, 3]))
        let tree = try DocumentValue(binary: BinaryEncoder().encode(s))
        #expect(tree["link"] == .string("https://x.y/z"))
        #expect(tree["amount"] == .string("10.25"))
        // Through JSON (dates as ISO strings, uuids as strings, bytes base64) and back.
        let json = try tree.jsonData()
        let fromJSON = try DocumentValue(json: json)
        #expect(try BinaryDecoder().decode(Special.self, from: fromJSON.binary()) == s)
    }

    @Test func jsonParsing() throws {
        let v = try DocumentValue(jsonString: #"{"i": 3, "d": 3.0, "e": 1e2, "b": true, "n": null, "s": "a\"\\\/\n\u00e9\ud83d\ude00", "a": [1, -2, 18446744073709551615, -9223372036854775808]}"#)
        #expect(v["i"] == .int(3))
        #expect(v["d"] == .double(3.0))
        #expect(v["e"] == .double(100))
        #expect(v["b"] == .bool(true))
        #expect(v["n"] == .null)
        #expect(v["s"] == .string("a\"\\/\né😀"))
        #expect(v[path: "a[2]"] == .uint(.max))
        #expect(v[path: "a.3"] == .int(.min))
        // Integers beyond 64 bits are refused (see StrictJSONTests), not rounded to a double.
        #expect(throws: BinaryCodecError.self) { try DocumentValue(jsonString: "99999999999999999999") }
        #expect(v.fields?.map(\.key) == ["i", "d", "e", "b", "n", "s", "a"])
        for bad in ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "tru", "\"\\x\"", "[1] 2", "\"\u{01}\"", "\"\\ud800\"", "-"] {
            #expect(throws: BinaryCodecError.self, "\(bad)") { try DocumentValue(jsonString: bad) }
        }
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(throws: BinaryCodecError.nestingTooDeep(limit: 512)) { try DocumentValue(jsonString: deep) }
    }

    @Test func jsonWriting() throws {
        let v: DocumentValue = ["b": 1, "a": [true, .null, 2.5, "x\"y\n\u{1}"], "c": .uint(5)]
        #expect(try v.jsonString() == #"{"b":1,"a":[true,null,2.5,"x\"y\n\u0001"],"c":5}"#)
        #expect(try v.jsonString(sortedKeys: true) == #"{"a":[true,null,2.5,"x\"y\n\u0001"],"b":1,"c":5}"#)
        #expect(try DocumentValue(json: v.jsonData())["a"] == v["a"])
        #expect(try DocumentValue(json: v.jsonData())["c"] == .int(5))  // JSON has no unsigned kind
        #expect(try DocumentValue.double(3).jsonString() == "3.0")
        #expect(try DocumentValue(jsonString: DocumentValue.double(3).jsonString()) == .double(3))
        // Non-finite doubles (stored by old records or Swift code) export as strings, never fail.
        #expect(try DocumentValue.double(.infinity).jsonString() == #""Infinity""#)
        #expect(try DocumentValue.array([.double(.nan), .double(-.infinity)]).jsonString() == #"["NaN","-Infinity"]"#)
        let u = UUID()
        #expect(try DocumentValue.uuid(u).jsonString() == "\"\(u.uuidString)\"")
        #expect(try DocumentValue.bytes([1, 2, 3]).jsonString() == "\"AQID\"")
        #expect(try DocumentValue.date(Date(timeIntervalSince1970: 0)).jsonString() == "\"1970-01-01T00:00:00Z\"")
        let frac = try DocumentValue.date(Date(timeIntervalSince1970: 0.5)).jsonString()
        #expect(frac.hasPrefix("\"1970-01-01T00:00:00.5"))
        // A date that is no point in time (Swift code can make one) is written as such, never
        // as a made-up day.
        #expect(try DocumentValue.date(Date(timeIntervalSinceReferenceDate: .nan)).jsonString() == #""NaN""#)
        #expect(try DocumentValue.date(Date(timeIntervalSinceReferenceDate: -.infinity)).jsonString() == #""-Infinity""#)
        #expect(DateStrategy.formatted("yyyy-MM-dd").value(for: Date(timeIntervalSinceReferenceDate: .infinity)) == .string("Infinity"))
        #expect(DateStrategy.formatted("yyyy-MM-dd").value(for: Date(timeIntervalSince1970: 0)) == .string("1970-01-01"))
    }

    @Test func subscriptsAndPaths() {
        #expect(sample["name"] == "Ada")
        #expect(sample["missing"] == nil)
        #expect(sample["tags"]?[1] == "b")
        #expect(sample["tags"]?[9] == nil)
        #expect(sample[path: "address.zip"] == 8000)
        #expect(sample[path: "tags[2]"] == "c")
        #expect(sample[path: "tags.0"] == "a")
        #expect(sample[path: "address.nope"] == nil)
        #expect(sample[path: "tags[x]"] == nil)
        let nested: DocumentValue = ["m": [[1, 2], [3]]]
        #expect(nested[path: "m[0][1]"] == 2)
        #expect(nested[path: "m[1]"] == [3])
    }

    @Test func comparison() {
        typealias D = DocumentValue
        #expect(D.compare(.int(1), .int(2)) == .orderedAscending)
        #expect(D.compare(.int(2), .double(2.0)) == .orderedSame)
        #expect(D.compare(.int(2), .double(2.5)) == .orderedAscending)
        #expect(D.compare(.double(-2.5), .int(-2)) == .orderedAscending)
        #expect(D.compare(.uint(.max), .int(-1)) == .orderedDescending)
        #expect(D.compare(.int(-1), .uint(0)) == .orderedAscending)
        #expect(D.compare(.uint(.max), .double(1e30)) == .orderedAscending)
        #expect(D.compare(.int(.max), .double(9.3e18)) == .orderedAscending)
        #expect(D.compare(.int(Int64.max), .double(9223372036854775807.0)) == .orderedAscending)
        #expect(D.compare(.double(.nan), .int(1)) == nil)
        #expect(D.compare(.string("a"), .string("b")) == .orderedAscending)
        #expect(D.compare(.string("é"), .string("z")) == .orderedDescending)  // by scalar/bytes, not locale
        #expect(D.compare(.string("ab"), .string("a")) == .orderedDescending)
        #expect(D.compare(.string("a"), .int(1)) == nil)
        #expect(D.compare(.bool(false), .bool(true)) == .orderedAscending)
        #expect(D.compare(.null, .null) == .orderedSame)
        #expect(D.compare([1, 2], [1, 3]) == .orderedAscending)
        #expect(D.compare(["a": 1], ["a": 1]) == nil)
        #expect(D.compare(.date(Date(timeIntervalSince1970: 1)), .date(Date(timeIntervalSince1970: 2))) == .orderedAscending)
    }

    @Test func hashableKeepsOrder() {
        let a: DocumentValue = ["x": 1, "y": 2]
        let b: DocumentValue = ["y": 2, "x": 1]
        #expect(a != b)
        #expect(Set([a, a, b]).count == 2)
    }
}

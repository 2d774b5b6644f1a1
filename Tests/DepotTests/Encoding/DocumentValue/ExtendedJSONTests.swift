import DepotTestSupport
import Foundation
import Testing
@testable import DepotEngine

/// `JSONStyle.extended`: dates, UUIDs, bytes and non-finite numbers are written as one-key
/// objects (MongoDB Extended JSON's form) and read back as the same values; plain JSON read
/// them back as strings (an index or a comparison then saw text, not a date).
@Suite("Extended JSON: typed values read back exactly")
struct ExtendedJSONTests {
    static let uuid = UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8")!

    /// Values of every kind, and objects whose keys look like the typed forms.
    static var samples: [DocumentValue] {
        let date = Date(timeIntervalSince1970: 1_700_000_000.123456)
        return [
            .date(date), .date(Date(timeIntervalSinceReferenceDate: -0.25)), .date(Date(timeIntervalSinceReferenceDate: .infinity)),
            .date(Date(timeIntervalSinceReferenceDate: -.infinity)), .uuid(uuid), .bytes([]), .bytes([0, 0xFF, 0x10, 0x7F]),
            .double(.infinity), .double(-.infinity), .double(2.5), .double(-0.0), .int(-3), .uint(UInt64.max), .string("$date"),
            .reference(collection: "P", id: .uuid(uuid)), .reference(collection: "P", id: .int(7)),
            .object([.init("$date", .string("2026-01-01T00:00:00Z"))]),
            .object([.init("$uuid", .string("not a uuid"))]),
            .object([.init("$binary", .int(1))]),
            .object([.init("$numberDouble", .string("x"))]),
            .object([.init("$ref", .object([.init("collection", "P"), .init("id", 1)]))]),
            .object([.init("$literal", .object([.init("$date", .date(date))]))]),
            .object([.init("$literal", .array([.object([.init("$uuid", .uuid(uuid))])]))]),
            .object([.init("$date", .string("x")), .init("other", .date(date))]),
            .object([.init("$other", .uuid(uuid))]),
            ["a": [.date(date), .uuid(uuid), ["$ref": "x"]], "b": ["$literal": 1], "c": .null],
            // "$literal" first in an object of several keys is an ordinary key.
            .object([.init("$literal", ["$date": "not a date"]), .init("b", 1)]),
            .object([.init("$literal", .date(date)), .init("b", .uuid(uuid))]),
            .object([.init("$literal", .object([.init("$date", .date(date)), .init("x", 1)])), .init("b", 1)]),
        ]
    }

    @Test func everyValueReadsBackAsItself() throws {
        for value in Self.samples {
            let text = try value.jsonString(style: .extended)
            let back = try DocumentValue(jsonString: text, style: .extended)
            // Binary form: type-exact, and NaN-safe (a NaN date is not equal to itself).
            #expect(back.binary() == value.binary(), "\(value) → \(text) → \(back)")
            let line = try DocumentValue(exportedLine: Data(#"{"document":\#(text)}"#.utf8))
            #expect(line["document"]?.binary() == value.binary(), "\(text)")
        }
        let nan = try DocumentValue(jsonString: DocumentValue.double(.nan).jsonString(style: .extended), style: .extended)
        #expect(nan.doubleValue?.isNaN == true)
    }

    @Test func theTypedFormsAreMongoDBs() throws {
        let date = Date(timeIntervalSinceReferenceDate: 0.5)
        #expect(try DocumentValue.date(date).jsonString(style: .extended) == #"{"$date":"2001-01-01T00:00:00.500Z"}"#)
        #expect(try DocumentValue.uuid(Self.uuid).jsonString(style: .extended) == #"{"$uuid":"6BA7B810-9DAD-11D1-80B4-00C04FD430C8"}"#)
        #expect(try DocumentValue.bytes([0, 0xFF, 0]).jsonString(style: .extended) == #"{"$binary":{"base64":"AP8A","subType":"00"}}"#)
        #expect(try DocumentValue.double(-.infinity).jsonString(style: .extended) == #"{"$numberDouble":"-Infinity"}"#)
        #expect(try DocumentValue.object([.init("$uuid", 1)]).jsonString(style: .extended) == #"{"$literal":{"$uuid":1}}"#)
        // Read: lower-case UUIDs, offsets, six digits, finite doubles as text.
        #expect(try DocumentValue(jsonString: #"{"$uuid":"6ba7b810-9dad-11d1-80b4-00c04fd430c8"}"#, style: .extended) == .uuid(Self.uuid))
        #expect(try DocumentValue(jsonString: #"{"$date":"2001-01-01T02:00:00.500000+02:00"}"#, style: .extended) == .date(date))
        #expect(try DocumentValue(jsonString: #"{"$numberDouble":"1.5"}"#, style: .extended) == .double(1.5))
    }

    /// Plain JSON is what it was: typed values as strings, `$`-objects as objects.
    @Test func thePlainStyleIsUnchanged() throws {
        let value: DocumentValue = ["d": .date(Date(timeIntervalSinceReferenceDate: 0.5)), "u": .uuid(Self.uuid), "b": .bytes([0, 0xFF, 0]), "n": .double(.nan)]
        #expect(try value.jsonString() == #"{"d":"2001-01-01T00:00:00.500Z","u":"6BA7B810-9DAD-11D1-80B4-00C04FD430C8","b":"AP8A","n":"NaN"}"#)
        let object = try DocumentValue(jsonString: #"{"$date":"2001-01-01T00:00:00Z"}"#)
        #expect(object == .object([.init("$date", "2001-01-01T00:00:00Z")]))
        #expect(try DocumentValue(exportedLine: Data(#"{"$date":"bad"}"#.utf8), style: .plain) == .object([.init("$date", "bad")]))
    }

    /// A typed value as deep as a document may hold one (level 511) reads back: its object's
    /// inner levels do not count. An object that only starts like one is held to the cap.
    @Test func typedValuesAtTheDeepestLevelReadBack() throws {
        func nested(_ levels: Int, _ inner: DocumentValue) -> DocumentValue {
            (0..<levels).reduce(inner) { value, _ in .array([value]) }
        }
        for inner in [DocumentValue.date(Date(timeIntervalSince1970: 1.5)), .uuid(Self.uuid), .bytes([1]), .double(.infinity),
                      .object([.init("$uuid", 1)])] {
            let levels = BinaryFormat.maxDepth - ExtendedJSON.height(inner)
            let deepest = nested(levels, inner)
            let json = try deepest.jsonData(style: .extended)
            #expect(try DocumentValue(json: json, style: .extended).binary() == deepest.binary(), "\(inner)")
            #expect(throws: BinaryCodecError.nestingTooDeep(limit: BinaryFormat.maxDepth)) {
                try DocumentValue(json: nested(levels + 1, inner).jsonData(style: .extended), style: .extended)
            }
        }
        for key in ["$date", "$binary", "$literal"] {
            let fits = DocumentValue.object([.init(key, nested(BinaryFormat.maxDepth - 2, 1)), .init("x", 1)])
            #expect(try DocumentValue(json: fits.jsonData(style: .extended), style: .extended) == fits)
            let deeper = DocumentValue.object([.init(key, nested(BinaryFormat.maxDepth - 1, 1)), .init("x", 1)])
            #expect(throws: BinaryCodecError.nestingTooDeep(limit: BinaryFormat.maxDepth)) {
                try DocumentValue(json: deeper.jsonData(style: .extended), style: .extended)
            }
        }
    }

    /// A one-key object whose key names a typed value it does not hold is refused at its JSON
    /// path, without its text.
    @Test func malformedTypedValuesAreRefusedAtTheirPath() throws {
        let cases: [(String, String)] = [
            (#"{"a":{"$date":"secret"}}"#, "$.a"),
            (#"{"a":{"$date":"2026-01-01T00:00:00secret"}}"#, "$.a"),
            (#"{"a":[1,{"$date":17}]}"#, "$.a[1]"),
            (#"{"$uuid":"secret"}"#, "$"),
            (#"{"a":{"b":{"$uuid":null}}}"#, "$.a.b"),
            (#"{"a":{"$binary":"secret"}}"#, "$.a"),
            (#"{"a":{"$binary":{"base64":"secret!!","subType":"00"}}}"#, "$.a"),
            (#"{"a":{"$binary":{"base64":"AP8A","subType":"04"}}}"#, "$.a"),
            (#"{"a":{"$binary":{"base64":"AP8A"}}}"#, "$.a"),
            (#"{"a":{"$numberDouble":"secret"}}"#, "$.a"),
            (#"{"a":{"$numberDouble":"1e999"}}"#, "$.a"),
            (#"{"a":{"$numberDouble":"1e-400"}}"#, "$.a"),
            (#"{"a":{"$numberDouble":" 1"}}"#, "$.a"),
            (#"{"a":{"$numberDouble":1.5}}"#, "$.a"),
            (#"{"a":{"$literal":"secret"}}"#, "$.a"),
        ]
        for (text, path) in cases {
            do {
                _ = try DocumentValue(jsonString: text, style: .extended)
                Issue.record("accepted: \(text)")
            } catch let error as BinaryCodecError {
                guard case .rejectedJSON(_, let at, _) = error else { Issue.record("\(text): \(error)"); continue }
                #expect(at == path, "\(text): \(error)")
                #expect(!"\(error)".contains("secret") && !"\(error)".contains("AP8A"), "\(error)")
            }
            #expect(throws: Never.self, "plain JSON reads it as an object") { try DocumentValue(jsonString: text) }
        }
    }
}

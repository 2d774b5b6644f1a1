@testable import Depot
@testable import DepotCore
import DepotTestSupport
import Foundation
import Testing

/// The keyed look-up's fast case (the entry at the hint is compared in place, values skipped
/// inline) and the plain `Codable` direct read of the document layer: records whose keys are not
/// where a type's declaration puts them must decode exactly as before, one decoder for all.
@Suite("Keyed look-up")
struct KeyedLookupTests {
    struct Full: Codable, Equatable {
        var id: String
        var name: String
        var age: Int
        var email: String
        var tags: [String]
        var nickname: String?
    }

    /// The keys of `Full` in another order, some missing, some unknown.
    struct Shuffled: Codable {
        var tags: [String]
        var extra: [String: Int]
        var email: String
        var age: Int
        var unknown: String
        var name: String
        var id: String
    }

    struct Decoy: Codable { var ids: String; var id: String; var name: String; var age: Int; var email: String; var tags: [String] }

    @Test func keysOutOfOrderMissingOrUnknownDecodeWithOneDecoder() throws {
        let encoder = BinaryEncoder()
        let decoder = BinaryDecoder()
        let inOrder = Full(id: "a", name: "Ann", age: 30, email: "ann@example.com", tags: ["x"], nickname: "An")
        let shuffled = Shuffled(tags: ["p", "q"], extra: ["k": 1], email: "bo@example.com", age: 41,
                                unknown: String(repeating: "u", count: 200), name: "Bo", id: "b")
        // A key whose name starts like another one, and one of the same length before it.
        let decoy = Decoy(ids: "zz", id: "c", name: "Cy", age: 7, email: "cy@example.com", tags: [])
        for _ in 0..<3 {
            #expect(try decoder.decode(Full.self, from: encoder.encode(inOrder)) == inOrder)
            #expect(try decoder.decode(Full.self, from: encoder.encode(shuffled))
                    == Full(id: "b", name: "Bo", age: 41, email: "bo@example.com", tags: ["p", "q"], nickname: nil))
            #expect(try decoder.decode(Full.self, from: encoder.encode(decoy))
                    == Full(id: "c", name: "Cy", age: 7, email: "cy@example.com", tags: [], nickname: nil))
        }
    }

    /// Large values (lengths of more than one varint byte) between the keys asked for.
    @Test func longValuesAndContainersAreSkipped() throws {
        struct Wide: Codable, Equatable {
            var a: [Int]
            var b: String
            var c: [String: [String]]
            var d: Int
        }
        struct Narrow: Codable, Equatable { var d: Int; var b: String }
        let decoder = BinaryDecoder()
        for n in [0, 1, 127, 128, 300] {
            let wide = Wide(a: Array(0..<n), b: String(repeating: "b", count: n), c: ["k": Array(repeating: "v", count: n)],
                            d: n * 1_000_000)
            let bytes = try BinaryEncoder().encode(wide)
            #expect(try decoder.decode(Wide.self, from: bytes) == wide)
            #expect(try decoder.decode(Narrow.self, from: bytes) == Narrow(d: n * 1_000_000, b: wide.b))
        }
    }

    /// Integers of one, two and more varint bytes, read in place and skipped on the way to
    /// another key (zig-zagged: 63 and -64 take one byte, 64 and 8,191 two, 8,192 three).
    @Test func integersOfEveryWidthAreReadAndSkipped() throws {
        struct Ints: Codable, Equatable { var a: Int; var b: Int; var c: Int; var s: String; var d: Int }
        struct Later: Codable, Equatable { var d: Int; var s: String; var b: Int }
        let decoder = BinaryDecoder()
        let widths = [0, 63, -64, 64, -65, 8_191, -8_192, 8_192, 1 << 40, Int.max, Int.min]
        for (i, v) in widths.enumerated() {
            let w = widths[(i + 3) % widths.count]
            let ints = Ints(a: v, b: w, c: v / 2, s: "s\(i)", d: v &+ w)
            let bytes = try BinaryEncoder().encode(ints)
            #expect(try decoder.decode(Ints.self, from: bytes) == ints)
            #expect(try decoder.decode(Later.self, from: bytes) == Later(d: v &+ w, s: "s\(i)", b: w))
            #expect(try decoder.decode([Int].self, from: BinaryEncoder().encode([v, w, v &+ w])) == [v, w, v &+ w])
        }
    }

    @Test func aMissingKeyAndAMismatchStillNameTheirPath() throws {
        struct Inner: Codable { var zip: Int }
        struct Outer: Codable { var name: String; var inner: Inner }
        struct WrongInner: Codable { var zip: String }
        struct WrongOuter: Codable { var name: String; var inner: WrongInner }
        struct Lacking: Codable { var name: String }
        let decoder = BinaryDecoder()
        let wrong = try BinaryEncoder().encode(WrongOuter(name: "n", inner: WrongInner(zip: "z")))
        #expect {
            try decoder.decode(Outer.self, from: wrong)
        } throws: { error in
            (error as? DecodingError)?.fieldPath == "inner.zip"
        }
        let lacking = try BinaryEncoder().encode(Lacking(name: "n"))
        #expect {
            try decoder.decode(Outer.self, from: lacking)
        } throws: { error in
            guard case .keyNotFound(let key, _) = error as? DecodingError else { return false }
            return key.stringValue == "inner"
        }
        // The decoder is sound after the failures.
        let good = try BinaryEncoder().encode(Outer(name: "m", inner: Inner(zip: 9)))
        #expect(try decoder.decode(Outer.self, from: good).inner.zip == 9)
    }

    /// A root type decoded natively, then one through `init(from:)`, then the first again.
    @Test func rootTypesAlternate() throws {
        let decoder = BinaryDecoder()
        let encoder = BinaryEncoder()
        let value = Full(id: "i", name: "n", age: 1, email: "e", tags: [], nickname: nil)
        for _ in 0..<2 {
            #expect(try decoder.decode([String].self, from: encoder.encode(["a", "b"])) == ["a", "b"])
            #expect(try decoder.decode(Full.self, from: encoder.encode(value)) == value)
            #expect(try decoder.decode(String.self, from: encoder.encode("s")) == "s")
        }
    }
}

/// A plain `Codable` document (no generated codec), read by the document layer's direct path.
private struct PlainBadge: Document, Codable, Equatable {
    var id: String
    var label: String
    var owners: [String]
    var note: String?
}

/// The same collection written with other keys: older records, or another program's.
private struct PlainBadgeV0: Document, Codable {
    static let collection = "PlainBadge"
    var owners: [String]
    var id: String
    var extra: Int
    var label: String
}

@Suite("Plain Codable documents read directly")
struct PlainDocumentReadTests {
    @Test func fieldsWithTheIDsBytesShareItAndOthersDecodeAsStored() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let badges = [
            PlainBadge(id: "abcdefghijklmnopq", label: "abcdefghijklmnopq", owners: ["abcdefghijklmnopx", "abcdefghijklmnopq"]),
            PlainBadge(id: "k", label: "K", owners: ["k", "kk"], note: "k"),
            PlainBadge(id: "é-long-identifier", label: "é-long-identifieR", owners: [], note: nil),
        ]
        try store.write { tx in for badge in badges { try tx.park(badge) } }
        let read = try store.read { tx in try badges.map { try tx.retrieve(PlainBadge.self, id: $0.id) } }
        #expect(read == badges)
        #expect(try store.read { tx in try tx.retrieve(PlainBadge.self, id: "missing") } == nil)
    }

    @Test func recordsWithOtherKeysDecodeAndReportAsBefore() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        try store.write { tx in
            try tx.park(PlainBadgeV0(owners: ["o"], id: "old", extra: 5, label: "L"))
        }
        let old = try store.read { tx in try tx.retrieve(PlainBadge.self, id: "old") }
        #expect(old == PlainBadge(id: "old", label: "L", owners: ["o"], note: nil))
        // A record lacking a required field: the error names the collection, the ID and the field.
        struct Required: Document, Codable { static var collection: String { "PlainBadge" }; var id: String; var missing: Int }
        #expect {
            try store.read { tx in try tx.retrieve(Required.self, id: "old") }
        } throws: { error in
            let text = "\(error)"
            return text.contains("PlainBadge") && text.contains("old") && text.contains("missing")
        }
    }
}

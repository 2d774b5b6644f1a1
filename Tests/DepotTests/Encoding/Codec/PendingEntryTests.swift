@testable import DepotCore
import Foundation
import Testing

/// A `Codable` encoder keeps an object's short keyed entries pending and moves them to the output
/// when it is next used: entries around nested containers, long entries and super encoders must
/// land in order, and an encode that throws midway must leave nothing behind for the next one.
@Suite("Pending keyed entries")
struct PendingEntryTests {
    /// Short entries, then a nested object and an array, then a long entry, then more short
    /// entries, then a super encoder: every way of writing that is not a short entry.
    struct Mixed: Codable, Equatable {
        var a: String
        var n: Int
        var inner: [String: Int]
        var list: [Int]
        var long: String
        var tags: [String]
        var b: String
        var parent: String

        enum CodingKeys: String, CodingKey { case a, n, inner, list, long, tags, b, parent }

        init(_ text: String) {
            a = text
            n = text.utf8.count
            inner = ["x": 1, "y": -2]
            list = [1, 2, 3]
            long = String(repeating: text, count: 40)
            tags = [text, "t"]
            b = "b" + text
            parent = text + "!"
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(a, forKey: .a)
            try c.encode(n, forKey: .n)
            var nested = c.nestedContainer(keyedBy: StringKey.self, forKey: .inner)
            for (k, v) in inner.sorted(by: { $0.key < $1.key }) { try nested.encode(v, forKey: StringKey(k)) }
            var u = c.nestedUnkeyedContainer(forKey: .list)
            for v in list { try u.encode(v) }
            try c.encode(long, forKey: .long)
            try c.encode(tags, forKey: .tags)
            try c.encode(b, forKey: .b)
            var s = c.superEncoder(forKey: .parent).singleValueContainer()
            try s.encode(parent)
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            a = try c.decode(String.self, forKey: .a)
            n = try c.decode(Int.self, forKey: .n)
            inner = try c.decode([String: Int].self, forKey: .inner)
            list = try c.decode([Int].self, forKey: .list)
            long = try c.decode(String.self, forKey: .long)
            tags = try c.decode([String].self, forKey: .tags)
            b = try c.decode(String.self, forKey: .b)
            parent = try String(from: c.superDecoder(forKey: .parent))
        }
    }

    struct StringKey: CodingKey {
        var stringValue: String
        init(_ s: String) { stringValue = s }
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    /// Writes two short entries, then throws.
    struct Failing: Encodable {
        struct Refused: Error {}
        enum CodingKeys: String, CodingKey { case first, second }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode("one", forKey: .first)
            try c.encode(2, forKey: .second)
            throw Refused()
        }
    }

    @Test func entriesAroundOtherWritesLandInOrder() throws {
        for text in ["", "é", "short", String(repeating: "z", count: 200)] {
            try expectRoundTrip(Mixed(text))
            try expectRoundTrip(["k": Mixed(text), "l": Mixed(text + "2")])
            try expectRoundTrip([Mixed(text), Mixed("x")])
        }
    }

    @Test func manyEntriesOverflowThePendingMemory() throws {
        let wide = Dictionary(uniqueKeysWithValues: (0..<300).map { ("key\($0)", String(repeating: "v", count: $0 % 90)) })
        try expectRoundTrip(wide)
    }

    @Test func aFailedEncodeLeavesNothingPending() throws {
        let encoder = BinaryEncoder()
        var buffer: [UInt8] = [1, 2, 3]
        #expect(throws: Failing.Refused.self) { try encoder.encode(Failing(), into: &buffer) }
        #expect(buffer == [1, 2, 3])
        let value = Mixed("after")
        try encoder.encode(value, into: &buffer)
        #expect(Array(buffer[3...]) == (try BinaryEncoder().encode(value)))
        #expect(try BinaryDecoder().decode(Mixed.self, from: Array(buffer[3...])) == value)
    }
}

@testable import DepotCore
@testable import DepotEngine
import Foundation
import Testing

/// The one-append writers of short entries (`BinaryWriter.keyedString`, `keyedSigned`,
/// `stringArray`, `keyedStringArray`) must write exactly the bytes of the part-by-part writers they stand in for, on
/// both sides of every size limit (one-byte varints, the stack room, the one-byte container header).
@Suite("Short entries written in one append")
struct ShortEntryTests {
    static let strings: [String] = [
        "", "a", "id", "age", "name", "email", "tagsets", "8 bytes!", "0123456789abcdef", "0123456789abcdefg", "Zoë Ünïcode 🚀",
        String(repeating: "x", count: 63), String(repeating: "x", count: 64),
        String(repeating: "y", count: 127), String(repeating: "y", count: 128),
        String(repeating: "z", count: 200), String(repeating: "z", count: 236), String(repeating: "z", count: 237),
        String(repeating: "long ", count: 100),
        String(repeating: "é", count: 70),
    ]

    @Test func aKeyedStringIsTheKeyThenTheString() {
        for key in Self.strings {
            for value in Self.strings {
                var expected: [UInt8] = [9]
                BinaryWriter.stringKey(key, &expected)
                BinaryWriter.string(value, tag: BinaryTag.string, &expected)
                var written: [UInt8] = [9]
                BinaryWriter.keyedString(key, value, tag: BinaryTag.string, &written)
                #expect(written == expected, "key of \(key.utf8.count) bytes, value of \(value.utf8.count)")
            }
        }
    }

    @Test func aKeyedIntegerIsTheKeyThenTheInteger() {
        let values: [Int64] = [0, 1, -1, 63, -64, 64, 127, 128, 300, -300, .max, .min]
        for key in Self.strings {
            for value in values {
                var expected: [UInt8] = []
                BinaryWriter.stringKey(key, &expected)
                BinaryWriter.signed(value, &expected)
                var written: [UInt8] = []
                BinaryWriter.keyedSigned(key, value, &written)
                #expect(written == expected, "key of \(key.utf8.count) bytes, value \(value)")
            }
        }
    }

    @Test func aStringArrayIsItsContainer() {
        let arrays: [[String]] = [
            [], ["a"], ["math", "engines"], Self.strings, Array(repeating: "t", count: 42), Array(repeating: "t", count: 43),
            Array(repeating: "t", count: 127), Array(repeating: "t", count: 128), Array(repeating: "t", count: 200),
            [String(repeating: "q", count: 124)], [String(repeating: "q", count: 125)], [String(repeating: "q", count: 126)],
        ]
        for strings in arrays {
            var expected: [UInt8] = [7]
            let start = BinaryWriter.beginContainer(BinaryTag.array, &expected)
            for s in strings { BinaryWriter.string(s, tag: BinaryTag.string, &expected) }
            BinaryWriter.endContainer(start: start, count: strings.count, &expected)
            var written: [UInt8] = [7]
            BinaryWriter.stringArray(strings, &written)
            #expect(written == expected, "\(strings.count) strings, \(strings.reduce(0) { $0 + $1.utf8.count }) bytes")
        }
    }

    @Test func aKeyedStringArrayIsTheKeyThenTheArray() {
        let arrays: [[String]] = [
            [], ["a"], ["math", "engines"], Self.strings, Array(repeating: "t", count: 42), Array(repeating: "t", count: 43),
            [String(repeating: "q", count: 124)], [String(repeating: "q", count: 125)], [String(repeating: "q", count: 126)],
        ]
        for key in Self.strings {
            for strings in arrays {
                var expected: [UInt8] = [5]
                BinaryWriter.stringKey(key, &expected)
                BinaryWriter.stringArray(strings, &expected)
                var written: [UInt8] = [5]
                BinaryWriter.keyedStringArray(key, strings, &written)
                #expect(written == expected, "key of \(key.utf8.count) bytes, \(strings.count) strings")
            }
        }
    }

    struct Entry: Codable, Equatable {
        var id: String
        var name: String
        var count: Int
        var tags: [String]
    }

    /// Integer keys (here a dictionary's) take the part-by-part path; string keys the short one.
    @Test func codableValuesRoundTripThroughBothPaths() throws {
        for text in Self.strings {
            let entry = Entry(id: text, name: String(text.reversed()), count: text.utf8.count - 100, tags: [text, "b", text])
            try expectRoundTrip(entry)
            try expectRoundTrip([7: text, -3: "short"])
            try expectRoundTrip(["k": entry])
        }
    }
}

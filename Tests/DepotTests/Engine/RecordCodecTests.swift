import Foundation
import Testing
@testable import Depot
@testable import DepotCore

/// A nested value written through the generic `Codable` path of the record writer.
private struct Inner: Codable, Equatable {
    var x: Int
    var words: [String]
}

/// A field that fails to encode (to check that a failed generated encode leaves no bytes).
private struct Refusing: Codable, Equatable {
    var refuse: Bool
    func encode(to encoder: any Encoder) throws {
        if refuse { throw EncodingError.invalidValue(refuse, .init(codingPath: encoder.codingPath, debugDescription: "refused")) }
        var c = encoder.singleValueContainer()
        try c.encode(refuse)
    }
    init(refuse: Bool) { self.refuse = refuse }
    init(from decoder: any Decoder) throws { refuse = try decoder.singleValueContainer().decode(Bool.self) }
}

/// Every field kind of the record writer and reader, with a hand-written generated codec over a
/// ``BinaryFieldTable`` (what `@BinaryCodable` emits): short keys, keys longer than a word,
/// a generic field between scalar ones.
private struct WideRecord: Codable, BinaryCodableDocument, Equatable {
    var id: String
    var a_rather_long_key_name: String
    var n: Int
    var tags: [String]
    var inner: Inner
    var flag: Bool
    var when: Date
    var uuid: UUID
    var ratio: Double
    var small: Float
    var count: UInt64
    var note: String?
    var guardField: Refusing

    static let table = BinaryFieldTable(["id", "a_rather_long_key_name", "n", "tags", "inner", "flag", "when",
                                         "uuid", "ratio", "small", "count", "note", "guardField"])

    func encodeBinary(into writer: inout BinaryRecordWriter) throws {
        try writer.encode(id, forKey: "id")
        try writer.encode(a_rather_long_key_name, forKey: "a_rather_long_key_name")
        try writer.encode(n, forKey: "n")
        try writer.encode(tags, forKey: "tags")
        try writer.encode(inner, forKey: "inner")
        try writer.encode(flag, forKey: "flag")
        try writer.encode(when, forKey: "when")
        try writer.encode(uuid, forKey: "uuid")
        try writer.encode(ratio, forKey: "ratio")
        try writer.encode(small, forKey: "small")
        try writer.encode(count, forKey: "count")
        try writer.encodeIfPresent(note, forKey: "note")
        try writer.encode(guardField, forKey: "guardField")
    }

    init(binaryRecord reader: inout BinaryRecordReader) throws {
        var id: String?, long: String?, n: Int?, tags: [String]?, inner: Inner?, flag: Bool?, when: Date?
        var uuid: UUID?, ratio: Double?, small: Float?, count: UInt64?, note: String?, guardField: Refusing?
        while let field = try reader.nextField(in: Self.table) {
            switch field {
            case 0: id = try reader.decode(String.self)
            case 1: long = try reader.decode(String.self)
            case 2: n = try reader.decode(Int.self)
            case 3: tags = try reader.decode([String].self)
            case 4: inner = try reader.decode(Inner.self)
            case 5: flag = try reader.decode(Bool.self)
            case 6: when = try reader.decode(Date.self)
            case 7: uuid = try reader.decode(UUID.self)
            case 8: ratio = try reader.decode(Double.self)
            case 9: small = try reader.decode(Float.self)
            case 10: count = try reader.decode(UInt64.self)
            case 11: note = try reader.decodeIfPresent(String.self)
            case 12: guardField = try reader.decode(Refusing.self)
            default: break
            }
        }
        guard let id, let long, let n, let tags, let inner, let flag, let when, let uuid, let ratio, let small,
              let count, let guardField else { throw reader.missingField("id") }
        self.init(id: id, a_rather_long_key_name: long, n: n, tags: tags, inner: inner, flag: flag, when: when,
                  uuid: uuid, ratio: ratio, small: small, count: count, note: note, guardField: guardField)
    }

    init(id: String, a_rather_long_key_name: String, n: Int, tags: [String], inner: Inner, flag: Bool, when: Date,
         uuid: UUID, ratio: Double, small: Float, count: UInt64, note: String?, guardField: Refusing) {
        self.id = id
        self.a_rather_long_key_name = a_rather_long_key_name
        self.n = n
        self.tags = tags
        self.inner = inner
        self.flag = flag
        self.when = when
        self.uuid = uuid
        self.ratio = ratio
        self.small = small
        self.count = count
        self.note = note
        self.guardField = guardField
    }

    static func sample(_ i: Int, size: Int) -> WideRecord {
        let long = String(repeating: "é", count: size)
        let tags: [String] = (0..<size / 8).map { "tag\($0)" }
        let words: [String] = (0..<size / 16).map { "w\($0)" }
        let when = Date(timeIntervalSinceReferenceDate: Double(i) * 3.5)
        let note: String? = i % 3 == 0 ? nil : "note \(i)"
        return WideRecord(id: "w\(i)", a_rather_long_key_name: long, n: i * 1_000_003 - 500, tags: tags,
                          inner: Inner(x: -i, words: words), flag: i % 2 == 0, when: when, uuid: UUID(),
                          ratio: Double(i) / 7, small: Float(i) / 3, count: UInt64.max - UInt64(i),
                          note: note, guardField: Refusing(refuse: false))
    }
}

/// The same keys in another declaration order, with an extra field: synthesized `Codable` only.
private struct ReorderedWideRecord: Codable {
    var guardField: Refusing
    var extra: [Int]
    var count: UInt64
    var small: Float
    var ratio: Double
    var uuid: UUID
    var when: Date
    var flag: Bool
    var inner: Inner
    var tags: [String]
    var n: Int
    var a_rather_long_key_name: String
    var id: String
    var note: String?
}

/// Strings only, no generic field: the whole record stays in the writer's scratch memory
/// unless a string is long enough to go straight to the output.
private struct Strings: Codable, BinaryCodableDocument, Equatable {
    var id: String
    var text: String
    var tags: [String]
    static let table = BinaryFieldTable(["id", "text", "tags"])

    func encodeBinary(into writer: inout BinaryRecordWriter) throws {
        try writer.encode(id, forKey: "id")
        try writer.encode(text, forKey: "text")
        try writer.encode(tags, forKey: "tags")
    }

    init(id: String, text: String, tags: [String]) {
        self.id = id
        self.text = text
        self.tags = tags
    }

    init(binaryRecord reader: inout BinaryRecordReader) throws {
        var id: String?, text: String?, tags: [String]?
        while let field = try reader.nextField(in: Self.table) {
            switch field {
            case 0: id = try reader.decode(String.self)
            case 1: text = try reader.decode(String.self)
            case 2: tags = try reader.decode([String].self)
            default: break
            }
        }
        guard let id, let text, let tags else { throw reader.missingField("id") }
        self.init(id: id, text: text, tags: tags)
    }
}

/// A string, an array of strings and an integer stored last (the reader's inlined fast paths,
/// and their bounds at the end of the record).
private struct Mixed: Codable, BinaryCodableDocument, Equatable {
    var text: String
    var tags: [String]
    var n: Int
    static let table = BinaryFieldTable(["text", "tags", "n"])

    func encodeBinary(into writer: inout BinaryRecordWriter) throws {
        try writer.encode(text, forKey: "text")
        try writer.encode(tags, forKey: "tags")
        try writer.encode(n, forKey: "n")
    }

    init(text: String, tags: [String], n: Int) {
        self.text = text
        self.tags = tags
        self.n = n
    }

    init(binaryRecord reader: inout BinaryRecordReader) throws {
        var text: String?, tags: [String]?, n: Int?
        while let field = try reader.nextField(in: Self.table) {
            switch field {
            case 0: text = try reader.decode(String.self)
            case 1: tags = try reader.decode([String].self)
            case 2: n = try reader.decode(Int.self)
            default: break
            }
        }
        guard let text, let tags, let n else { throw reader.missingField("text") }
        self.init(text: text, tags: tags, n: n)
    }
}

/// A `[String]` after a generic field (so after a flush), and a key made as a Unicode scalar literal.
private struct AfterGeneric: Codable, BinaryCodableDocument, Equatable {
    var inner: Inner
    var tags: [String]
    var x: Int
    static let keys: [StaticString] = ["inner", "tags", "x"]

    func encodeBinary(into writer: inout BinaryRecordWriter) throws {
        try writer.encode(inner, forKey: "inner")
        try writer.encode(tags, forKey: "tags")
        try writer.encode(x, forKey: StaticString(unicodeScalarLiteral: "x"))
    }

    init(inner: Inner, tags: [String], x: Int) {
        self.inner = inner
        self.tags = tags
        self.x = x
    }

    init(binaryRecord reader: inout BinaryRecordReader) throws {
        var inner: Inner?, tags: [String]?, x: Int?
        while let field = try reader.nextField(in: Self.keys) {
            switch field {
            case 0: inner = try reader.decode(Inner.self)
            case 1: tags = try reader.decode([String].self)
            case 2: x = try reader.decode(Int.self)
            default: break
            }
        }
        guard let inner, let tags, let x else { throw reader.missingField("inner") }
        self.init(inner: inner, tags: tags, x: x)
    }
}

@Suite("Generated record codec")
struct RecordCodecTests {
    /// Small and large records (long strings, arrays past 127 elements and 127 bytes, growth of the
    /// writer's scratch memory mid-record), several in a row on one encoder: the generated bytes
    /// are the `Codable` bytes, and read back equal.
    @Test(arguments: [0, 40, 300, 5_000])
    func generatedBytesMatchCodable(size: Int) throws {
        let encoder = BinaryEncoder()
        let decoder = BinaryDecoder()
        var buffer: [UInt8] = [7, 7] // an existing prefix is kept
        for i in 0..<4 {
            let value = WideRecord.sample(i, size: size + i)
            let codable = try BinaryEncoder().encode(value)
            buffer.removeSubrange(2...)
            try encoder.encodeGenerated(value, into: &buffer)
            #expect(Array(buffer[..<2]) == [7, 7])
            #expect(Array(buffer[2...]) == codable)
            #expect(try decoder.decodeGenerated(WideRecord.self, from: codable) == value)
            #expect(try decoder.decode(WideRecord.self, from: Array(buffer[2...])) == value)
        }
    }

    /// A record stored in another field order, with a field the type does not know: found by the
    /// table's general path, the unknown field skipped.
    @Test func readsFieldsInAnyOrder() throws {
        let value = WideRecord.sample(3, size: 20)
        let reordered = ReorderedWideRecord(guardField: value.guardField, extra: [1, 2, 3], count: value.count, small: value.small,
                                      ratio: value.ratio, uuid: value.uuid, when: value.when, flag: value.flag,
                                      inner: value.inner, tags: value.tags, n: value.n,
                                      a_rather_long_key_name: value.a_rather_long_key_name, id: value.id, note: value.note)
        let bytes = try BinaryEncoder().encode(reordered)
        #expect(try BinaryDecoder().decodeGenerated(WideRecord.self, from: bytes) == value)
    }

    /// A failed generated encode restores the buffer, and the encoder's next record is whole.
    @Test func failedEncodeLeavesNoBytes() throws {
        let encoder = BinaryEncoder()
        var buffer: [UInt8] = [1, 2, 3]
        var failing = WideRecord.sample(1, size: 400)
        failing.guardField = Refusing(refuse: true)
        #expect(throws: EncodingError.self) { try encoder.encodeGenerated(failing, into: &buffer) }
        #expect(buffer == [1, 2, 3])
        let good = WideRecord.sample(2, size: 10)
        try encoder.encodeGenerated(good, into: &buffer)
        #expect(Array(buffer[3...]) == (try BinaryEncoder().encode(good)))
    }

    /// Every truncation of a record throws, and every one-byte change either decodes (to a value
    /// written back as `Codable` writes it) or throws: the table's fast path reads nothing outside the record.
    @Test func hostileBytesThrowOrDecode() throws {
        let bytes = try BinaryEncoder().encode(WideRecord.sample(5, size: 12))
        let decoder = BinaryDecoder()
        for n in 0..<bytes.count {
            #expect(throws: (any Error).self) { try decoder.decodeGenerated(WideRecord.self, from: Array(bytes[..<n])) }
        }
        // What a changed record still decodes to is written back byte for byte as `Codable` writes it;
        // changed headers, tags and lengths are refused.
        var refused = 0, rewritten = 0
        for i in bytes.indices {
            for delta: UInt8 in [1, 0x40, 0x80] {
                var changed = bytes
                changed[i] &+= delta
                guard let value = try? decoder.decodeGenerated(WideRecord.self, from: changed) else {
                    refused += 1
                    continue
                }
                // (`guardField` may now refuse to encode: then both paths refuse, with the same error.)
                switch (Result { try BinaryEncoder().encodeGenerated(value) }, Result { try BinaryEncoder().encode(value) }) {
                case (.success(let generated), .success(let codable)):
                    #expect(generated == codable, "byte \(i) + \(delta)")
                    rewritten += 1
                case (.failure(let generated), .failure(let codable)):
                    #expect("\(generated)" == "\(codable)", "byte \(i) + \(delta): both refuse, for the same reason")
                case (.success, .failure(let error)):
                    Issue.record("byte \(i) + \(delta): only Codable refuses: \(error)")
                case (.failure(let error), .success):
                    Issue.record("byte \(i) + \(delta): only the generated encoder refuses: \(error)")
                }
            }
        }
        #expect(refused > bytes.count)
        #expect(rewritten > 0, "some changed records still decode, and are compared")
    }

    /// Records that never flush before the end (header patched in scratch memory), records past
    /// 127 bytes, arrays past 127 elements, and strings long enough to go straight to the output
    /// (inside an array too): the `Codable` bytes, read back equal, on one reused encoder.
    @Test(arguments: [(0, 0, 0), (10, 3, 5), (120, 0, 0), (300, 200, 12), (5_000, 3, 5_000), (20, 150, 4_100)])
    func scratchOnlyRecordsMatchCodable(text: Int, tagCount: Int, tagLength: Int) throws {
        let encoder = BinaryEncoder()
        for round in 0..<2 {
            let value = Strings(id: "s\(round)", text: String(repeating: "t", count: text),
                                tags: (0..<tagCount).map { String(repeating: "g", count: tagLength + $0 % 3) })
            let codable = try BinaryEncoder().encode(value)
            var buffer: [UInt8] = []
            try encoder.encodeGenerated(value, into: &buffer)
            #expect(buffer == codable)
            #expect(try BinaryDecoder().decodeGenerated(Strings.self, from: buffer) == value)
        }
    }

    /// An array written after a generic field (its header no longer where the record began), with
    /// a long header and a long element; a key made as a Unicode scalar literal is written as
    /// any other key.
    @Test(arguments: [0, 3, 200])
    func arrayAfterAGenericFieldAndOneScalarKey(tagCount: Int) throws {
        var tags = (0..<tagCount).map { "tag\($0)" }
        if tagCount > 100 { tags[7] = String(repeating: "L", count: 5_000) }
        let value = AfterGeneric(inner: Inner(x: 1, words: ["a"]), tags: tags, x: -3)
        let codable = try BinaryEncoder().encode(value)
        #expect(try BinaryEncoder().encodeGenerated(value) == codable)
        #expect(try BinaryDecoder().decodeGenerated(AfterGeneric.self, from: codable) == value)
    }

    /// Invalid UTF-8 in the last byte of strings of every short length (the ASCII check's
    /// overlapping word loads) is refused, never repaired.
    @Test func invalidUTF8AtEveryShortLengthIsRefused() throws {
        for length in 1...17 {
            let id = String(repeating: "a", count: length)
            var bytes = try BinaryEncoder().encode(Strings(id: id, text: "", tags: []))
            guard let at = (0..<bytes.count - length).first(where: { Array(bytes[$0..<$0 + length]) == Array(id.utf8) }) else {
                Issue.record("the id's bytes were not found")
                continue
            }
            bytes[at + length - 1] = 0xFF
            #expect(throws: BinaryCodecError.self) { try BinaryDecoder().decodeGenerated(Strings.self, from: bytes) }
            #expect(throws: BinaryCodecError.self) { try BinaryDecoder().decode(Strings.self, from: bytes) }
        }
    }

    /// The reader's fast paths (short ASCII strings, arrays of them, one- and two-byte integers)
    /// and the general path they fall back to agree with `Codable` at every boundary: string
    /// lengths around 8 and 128 bytes, non-ASCII text, arrays around 128 elements and bytes,
    /// integers around one, two and three varint bytes; every truncation throws, and what the
    /// generated reader accepts of a changed byte, `Codable` accepts with the same value (the
    /// generated reader is the stricter: it refuses an object whose entry count or length
    /// disagrees with its entries, which the keyed containers let pass).
    @Test func inlinedFastPathsAgreeWithCodable() throws {
        let lengths = [0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 126, 127, 128, 300]
        let numbers = [0, 1, -1, 63, -64, 64, -65, 8_191, -8_192, 8_192, -8_193, Int.max, Int.min]
        let arrays: [[String]] = [[], ["a"], ["", "bb"], ["é", "x"], (0..<40).map { "t\($0)" }, (0..<130).map { _ in "x" },
                                  [String(repeating: "y", count: 130)], ["ascii", "naïve"]]
        var values: [Mixed] = []
        for (i, length) in lengths.enumerated() {
            values.append(Mixed(text: String(repeating: "a", count: length), tags: arrays[i % arrays.count], n: numbers[i % numbers.count]))
            values.append(Mixed(text: String(repeating: "ü", count: length / 2), tags: arrays[(i + 3) % arrays.count],
                                n: numbers[(i + 5) % numbers.count]))
        }
        for (i, n) in numbers.enumerated() { values.append(Mixed(text: "n", tags: arrays[i % arrays.count], n: n)) }
        let decoder = BinaryDecoder()
        for value in values {
            let bytes = try BinaryEncoder().encode(value)
            #expect(try decoder.decodeGenerated(Mixed.self, from: bytes) == value)
            #expect(try BinaryEncoder().encodeGenerated(value) == bytes)
        }
        let bytes = try BinaryEncoder().encode(Mixed(text: "hello", tags: ["ab", "cde"], n: 200))
        for n in 0..<bytes.count {
            #expect(throws: (any Error).self) { try decoder.decodeGenerated(Mixed.self, from: Array(bytes[..<n])) }
        }
        for i in bytes.indices {
            for delta: UInt8 in [1, 0x40, 0x80] {
                var changed = bytes
                changed[i] &+= delta
                let generated = try? decoder.decodeGenerated(Mixed.self, from: changed)
                let codable = try? decoder.decode(Mixed.self, from: changed)
                if generated != nil { #expect(generated == codable, "byte \(i) + \(delta)") }
            }
        }
    }
}

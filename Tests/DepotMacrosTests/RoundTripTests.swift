#if Macros
import Depot
import Foundation
import Testing

@Suite("Generated codecs: same bytes as Codable")
struct RoundTripTests {
    let encoder = BinaryEncoder()
    let decoder = BinaryDecoder()

    static let people = [
        Person(id: "p1", name: "Ada", age: 36, email: "ada@example.com", tags: ["math", "engines"]),
        Person(id: "p2", name: "Zoë Ünïcode 🚀", age: -1, email: nil, tags: []),
        Person(id: "", name: String(repeating: "long ", count: 100), age: Int.max, email: "", tags: Array(repeating: "t", count: 200)),
    ]

    @Test(arguments: people)
    func personBytesMatchCodable(_ person: Person) throws {
        let generated = try encoder.encodeGenerated(person)
        let codable = try encoder.encode(person)
        #expect(generated == codable)
        #expect(try decoder.decodeGenerated(Person.self, from: codable) == person)
        #expect(try decoder.decode(Person.self, from: generated) == person)
        let plain = try decoder.decode(PlainPerson.self, from: generated)
        #expect(try encoder.encode(plain) == generated)
    }

    static func everything(optionals: Bool) -> Everything {
        Everything(
            id: UUID(), flag: true, small: -128, medium: optionals ? Int32.min : nil, big: Int64.min, unsigned: UInt.max,
            byte: optionals ? 255 : nil, ratio: 1.5, score: optionals ? -0.25 : nil,
            when: Date(timeIntervalSinceReferenceDate: 12_345.678), other: optionals ? UUID() : nil,
            address: Address(street: "Main", zip: optionals ? 12345 : nil),
            previous: [Address(street: "Old", zip: 1), Address(street: "Older", zip: nil)],
            counts: ["a": 1], blob: Data([0, 1, 2, 255]), site: optionals ? URL(string: "https://example.com/x?y=1") : nil,
            nested: [[1, 2], [], [3]], maybe: optionals ? "here" : nil)
    }

    @Test(arguments: [true, false])
    func everythingMatchesCodable(optionals: Bool) throws {
        let value = Self.everything(optionals: optionals)
        let generated = try encoder.encodeGenerated(value)
        #expect(generated == (try encoder.encode(value)))
        #expect(try decoder.decodeGenerated(Everything.self, from: generated) == value)
        #expect(try decoder.decode(Everything.self, from: generated) == value)
    }

    @Test func renamedKeysMatchCodable() throws {
        let value = Renamed(id: "r", fullName: "Full Name", nickName: "nick", cached: 9)
        let generated = try encoder.encodeGenerated(value)
        #expect(generated == (try encoder.encode(value)))
        let stored = try DocumentValue(binary: generated)
        #expect(stored["full_name"] == .string("Full Name"))
        #expect(stored["nick"] == .string("nick"))
        #expect(stored["cached"] == nil)
        var expected = value
        expected.cached = 0
        #expect(try decoder.decodeGenerated(Renamed.self, from: generated) == expected)
    }

    @Test func genericType() throws {
        let box = Box(id: "b", content: [Address(street: "S", zip: 1)], count: 3)
        let generated = try encoder.encodeGenerated(box)
        #expect(generated == (try encoder.encode(box)))
        #expect(try decoder.decodeGenerated(Box<[Address]>.self, from: generated) == box)
    }

    @Test func anyFieldOrderUnknownFieldsAndExplicitNull() throws {
        let shuffled = DocumentValue.object([
            .init("extra", .array([.int(1), .object([.init("name", .int(5))])])),
            .init("tags", .array([.string("x")])),
            .init("email", .null),
            .init("age", .uint(7)),
            .init("name", .string("N")),
            .init("id", .string("i")),
        ])
        let person = try decoder.decodeGenerated(Person.self, from: shuffled.binary())
        #expect(person == Person(id: "i", name: "N", age: 7, email: nil, tags: ["x"]))
        #expect(try decoder.decode(Person.self, from: shuffled.binary()) == person)
    }

    /// Fields partly in declaration order: the in-place reads take what is in place and the
    /// loop the rest, whichever field leaves the order.
    @Test func partlyOrderedFields() throws {
        let fields: [(String, DocumentValue)] = [("id", .string("i")), ("name", .string("N")), ("age", .int(7)),
                                                 ("email", .string("e@x")), ("tags", .array([.string("t")]))]
        let expected = Person(id: "i", name: "N", age: 7, email: "e@x", tags: ["t"])
        for moved in fields.indices {
            for place in fields.indices where place != moved {
                var order = fields
                order.insert(order.remove(at: moved), at: place)
                let bytes = DocumentValue.object(order.map { .init($0.0, $0.1) }).binary()
                #expect(try decoder.decodeGenerated(Person.self, from: bytes) == expected, "field \(moved) moved to \(place)")
            }
        }
    }

    @Test func missingAndMistypedFieldsThrowLikeCodable() throws {
        let missing = DocumentValue.object([.init("id", .string("i")), .init("age", .int(1))])
        #expect {
            try decoder.decodeGenerated(Person.self, from: missing.binary())
        } throws: { error in
            guard case DecodingError.keyNotFound(let key, _) = error else { return false }
            return key.stringValue == "name"
        }
        let mistyped = DocumentValue.object([
            .init("id", .string("i")), .init("name", .int(3)),
            .init("age", .int(1)), .init("tags", .array([])),
        ])
        #expect {
            try decoder.decodeGenerated(Person.self, from: mistyped.binary())
        } throws: { error in
            guard case DecodingError.typeMismatch(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["name"]
        }
        let tooBig = DocumentValue.object([.init("small", .int(300))])
        #expect(throws: DecodingError.self) { try decoder.decodeGenerated(Everything.self, from: tooBig.binary()) }
        #expect(throws: (any Error).self) { try decoder.decodeGenerated(Person.self, from: DocumentValue.array([]).binary()) }
    }

    /// Every truncation and every single-byte corruption of a valid record throws or decodes; none traps.
    @Test func hostileBytesThrowNeverTrap() throws {
        let bytes = try encoder.encodeGenerated(Self.everything(optionals: true))
        for length in 0..<bytes.count {
            #expect(throws: (any Error).self) { try decoder.decodeGenerated(Everything.self, from: Array(bytes[..<length])) }
        }
        var decoded = 0
        for index in bytes.indices {
            for value: UInt8 in [0x00, 0x07, 0x0F, 0x7F, 0x80, 0xFF] {
                var corrupt = bytes
                corrupt[index] = value
                if (try? decoder.decodeGenerated(Everything.self, from: corrupt)) != nil { decoded += 1 }
            }
        }
        #expect(decoded < bytes.count * 6)
        let invalidUTF8: [UInt8] = [1, 0x0A, 1, 8, 8, 0x6E, 0x61, 0x6D, 0x65, 0x07, 1, 0xFF]
        #expect(throws: BinaryCodecError.self) {
            _ = try DocumentValue(binary: invalidUTF8)
        }
        #expect(throws: BinaryCodecError.self) { try decoder.decodeGenerated(Person.self, from: invalidUTF8) }
        let person = try encoder.encodeGenerated(Self.people[0])
        #expect(throws: BinaryCodecError.self) { try decoder.decodeGenerated(Person.self, from: person + [0]) }
    }
}
#endif

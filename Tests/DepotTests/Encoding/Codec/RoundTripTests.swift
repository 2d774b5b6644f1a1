@testable import Depot
@testable import DepotCore
import Foundation
import Testing
import DepotTestSupport

struct AllScalars: Codable, Equatable {
    var b: Bool = true
    var i: Int = -42
    var i8: Int8 = .min
    var i16: Int16 = .max
    var i32: Int32 = -123_456
    var i64: Int64 = .min
    var u: UInt = .max
    var u8: UInt8 = 255
    var u16: UInt16 = 65535
    var u32: UInt32 = .max
    var u64: UInt64 = .max
    var f: Float = 3.25
    var d: Double = -0.1
    var s: String = "héllo 👩‍👩‍👧 e\u{301} 日本"
    var empty: String = ""
    var date = Date(timeIntervalSinceReferenceDate: 123_456.789)
    var data = Data([0, 1, 2, 255])
    var uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    var url = URL(string: "https://example.com/a/b?c=d#e")!
    var decimal = Decimal(string: "12345678901234567890.123456789")!
    var bytes: [UInt8] = [9, 8, 7]
    var doubles: [Double] = [1.5, -2]
    var ints: [Int] = [1, -2, 3]
}

struct Optionals: Codable, Equatable {
    var a: Int?
    var b: String?
    var c: [Int?]
    var d: CodecAddress?
    var e: [String?]?
}

indirect enum Shape: Codable, Equatable {
    case circle(radius: Double)
    case rect(w: Double, h: Double)
    case labeled(String, Shape)
    case empty
}

class CodecAnimal: Codable {
    var name: String
    init(name: String) { self.name = name }
}

final class CodecDog: CodecAnimal, @unchecked Sendable {
    var breed: String
    init(name: String, breed: String) {
        self.breed = breed
        super.init(name: name)
    }
    enum CodingKeys: String, CodingKey { case breed, base }
    required init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        breed = try c.decode(String.self, forKey: .breed)
        try super.init(from: c.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(breed, forKey: .breed)
        try super.encode(to: c.superEncoder())
    }
}

final class Cat: CodecAnimal, @unchecked Sendable {
    var lives: Int
    init(name: String, lives: Int) {
        self.lives = lives
        super.init(name: name)
    }
    enum CodingKeys: String, CodingKey { case lives, base }
    required init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        lives = try c.decode(Int.self, forKey: .lives)
        try super.init(from: c.superDecoder(forKey: .base))
    }
    override func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(lives, forKey: .lives)
        try super.encode(to: c.superEncoder(forKey: .base))
    }
}

/// Hand-written coding using nested containers of every kind.
struct Manual: Codable, Equatable {
    var x: Int
    var pairs: [[String]]
    var inner: [String: Double]
    enum Keys: String, CodingKey { case x, nested, list, tail }
    enum InnerKeys: String, CodingKey { case values, extra }

    init(x: Int, pairs: [[String]], inner: [String: Double]) {
        self.x = x
        self.pairs = pairs
        self.inner = inner
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(x, forKey: .x)
        var n = c.nestedContainer(keyedBy: InnerKeys.self, forKey: .nested)
        try n.encode(inner, forKey: .values)
        try n.encodeNil(forKey: .extra)
        var l = c.nestedUnkeyedContainer(forKey: .list)
        for p in pairs {
            var u = l.nestedUnkeyedContainer()
            for s in p { try u.encode(s) }
        }
        var k = l.nestedContainer(keyedBy: InnerKeys.self)
        try k.encode(true, forKey: .extra)
        try c.encode("end", forKey: .tail)
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        #expect(try c.decode(String.self, forKey: .tail) == "end")  // out of order lookup
        x = try c.decode(Int.self, forKey: .x)
        let n = try c.nestedContainer(keyedBy: InnerKeys.self, forKey: .nested)
        inner = try n.decode([String: Double].self, forKey: .values)
        #expect(try n.decodeNil(forKey: .extra))
        var l = try c.nestedUnkeyedContainer(forKey: .list)
        let total = l.count ?? 0
        var result: [[String]] = []
        while l.currentIndex < total - 1 {
            var u = try l.nestedUnkeyedContainer()
            var p: [String] = []
            while !u.isAtEnd { p.append(try u.decode(String.self)) }
            result.append(p)
        }
        let k = try l.nestedContainer(keyedBy: InnerKeys.self)
        #expect(try k.decode(Bool.self, forKey: .extra))
        #expect(l.isAtEnd)
        pairs = result
    }
}

struct SingleWrapper: Codable, Equatable {
    var value: Int
    init(_ v: Int) { value = v }
    init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(Int.self) }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(value)
    }
}

struct Tree: Codable, Equatable {
    var value: Int
    var children: [Tree]
}

struct Empty: Codable, Equatable {}

@Suite struct RoundTripTests {
    @Test func scalars() throws {
        try expectRoundTrip(AllScalars())
        try expectRoundTrip(true)
        try expectRoundTrip(Int.min)
        try expectRoundTrip(UInt64.max)
        try expectRoundTrip("")
        try expectRoundTrip("🇨🇭 a\u{0301}")
        try expectRoundTrip(Decimal(string: "-0.000001")!)
    }

    @Test func integerBoundaries() throws {
        for v in [0, 1, -1, 63, 64, -64, -65, 127, 128, 300, Int.max, Int.min] { try expectRoundTrip(v) }
        for v: Int8 in [.min, .max, 0] { try expectRoundTrip(v) }
        for v: UInt32 in [0, 1, .max] { try expectRoundTrip(v) }
    }

    @Test func floats() throws {
        for d in [0.0, -0.0, 1e300, -1e-300, .infinity, -.infinity, .pi, .leastNonzeroMagnitude] {
            try expectRoundTrip(d)
        }
        #expect(try roundTrip(Double.nan).isNaN)
        #expect(try roundTrip(Float.nan).isNaN)
        try expectRoundTrip(Float.infinity)
        try expectRoundTrip([Float.greatestFiniteMagnitude, -Float.infinity])
    }

    @Test func person() throws {
        try expectRoundTrip(Person(id: "1", name: "Ada", age: 36, email: "a@b.c", tags: ["x", "y"]))
        try expectRoundTrip(Person(id: "", name: "", age: 0, email: "", tags: []))
    }

    @Test func optionals() throws {
        try expectRoundTrip(Optionals(a: nil, b: nil, c: [], d: nil, e: nil))
        try expectRoundTrip(Optionals(a: 1, b: "b", c: [1, nil, 3], d: CodecAddress(street: "s", zip: 1), e: ["a", nil]))
        try expectRoundTrip([Int?.none, 5])
        try expectRoundTrip([String?]([nil, nil]))
        let o: Int?? = .some(nil)
        _ = try roundTrip(o)
    }

    @Test func enumsWithAssociatedValues() throws {
        try expectRoundTrip([Shape.circle(radius: 2), .rect(w: 1, h: 2), .labeled("l", .labeled("m", .empty)), .empty])
    }

    @Test func classesWithSuper() throws {
        let d = try roundTrip(CodecDog(name: "Rex", breed: "Collie"))
        #expect(d.name == "Rex" && d.breed == "Collie")
        let c = try roundTrip(Cat(name: "Tom", lives: 9))
        #expect(c.name == "Tom" && c.lives == 9)
        // Unkeyed super encoder.
        struct UnkeyedSuper: Codable, Equatable {
            var a: CodecAddress
            init(a: CodecAddress) { self.a = a }
            func encode(to encoder: any Encoder) throws {
                var u = encoder.unkeyedContainer()
                try u.encode(1)
                try a.encode(to: u.superEncoder())
                try u.encode(2)
            }
            init(from decoder: any Decoder) throws {
                var u = try decoder.unkeyedContainer()
                #expect(try u.decode(Int.self) == 1)
                a = try CodecAddress(from: u.superDecoder())
                #expect(try u.decode(Int.self) == 2)
            }
        }
        try expectRoundTrip(UnkeyedSuper(a: CodecAddress(street: "x", zip: 2)))
    }

    @Test func unusedSuperEncoderWritesEmptyObject() throws {
        struct S: Codable {
            enum K: CodingKey { case a }
            init() {}
            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: K.self)
                let d = try c.superDecoder()
                _ = try d.container(keyedBy: K.self)
                #expect(try c.decode(Int.self, forKey: .a) == 1)
            }
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: K.self)
                _ = c.superEncoder()
                try c.encode(1, forKey: .a)
            }
        }
        _ = try roundTrip(S())
    }

    @Test func nestedContainers() throws {
        try expectRoundTrip(Manual(x: 7, pairs: [["a", "b"], [], ["c"]], inner: ["k": 1.5]))
    }

    @Test func singleValueAndEmpty() throws {
        try expectRoundTrip(SingleWrapper(5))
        try expectRoundTrip([SingleWrapper(1), SingleWrapper(2)])
        try expectRoundTrip(Empty())
        try expectRoundTrip([Empty(), Empty()])
        try expectRoundTrip([String]())
        try expectRoundTrip([String: Int]())
        try expectRoundTrip([[Int]]([[], [1], []]))
    }

    @Test func dictionaries() throws {
        try expectRoundTrip(["a": 1, "b": 2, "": 3])
        try expectRoundTrip([1: "one", -5: "minus five", Int.max: "max"])
        try expectRoundTrip(["x": ["y": [1, 2]]])
        try expectRoundTrip([UUID(): Date(timeIntervalSince1970: 0)])  // non-String/Int keys: unkeyed pairs
        let v = try DocumentValue(binary: try BinaryEncoder().encode([3: "c"]))
        #expect(v["3"] == .string("c"))
    }

    @Test func deepNesting() throws {
        var t = Tree(value: 0, children: [])
        for i in 1..<100 { t = Tree(value: i, children: [t, Tree(value: -i, children: [])]) }
        try expectRoundTrip(t)
        var nested: DocumentValue = .int(1)
        for _ in 0..<300 { nested = .array([nested]) }
        #expect(try DocumentValue(binary: nested.binary()) == nested)
    }

    @Test func largeContainersBackpatchVarints() throws {
        let big = (0..<5000).map { "item-\($0)" }
        try expectRoundTrip(big)
        let dict = Dictionary(uniqueKeysWithValues: (0..<300).map { ("k\($0)", Array(repeating: $0, count: $0 % 7)) })
        try expectRoundTrip(dict)
        try expectRoundTrip(String(repeating: "é", count: 100_000))
    }

    @Test func largeArraysOfStructs() throws {
        let people = (0..<1000).map { Person(id: "\($0)", name: "n\($0)", age: $0, email: "", tags: ["t"]) }
        try expectRoundTrip(people)
    }

    @Test func encodeIntoAppends() throws {
        var buffer: [UInt8] = [0xAA]
        try BinaryEncoder().encode(42, into: &buffer)
        #expect(buffer.first == 0xAA)
        #expect(try BinaryDecoder().decode(Int.self, from: Array(buffer.dropFirst())) == 42)
        #expect(buffer[1] == 1)  // version byte
    }

    @Test func compactness() throws {
        #expect(try BinaryEncoder().encode(5).count == 3)
        #expect(try BinaryEncoder().encode(CodecAddress(street: "a", zip: 1)).count == 20)  // 1 + 3 + (7 + 3) + (4 + 2)
    }

    @Test func documentValueAsField() throws {
        struct Holder: Codable, Equatable {
            var meta: DocumentValue
            var extra: DocumentValue?
        }
        let meta: DocumentValue = ["a": 1, "b": [true, .null, "s"], "c": .uuid(UUID()), "d": .bytes([1, 2])]
        try expectRoundTrip(Holder(meta: meta, extra: nil))
        try expectRoundTrip(Holder(meta: .date(Date(timeIntervalSinceReferenceDate: 1)), extra: .uint(.max)))
        // Also through Foundation's JSON coders (generic Codable conformance).
        let json = try JSONEncoder().encode(Holder(meta: ["x": 1, "y": [1.5, "z"]], extra: .null))
        let back = try JSONDecoder().decode(Holder.self, from: json)
        #expect(back.meta["x"] == 1 && back.meta["y"] == [1.5, "z"])  // JSONDecoder does not keep key order
    }
}

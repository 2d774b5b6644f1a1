@testable import Depot
@testable import DepotCore
import Foundation
import Testing

/// A decoder reuses the keyed container it made at each depth for the next object of the same
/// key type: these shapes must still decode exactly (one `BinaryDecoder` for every record).
@Suite("Reused keyed containers")
struct ReusedContainerTests {
    class Base: Codable, Equatable {
        var name: String
        init(name: String) { self.name = name }
        static func == (a: Base, b: Base) -> Bool { a.name == b.name && type(of: a) == type(of: b) }
    }

    /// Flattened inheritance: both levels take a container of their own key type from one
    /// decoder, at one depth, and the subclass reads after its superclass's init returned.
    final class Derived: Base {
        var level: Int
        var tag = ""
        enum Keys: String, CodingKey { case level, tag }
        init(name: String, level: Int, tag: String) {
            self.level = level
            self.tag = tag
            super.init(name: name)
        }
        required init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Keys.self)
            level = try c.decode(Int.self, forKey: .level)
            try super.init(from: decoder)
            tag = try c.decode(String.self, forKey: .tag)
        }
        override func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(level, forKey: .level)
            try c.encode(tag, forKey: .tag)
            try super.encode(to: encoder)
        }
        static func == (a: Derived, b: Derived) -> Bool { a.name == b.name && a.level == b.level && a.tag == b.tag }
    }

    struct Point: Codable, Equatable { var x: Int; var y: Int }
    struct Label: Codable, Equatable { var text: String }
    /// Objects of two key types alternating at one depth, and an array of one type.
    struct Mixed: Codable, Equatable {
        var a: Point
        var b: Label
        var c: Point
        var points: [Point]
        var labels: [String: Label]
    }
    /// Depth changes between objects of one key type.
    struct Node: Codable, Equatable {
        var value: Int
        var children: [Node]
    }
    /// Two containers of one key type from one decoder.
    struct Twice: Codable, Equatable {
        var first: String
        var second: Int
        enum CodingKeys: String, CodingKey { case first, second }
        init(first: String, second: Int) { self.first = first; self.second = second }
        init(from decoder: any Decoder) throws {
            let one = try decoder.container(keyedBy: CodingKeys.self)
            let two = try decoder.container(keyedBy: CodingKeys.self)
            second = try two.decode(Int.self, forKey: .second)
            first = try one.decode(String.self, forKey: .first)
        }
    }

    static func tree(_ seed: Int, depth: Int) -> Node {
        Node(value: seed, children: depth == 0 ? [] : (0..<(seed % 3 + 1)).map { tree(seed * 7 + $0, depth: depth - 1) })
    }

    @Test func oneDecoderDecodesEveryShapeExactly() throws {
        let encoder = BinaryEncoder()
        let decoder = BinaryDecoder()
        for i in 0..<50 {
            let derived = Derived(name: "n\(i)", level: i, tag: String(repeating: "t", count: i % 20))
            let decodedDerived = try decoder.decode(Derived.self, from: try encoder.encode(derived))
            #expect(decodedDerived == derived)

            let mixed = Mixed(a: Point(x: i, y: -i), b: Label(text: "b\(i)"), c: Point(x: 2 * i, y: 3),
                              points: (0..<(i % 5)).map { Point(x: $0, y: i) },
                              labels: ["k\(i)": Label(text: "v\(i)"), "z": Label(text: "")])
            #expect(try decoder.decode(Mixed.self, from: try encoder.encode(mixed)) == mixed)

            let node = Self.tree(i, depth: i % 4)
            #expect(try decoder.decode(Node.self, from: try encoder.encode(node)) == node)

            let twice = Twice(first: "f\(i)", second: i * 11)
            #expect(try decoder.decode(Twice.self, from: try encoder.encode(twice)) == twice)
        }
    }

    @Test func aMismatchedRecordStillFailsAfterReuse() throws {
        let encoder = BinaryEncoder()
        let decoder = BinaryDecoder()
        #expect(try decoder.decode(Point.self, from: try encoder.encode(Point(x: 1, y: 2))) == Point(x: 1, y: 2))
        // The reused container for `Point` at depth 0 must not serve a record without its keys.
        #expect(throws: DecodingError.self) { _ = try decoder.decode(Point.self, from: try encoder.encode(Label(text: "x"))) }
        #expect(throws: DecodingError.self) { _ = try decoder.decode(Point.self, from: try encoder.encode([1, 2])) }
        #expect(try decoder.decode(Point.self, from: try encoder.encode(Point(x: 3, y: 4))) == Point(x: 3, y: 4))
    }
}

@testable import Depot
@testable import DepotCore
import Foundation
import Testing
import DepotTestSupport

struct FuzzDoc: Codable {
    var person: Person
    var contact: Contact?
    var counts: [String: Int]
    var ids: [Int: UUID]
    var small: [UInt8]
    var flags: [Bool?]
    var shape: Shape
    var when: Date
    var blob: Data
    var price: Decimal
    var link: URL
    var meta: DocumentValue
    var tiny: Int8
    var ratio: Float
}

@Suite struct FuzzTests {
    func seeds() throws -> [[UInt8]] {
        let doc = FuzzDoc(
            person: Person(id: "p-1", name: "Zoë", age: 41, email: "z@x.y", tags: ["a", "bb", "ccc"]),
            contact: Contact(name: "c", address: CodecAddress(street: "st", zip: 9), tags: [], scores: [1, 200, -3], nickname: "nick"),
            counts: ["one": 1, "two": 2], ids: [1: UUID(), 2: UUID()], small: [1, 2, 3],
            flags: [true, nil, false], shape: .labeled("q", .rect(w: 1, h: 2)),
            when: Date(timeIntervalSinceReferenceDate: 5), blob: Data([9, 9]), price: Decimal(string: "1.5")!,
            link: URL(string: "https://a.b")!, meta: ["k": [1, "v", .null, .reference(collection: "c", id: 1)]],
            tiny: -5, ratio: 0.5)
        let big = (0..<200).map { "element \($0)" }
        return [
            try BinaryEncoder().encode(doc),
            try BinaryEncoder().encode(big),
            try BinaryEncoder().encode(Tree(value: 1, children: [Tree(value: 2, children: [])])),
            (["a": [1, 2.5, "x"], "b": ["c": .bytes([1])]] as DocumentValue).binary(),
        ]
    }

    /// Decodes `bytes` every way we can; returns the number of attempts that threw.
    @discardableResult
    func exercise(_ bytes: [UInt8]) -> Int {
        var failures = 0
        let decoder = BinaryDecoder()
        func attempt(_ body: () throws -> Void) {
            do { try body() } catch { failures += 1 }
        }
        attempt { _ = try decoder.decode(FuzzDoc.self, from: bytes) }
        attempt { _ = try decoder.decode([String].self, from: bytes) }
        attempt { _ = try decoder.decode(Tree.self, from: bytes) }
        attempt { _ = try decoder.decode(DocumentValue.self, from: bytes) }
        attempt { _ = try decoder.decode([String: DocumentValue].self, from: bytes) }
        attempt { _ = try decoder.decode(Shape.self, from: bytes) }
        attempt { _ = try DocumentValue(binary: bytes) }
        attempt { _ = try DocumentValue(json: Data(bytes)) }
        return failures
    }

    @Test func mutatedEncodingsNeverCrash() throws {
        var rng = SplitMix64(seed: 0xDEC0DE)
        let seeds = try seeds()
        for s in seeds { #expect(exercise(s) < 8) }  // valid inputs decode at least one way
        for _ in 0..<20_000 {
            var bytes = seeds[Int(rng.next() % UInt64(seeds.count))]
            let mutations = 1 + Int(rng.next() % 4)
            for _ in 0..<mutations {
                guard !bytes.isEmpty else { break }
                let i = Int(rng.next() % UInt64(bytes.count))
                switch rng.next() % 7 {
                case 0: bytes[i] = UInt8(truncatingIfNeeded: rng.next())
                case 1: bytes[i] ^= UInt8(1) << UInt8(rng.next() % 8)
                case 2: bytes.removeSubrange(i...)  // truncate
                case 3: bytes.insert(UInt8(truncatingIfNeeded: rng.next()), at: i)
                case 4: bytes[i] = [0x00, 0x7F, 0x80, 0xFF, 0x09, 0x0A, 0x0F][Int(rng.next() % 7)]
                case 5: bytes.replaceSubrange(i..<min(bytes.count, i + 4), with: [0xFF, 0xFF, 0xFF, 0x7F])
                default: bytes.remove(at: i)
                }
            }
            exercise(bytes)
        }
    }

    @Test func randomBytesAlwaysThrowOrDecode() {
        var rng = SplitMix64(seed: 42)
        for n in 0..<5_000 {
            let count = Int(rng.next() % 64)
            var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if n % 2 == 0, !bytes.isEmpty { bytes[0] = 1 }  // valid version byte half the time
            exercise(bytes)
        }
    }

    @Test func hugeLengthPrefixesAreRejectedBeforeAllocation() {
        // array claiming 2^62 elements / string claiming 2^62 bytes
        let hostile: [[UInt8]] = [
            [1, 0x09, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x3F, 0x00],
            [1, 0x07, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x3F],
            [1, 0x0A, 0x7F, 0x02, 0x00, 0x00],
            [1, 0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],
            [1, 0x03, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02],
        ]
        for h in hostile { #expect(exercise(h) == 8) }
    }
}

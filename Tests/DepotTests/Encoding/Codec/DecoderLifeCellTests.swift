@testable import DepotEngine
import Foundation
import Testing

/// Keyed containers hold their decoder unretained and read it only when its life cell says
/// they may (``DecoderLifeCell``): these tests reuse cells on purpose.
@Suite struct DecoderLifeCellTests {
    @Test func aCellGivenBackIsTakenAgainWithItsNumbersMovedOn() {
        let cell = DecoderLifeCell.take()
        cell.decodeNumber &+= 5
        let (number, life) = (cell.decodeNumber, cell.life)
        cell.give()
        // The calling thread keeps the cells given back on it, and hands out the last first.
        let again = DecoderLifeCell.take()
        defer { again.give() }
        #expect(again.words == cell.words)
        #expect(again.decodeNumber > number)
        #expect(again.life > life)
    }

    @Test func aContainerOfAGoneDecoderRefusesWhileItsCellServesAnotherDecode() throws {
        let bytes = try BinaryEncoder().encode(Late(name: "Ada", inner: ["k": "v"]))
        // A decoder that keeps its containers, then goes: its cell goes back to this thread.
        do {
            let once = BinaryDecoder()
            _ = try once.decode(Late.self, from: bytes)
        }
        let (keyed, nested) = Late.kept.get()
        #expect(keyed != nil && nested != nil)
        // The next decoder made on this thread takes that cell (the test above shows that the
        // cell given back last is taken first) and, inside its own decode, uses the containers
        // the gone decoder made: they must refuse, not read the new decoder's bytes.
        let other = try BinaryEncoder().encode(Late(name: "Bo", inner: ["k": "w"]))
        let probe = try BinaryDecoder().decode(UsesKept.self, from: other)
        #expect(probe.keyedRefused)
        #expect(probe.nestedRefused)
    }

    @Test func aSuperDecodersContainerReadsAfterTheDecoderValueIsDropped() throws {
        let bytes = try BinaryEncoder().encode(Late(name: "Ada", inner: ["k": "v"]))
        let value = try BinaryDecoder().decode(ReadsThroughDroppedSuper.self, from: bytes)
        #expect(value.inner == "v")
        #expect(value.name == "Ada")
    }
}

/// A value whose decoding keeps its keyed container and a nested one (a container of its own).
private struct Late: Codable {
    enum Keys: String, CodingKey { case name, inner }
    /// The containers kept, behind a lock.
    final class Kept: @unchecked Sendable {
        private let lock = NSLock()
        private var keyed: KeyedDecodingContainer<Keys>?
        private var nested: KeyedDecodingContainer<StringKey>?
        func set(_ keyed: KeyedDecodingContainer<Keys>, _ nested: KeyedDecodingContainer<StringKey>) {
            lock.withLock { (self.keyed, self.nested) = (keyed, nested) }
        }
        func get() -> (KeyedDecodingContainer<Keys>?, KeyedDecodingContainer<StringKey>?) { lock.withLock { (keyed, nested) } }
    }
    static let kept = Kept()
    var name: String
    var inner: [String: String]

    init(name: String, inner: [String: String]) {
        self.name = name
        self.inner = inner
    }

    init(from decoder: any Decoder) throws {
        let keyed = try decoder.container(keyedBy: Keys.self)
        name = try keyed.decode(String.self, forKey: .name)
        let nested = try keyed.nestedContainer(keyedBy: StringKey.self, forKey: .inner)
        inner = ["k": try nested.decode(String.self, forKey: StringKey("k"))]
        Late.kept.set(keyed, nested)
    }

    func encode(to encoder: any Encoder) throws {
        var keyed = encoder.container(keyedBy: Keys.self)
        try keyed.encode(name, forKey: .name)
        try keyed.encode(inner, forKey: .inner)
    }
}

/// Decodes the same record shape, and meanwhile uses the containers ``Late`` kept.
private struct UsesKept: Decodable {
    var keyedRefused = false
    var nestedRefused = false

    init(from decoder: any Decoder) throws {
        let keyed = try decoder.container(keyedBy: Late.Keys.self)
        _ = try keyed.decode(String.self, forKey: .name)
        let (oldKeyed, oldNested) = Late.kept.get()
        keyedRefused = Self.refuses { _ = try oldKeyed?.decode(String.self, forKey: .name) }
        nestedRefused = Self.refuses { _ = try oldNested?.decode(String.self, forKey: StringKey("k")) }
        _ = try keyed.decode([String: String].self, forKey: .inner)
    }

    static func refuses(_ body: () throws -> Void) -> Bool {
        do {
            try body()
            return false
        } catch DecodingError.dataCorrupted(let context) {
            return context.debugDescription.contains("after the decode that made it ended")
        } catch {
            return false
        }
    }
}

/// Reads `inner` through a super decoder's container after the `Decoder` value is dropped.
private struct ReadsThroughDroppedSuper: Decodable {
    var inner: String
    var name: String

    init(from decoder: any Decoder) throws {
        let keyed = try decoder.container(keyedBy: Late.Keys.self)
        let innerKeyed = try Self.superContainer(keyed)
        // Other decoding in between, so that the super decoder value is long gone.
        name = try keyed.decode(String.self, forKey: .name)
        inner = try innerKeyed.decode(String.self, forKey: StringKey("k"))
    }

    /// The super decoder lives only in this call; its container is returned.
    private static func superContainer(_ keyed: KeyedDecodingContainer<Late.Keys>) throws -> KeyedDecodingContainer<StringKey> {
        try keyed.superDecoder(forKey: .inner).container(keyedBy: StringKey.self)
    }
}

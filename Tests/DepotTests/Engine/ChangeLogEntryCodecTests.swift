import Foundation
import Testing
@testable import DepotCore

/// Change-log entries are written and read by hand (`ChangeLog.Entry.encoded()`,
/// `ChangeLog.Entry.decode(_:)`) in exactly the bytes `BinaryEncoder` writes for the `Codable`
/// entry: watchers and writers of other versions read each other's entries.
@Suite("Change-log entry codec")
struct ChangeLogEntryCodecTests {
    /// A random entry: writers and names of every length class (empty, ASCII, non-ASCII, over
    /// 127 bytes), up to 5 parts, up to 200 keys per list (counts and lengths past one varint byte).
    static func randomEntry(_ rng: inout SplitMix64) -> ChangeLog.Entry {
        func text() -> String {
            switch rng.next() % 5 {
            case 0: return ""
            case 1: return "w" + String(rng.next() % 1000)
            case 2: return "Zoë 🚀 \(rng.next() % 100)"
            case 3: return String(repeating: "é", count: Int(rng.next() % 200))
            default: return "default"
            }
        }
        func keys() -> [Data] {
            let count = rng.next() % 4 == 0 ? Int(rng.next() % 200) : Int(rng.next() % 3)
            return (0..<count).map { _ in Data((0..<Int(rng.next() % 40)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }) }
        }
        let kinds: [IDKind] = [.string, .signed, .unsigned, .uuid]
        let parts = (0..<Int(rng.next() % 6)).map { _ in
            var part = ChangeLog.Part(alias: text(), collection: text(), kind: kinds[Int(rng.next() % 4)])
            part.created = keys()
            part.updated = keys()
            part.deleted = keys()
            return part
        }
        let times: [Double] = [0, -1.5, 1_765_000_000.123, .greatestFiniteMagnitude, Double(rng.next() % 1_000_000) / 7]
        return ChangeLog.Entry(writer: text(), time: times[Int(rng.next() % 5)], parts: parts)
    }

    /// Whether two entries hold the same writer, time (bit for bit), and parts.
    static func same(_ a: ChangeLog.Entry, _ b: ChangeLog.Entry) -> Bool {
        a.writer == b.writer && a.time.bitPattern == b.time.bitPattern && a.parts.count == b.parts.count
            && zip(a.parts, b.parts).allSatisfy { p, q in
                p.alias == q.alias && p.collection == q.collection && p.kind == q.kind
                    && p.created == q.created && p.updated == q.updated && p.deleted == q.deleted
            }
    }

    @Test func theHandWrittenBytesAreTheCodableBytes() throws {
        var rng = SplitMix64(seed: 0xC4A9)
        for round in 0..<400 {
            let entry = Self.randomEntry(&rng)
            let codable = try BinaryEncoder().encode(entry)
            #expect(entry.encoded() == codable, "round \(round)")
        }
    }

    @Test func theBytesDecodeInTheirLayoutToTheSameEntry() throws {
        var rng = SplitMix64(seed: 0x7E11)
        for round in 0..<400 {
            let entry = Self.randomEntry(&rng)
            let bytes = entry.encoded()
            let direct = try bytes.withUnsafeBytes { try ChangeLog.Entry.decodeInLayout($0) }
            #expect(direct.map { Self.same($0, entry) } == true, "round \(round): read in its layout")
            let decoded = try bytes.withUnsafeBytes { try ChangeLog.Entry.decode($0) }
            #expect(Self.same(decoded, entry), "round \(round)")
            let codable = try BinaryDecoder().decode(ChangeLog.Entry.self, from: bytes)
            #expect(Self.same(codable, entry), "round \(round): Codable reads the hand-written bytes")
        }
    }

    /// The same fields in another order (as another encoder may write them): not the layout
    /// read directly, so `Codable` reads them, to the same entry.
    @Test func fieldsInAnotherOrderAreReadThroughCodable() throws {
        struct Reordered: Codable {
            var parts: [ChangeLog.Part]
            var time: Double
            var writer: String
            var note = "a field the entry does not have"
        }
        var rng = SplitMix64(seed: 0x0DD)
        for _ in 0..<50 {
            let entry = Self.randomEntry(&rng)
            let bytes = try BinaryEncoder().encode(Reordered(parts: entry.parts, time: entry.time, writer: entry.writer))
            #expect(try bytes.withUnsafeBytes { try ChangeLog.Entry.decodeInLayout($0) } == nil)
            let decoded = try bytes.withUnsafeBytes { try ChangeLog.Entry.decode($0) }
            #expect(Self.same(decoded, entry))
        }
    }

    /// Damaged bytes (every truncation, single bytes changed) throw or decode; they never trap,
    /// and whatever the direct reading accepts is what `Codable` reads too.
    @Test func damagedBytesThrowOrDecodeAsCodableDoes() throws {
        var rng = SplitMix64(seed: 0xBAD)
        for _ in 0..<30 {
            let bytes = Self.randomEntry(&rng).encoded()
            // Every cut in the first 300 bytes (headers, first part), then every 97th.
            for length in Array(0..<min(300, bytes.count)) + Array(stride(from: 300, to: bytes.count, by: 97)) {
                let cut = Array(bytes[..<length])
                #expect(throws: (any Error).self) { try cut.withUnsafeBytes { try ChangeLog.Entry.decode($0) } }
            }
            for _ in 0..<40 {
                var changed = bytes
                changed[Int(rng.next() % UInt64(changed.count))] = UInt8(truncatingIfNeeded: rng.next())
                if let direct = try? changed.withUnsafeBytes({ try ChangeLog.Entry.decodeInLayout($0) }) {
                    let codable = try BinaryDecoder().decode(ChangeLog.Entry.self, from: changed)
                    #expect(Self.same(direct, codable))
                }
            }
        }
    }
}

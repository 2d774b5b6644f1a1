import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

/// Index keys read straight from stored bytes (`IndexFieldPath`) against the keys of the
/// decoded document (`DocumentValue[path:]`), which they replace on the write path; and unique
/// entries claimed before the record is written.
@Suite struct IndexFieldPathTests {
    /// A seeded random document value, scalars of every kind, nested up to `depth`.
    static func randomValue(_ rng: inout SplitMix64, depth: Int) -> DocumentValue {
        let names = ["a", "b", "email", "zip", "0", "1", "2", "K", "\u{212A}", "é", "e\u{301}", "x.y", ""]
        switch rng.next() % (depth > 0 ? 14 : 11) {
        case 0: return .null
        case 1: return .bool(rng.next() % 2 == 0)
        case 2: return .int(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 64))
        case 3: return .uint(rng.next())
        case 4: return .double([0.5, -2.0, 1e300, 3.0, -0.0, .infinity][Int(rng.next() % 6)])
        case 5: return .string(["", "ada", "nul\u{0}in", "ümlaut", String(repeating: "long", count: 150)][Int(rng.next() % 5)])
        case 6: return .bytes([0, 1, 0, 255])
        case 7: return .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID())
        case 8: return .date(Date(timeIntervalSinceReferenceDate: Double(rng.next() % 1_000_000)))
        case 9: return .reference(collection: "Company", id: .string("c\(rng.next() % 9)"))
        case 10: return .string("s\(rng.next() % 5)")
        case 11, 12:
            return .array((0..<Int(rng.next() % 4)).map { _ in randomValue(&rng, depth: depth - 1) })
        default:
            return .object((0..<Int(rng.next() % 5)).map { _ in
                DocumentValue.Field(names[Int(rng.next() % UInt64(names.count))], randomValue(&rng, depth: depth - 1))
            })
        }
    }

    @Test func keysFromBytesEqualKeysFromTheDecodedDocument() throws {
        let paths = ["a", "b", "email", "a.b", "a.0", "a.1.b", "b[0]", "b[1].a", "a[0][1]", "0", "K", "\u{212A}", "é", "e\u{301}",
                     "a..b", "", ".", "a[", "a[x]", "a[-1]", "[0]", "zip.a.b.email", "x", "1.a", "a.2"]
        var rng = SplitMix64(seed: 7)
        var compared = 0, present = 0
        for _ in 0..<3_000 {
            let document = DocumentValue.object((0..<Int(rng.next() % 6)).map { i in
                DocumentValue.Field(["a", "b", "email", "0", "K", "\u{212A}", "é"][Int(rng.next() % 7)] + (i == 0 ? "" : ""),
                                    Self.randomValue(&rng, depth: 3))
            })
            let bytes = document.binary()
            for field in paths {
                let expected = IndexKeyEncoding.encode(document[path: field] ?? .null)
                let found = try bytes.withUnsafeBytes { try IndexKeyEncoding.encode(stored: $0, path: IndexFieldPath(field)) }
                #expect(found == expected, "field '\(field)'")
                compared += 1
                if document[path: field] != nil { present += 1 }
            }
        }
        #expect(compared == 3_000 * paths.count)
        // The documents reach the paths often enough for the comparison to mean something.
        #expect(present > 5_000)
    }

    @Test func invalidUTF8InAnIndexedStringIsAnError() throws {
        // A string payload that is not UTF-8: refused as when the document is read.
        var bytes = DocumentValue.object([.init("email", .string("ab"))]).binary()
        guard let at = bytes.lastIndex(of: UInt8(ascii: "b")) else { Issue.record("no string payload"); return }
        bytes[at] = 0xFF
        #expect(throws: BinaryCodecError.self) {
            try bytes.withUnsafeBytes { try IndexKeyEncoding.encode(stored: $0, path: IndexFieldPath("email")) }
        }
        #expect(throws: (any Error).self) { _ = try DocumentValue(binary: bytes) }
    }

    struct TwoUnique: Document, Equatable {
        var id: String
        var email: String
        var handle: String?
        static var indexes: [DocumentIndex<TwoUnique>] { [.init(\.email, unique: true), .init(\.handle, unique: true)] }
    }

    @Test func aUniqueClashLeavesNoEntryOfTheRefusedWrite() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        try store.write { tx in
            try tx.park(TwoUnique(id: "a", email: "a@x", handle: "ada"))
            try tx.park(TwoUnique(id: "b", email: "b@x", handle: nil))
        }
        // `email` is claimed first, then `handle` clashes with a's: the email entry is taken back.
        try store.write { tx in
            let clash = #expect(throws: DepotError.self) { try tx.park(TwoUnique(id: "c", email: "c@x", handle: "ada")) }
            #expect(clash?.code == .uniqueIndexViolation)
            #expect(try tx.retrieve(TwoUnique.self, id: "c") == nil)
            // The value the refused write claimed first is free, inside the same transaction.
            try tx.park(TwoUnique(id: "d", email: "c@x", handle: "dee"))
        }
        // An update that moves a unique value frees the old one.
        try store.write { tx in
            try tx.park(TwoUnique(id: "a", email: "a2@x", handle: "ada"))
            try tx.park(TwoUnique(id: "e", email: "a@x", handle: nil))
        }
        try store.read { tx in
            let byEmail = { (email: String) in try tx.execute(FetchRequest<TwoUnique>().matching(\.email, .equalTo(email))).documents.map(\.id) }
            #expect(try byEmail("c@x") == ["d"])
            #expect(try byEmail("a@x") == ["e"])
            #expect(try byEmail("a2@x") == ["a"])
            let byHandle = try tx.execute(FetchRequest<TwoUnique>().matching(\.handle, .equalTo("ada"))).documents.map(\.id)
            #expect(byHandle == ["a"])
        }
        // A park that clashes with another document's value while keeping its own is refused too.
        let refused = #expect(throws: DepotError.self) {
            try store.write { tx in try tx.park(TwoUnique(id: "d", email: "c@x", handle: "ada")) }
        }
        #expect(refused?.code == .uniqueIndexViolation)
        #expect(try store.read { tx in try tx.retrieve(TwoUnique.self, id: "d") } == TwoUnique(id: "d", email: "c@x", handle: "dee"))
    }
}

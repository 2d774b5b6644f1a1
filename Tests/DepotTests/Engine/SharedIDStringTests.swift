import DepotTestSupport
import Foundation
import Synchronization
import Testing
@testable import Depot
@testable import DepotCore

/// How often `IDBadge`'s generated decoder ran.
private let idBadgeDecodes = Mutex(0)

/// A document read by the direct path (generated codec, no field defaults, no sync status) whose
/// other string fields can hold the ID's bytes or bytes close to them.
private struct IDBadge: Document, BinaryCodableDocument, Equatable {
    var id: String
    var label: String
    var owners: [String]

    static let keys: [StaticString] = ["id", "label", "owners"]

    init(id: String, label: String, owners: [String]) {
        self.id = id
        self.label = label
        self.owners = owners
    }

    func encodeBinary(into writer: inout BinaryRecordWriter) throws {
        try writer.encode(id, forKey: "id")
        try writer.encode(label, forKey: "label")
        try writer.encode(owners, forKey: "owners")
    }

    init(binaryRecord reader: inout BinaryRecordReader) throws {
        idBadgeDecodes.withLock { $0 += 1 }
        var id: String?, label: String?, owners: [String]?
        while let field = try reader.nextField(in: Self.keys) {
            switch field {
            case 0: id = try reader.decode(String.self)
            case 1: label = try reader.decode(String.self)
            case 2: owners = try reader.decode([String].self)
            default: break
            }
        }
        guard let id else { throw reader.missingField("id") }
        guard let label else { throw reader.missingField("label") }
        guard let owners else { throw reader.missingField("owners") }
        self.init(id: id, label: label, owners: owners)
    }
}

/// `retrieve(_:id:)` hands the caller's ID string to the generated decoder, which returns it for a
/// string field with exactly its bytes instead of copying: these tests check that only such
/// fields get it.
@Suite("Shared ID string on retrieve", .serialized)
struct SharedIDStringTests {
    /// `id` with the byte at `index` changed (to another ASCII letter, or a non-ASCII one).
    private static func altered(_ id: String, at index: Int, nonASCII: Bool) -> String {
        var bytes = Array(id.utf8)
        if nonASCII {
            bytes.replaceSubrange(index...index, with: Array("é".utf8))
        } else {
            bytes[index] = bytes[index] == UInt8(ascii: "x") ? UInt8(ascii: "y") : UInt8(ascii: "x")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func fieldsThatDifferFromTheIDInAnyByteDecodeAsStored() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        var expected: [IDBadge] = []
        for length in [1, 2, 7, 8, 9, 15, 16, 17, 23, 24, 36, 40] {
            let id = String((0..<length).map { Character(UnicodeScalar(UInt8(97 + $0 % 26))) })
            for index in Set([0, length / 2, length - 1]) {
                let docID = id + "-\(index)"
                expected.append(IDBadge(id: docID, label: Self.altered(docID, at: index, nonASCII: false),
                                      owners: [Self.altered(docID, at: index, nonASCII: true), docID]))
            }
            expected.append(IDBadge(id: id, label: id, owners: [id, id + "!"]))
        }
        try store.write { tx in for badge in expected { try tx.park(badge) } }
        let before = idBadgeDecodes.withLock { $0 }
        try store.read { tx in
            for badge in expected {
                let found = try tx.retrieve(IDBadge.self, id: badge.id)
                #expect(found == badge, "retrieve \(badge.id)")
            }
            // A scan after the retrieves: no shared string left over from them.
            #expect(Set(try tx.fetch(IDBadge.self).map(\.label)) == Set(expected.map(\.label)))
        }
        #expect(idBadgeDecodes.withLock { $0 } - before == expected.count * 2, "the generated decoder ran for every read")
    }

    @Test func theIDFieldReadBackIsTheCallersString() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let id = "8c7e2a1d-5b0f-4c3e-9a6d-1f2e3d4c5b6a"
        try store.write { tx in try tx.park(IDBadge(id: id, label: "plain", owners: [])) }
        let found = try store.read { tx in try tx.retrieve(IDBadge.self, id: id) }
        #expect(found?.id == id)
        // Shared, not copied: the same UTF-8 storage as the caller's string.
        var mine = id, theirs = found?.id ?? ""
        let same = mine.withUTF8 { a in theirs.withUTF8 { b in a.baseAddress == b.baseAddress } }
        #expect(same)
    }
}

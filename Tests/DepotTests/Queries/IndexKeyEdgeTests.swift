import DepotTestSupport
import Foundation
import Testing

@testable import Depot
@testable import DepotCore
@testable import DepotEngine

/// A flag with an index on its Bool.
struct IndexedFlag: Document, Equatable {
    var id: String
    var on: Bool
    static var indexes: [DocumentIndex<IndexedFlag>] { [.init(\.on)] }
}

/// A label unique by a string that may be long.
struct LongLabel: Document, Equatable {
    var id: String
    var text: String
    static var indexes: [DocumentIndex<LongLabel>] { [.init(\.text, unique: true)] }
}

/// Index keys found wrong by an outside tester (2026-12-07): false and true had two tags, so a
/// range through a Bool index found nothing of the other value; keys were cut at 400 bytes, so
/// a unique index refused two long strings sharing their first 400 bytes.
@Suite("Indexes: booleans and long values")
struct IndexKeyEdgeTests {
    @Test func rangesOverBooleansFindBoth() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        try store.write { tx in
            try tx.park(IndexedFlag(id: "f", on: false))
            try tx.park(IndexedFlag(id: "t", on: true))
        }
        let checks: [(Comparison<Bool>, [String])] = [
            (.lessThan(true), ["f"]), (.atMost(true), ["f", "t"]), (.greaterThan(false), ["t"]),
            (.atLeast(false), ["f", "t"]), (.equalTo(true), ["t"]), (.lessThan(false), []), (.greaterThan(true), []),
        ]
        try store.read { tx in
            for (i, (comparison, expected)) in checks.enumerated() {
                let result = try tx.execute(FetchRequest<IndexedFlag>().matching(\.on, comparison))
                #expect(result.plan.usedIndex, "check \(i)")
                #expect(result.documents.map(\.id).sorted() == expected, "check \(i)")
                #expect(try tx.count(FetchRequest<IndexedFlag>().matching(\.on, comparison)) == expected.count, "check \(i): count")
            }
            let schemaless = try tx.query(collection: IndexedFlag.collection, conditions: [FieldCondition(field: "on", op: .less, value: .bool(true))])
            #expect(schemaless.plan.usedIndex && schemaless.documents.count == 1)
        }
    }

    @Test func longValuesSharingTheirStartAreDistinctInAUniqueIndex() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let shared = String(repeating: "q", count: 500)
        try store.write { tx in
            try tx.park(LongLabel(id: "a", text: shared + "a"))
            try tx.park(LongLabel(id: "b", text: shared + "b"))
            try tx.park(LongLabel(id: "short", text: "q"))
        }
        // The same long value twice is still a duplicate.
        let duplicate = #expect(throws: DepotError.self) { try store.write { tx in try tx.park(LongLabel(id: "c", text: shared + "a")) } }
        #expect(duplicate?.code == .uniqueIndexViolation)
        try store.read { tx in
            let exact = try tx.execute(FetchRequest<LongLabel>().matching(\.text, .equalTo(shared + "b")))
            #expect(exact.plan.usedIndex && exact.documents.map(\.id) == ["b"])
            let below = try tx.execute(FetchRequest<LongLabel>().matching(\.text, .lessThan(shared + "b")))
            #expect(below.plan.usedIndex && below.documents.map(\.id).sorted() == ["a", "short"])
            let above = try tx.execute(FetchRequest<LongLabel>().matching(\.text, .greaterThan(shared + "a")))
            #expect(above.documents.map(\.id) == ["b"])
            let atMost = try tx.execute(FetchRequest<LongLabel>().matching(\.text, .atMost(shared + "b")))
            #expect(atMost.documents.map(\.id).sorted() == ["a", "b", "short"])
            let prefixed = try tx.execute(FetchRequest<LongLabel>().matching(\.text, .hasPrefix(shared)))
            #expect(prefixed.documents.map(\.id).sorted() == ["a", "b"])
        }
        // A key is never longer than the cut and its hash (within LMDB's 511 bytes).
        #expect(IndexKeyEncoding.encode(.string(String(repeating: "x", count: 10_000))).count == IndexKeyEncoding.cutKeyBytes)
    }
}

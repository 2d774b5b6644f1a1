import Testing
import DepotTestSupport
@testable import Depot
@testable import DepotCore

private struct Boom: Error {}

private struct StaffV1: Document, Equatable {
    static var collection: String { "Staff" }
    var id: String
    var email: String
    static var indexes: [DocumentIndex<StaffV1>] { [.init(\.email, unique: true)] }
}

/// The same collection with the index no longer unique: its keyspace is dropped and created
/// again with other flags.
private struct StaffV2: Document, Equatable {
    static var collection: String { "Staff" }
    var id: String
    var email: String
    static var indexes: [DocumentIndex<StaffV2>] { [.init(\.email)] }
}

private struct Filler: Document, Equatable {
    var id: String
    var note: String
    static var indexes: [DocumentIndex<Filler>] { [.init(\.note)] }
}

/// A write that changes a collection's indexes (dropping an index keyspace) and then fails:
/// everything stays as it was, and keyspaces created afterwards never take the place of the
/// dropped one (LMDB forgets a dropped database's handle at once, and an abort does not bring
/// it back).
@Suite("Aborted schema changes")
struct AbortedSchemaChangeTests {
    @Test func anAbortedIndexChangeLeavesTheIndex() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        try store.write { tx in
            try tx.park(StaffV1(id: "a", email: "a@example.com"))
            try tx.park(StaffV1(id: "b", email: "b@example.com"))
        }
        #expect(throws: Boom.self) {
            try store.write { tx in
                try tx.park(StaffV2(id: "c", email: "a@example.com"))
                throw Boom()
            }
        }
        // New keyspaces (a collection and its index) after the abort.
        try store.write { tx in
            for i in 0..<3 { try tx.park(Filler(id: "f\(i)", note: "a@example.com")) }
        }
        try store.read { tx in
            let found = try tx.execute(FetchRequest<StaffV1>().matching(\.email, .equalTo("a@example.com")))
            #expect(found.plan.usedIndex)
            #expect(found.documents == [StaffV1(id: "a", email: "a@example.com")])
            #expect(try tx.retrieveAll(StaffV1.self).map(\.id).sorted() == ["a", "b"])
        }
        // The unique index still holds.
        #expect(throws: (any Error).self) { try store.write { tx in try tx.park(StaffV1(id: "d", email: "b@example.com")) } }
        // And the change, committed this time, takes effect.
        try store.write { tx in try tx.park(StaffV2(id: "c", email: "a@example.com")) }
        let twins = try store.read { tx in try tx.execute(FetchRequest<StaffV2>().matching(\.email, .equalTo("a@example.com"))).documents }
        #expect(twins.map(\.id).sorted() == ["a", "c"])
    }
}

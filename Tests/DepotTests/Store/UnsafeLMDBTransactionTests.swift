import Foundation
import Testing
import DepotLMDB
import DepotTestSupport
@testable import Depot
@testable import DepotCore

/// `unsafeLMDBTransaction` lends the LMDB transaction out for raw work in databases of the
/// caller's own; Depot's databases are refused through it.
@Suite("The raw escape hatch")
struct UnsafeLMDBTransactionTests {
    let folder = TemporaryFolder()

    @Test func ownDatabasesWorkBesideDocumentsInOneCommit() throws {
        let store = try Store(path: folder.path)
        try store.write { tx in
            try tx.park(Department(id: "d1", name: "Ops"))
            let txn = try #require(tx.unsafeLMDBTransaction)
            let mine = try txn.openDatabase("app.counters", key: StringCodec.self, value: StringCodec.self)
            try txn.put("1", forKey: "visits", in: mine)
            // The document layer goes on writing its own databases after the hatch was used.
            try tx.park(Department(id: "d2", name: "Sales"))
        }
        let environment = try store.environment
        try environment.read { txn in
            let mine = try txn.openDatabase("app.counters", key: StringCodec.self, value: StringCodec.self, create: false)
            #expect(try txn.get("visits", in: mine) == "1")
        }
        #expect(try store.read { try $0.retrieve(Department.self, id: "d2") }?.name == "Sales")
    }

    @Test func depotsDatabasesAreRefused() throws {
        let store = try Store(path: folder.path)
        try store.write { try $0.park(Department(id: "d1", name: "Ops")) }
        let environment = try store.environment
        // A handle obtained elsewhere (the environment) cannot write through the hatch either.
        let documents = try environment.openDatabase("depot.doc/default/Department", key: StringCodec.self, value: BytesCodec.self, create: false)
        try store.write { tx in
            let txn = try #require(tx.unsafeLMDBTransaction)
            let open = #expect(throws: LMDBError.self) {
                _ = try txn.openDatabase("depot.doc/default/Department", key: StringCodec.self, value: BytesCodec.self, create: false)
            }
            #expect(open?.code == LMDBError.permissionDenied.code)
            #expect(open?.description.contains("depot.") == true)
            #expect(throws: LMDBError.self) { try txn.put([1, 2, 3], forKey: "d1", in: documents) }
            #expect(throws: LMDBError.self) { _ = try txn.delete("d1", in: documents) }
            #expect(throws: LMDBError.self) { try txn.clear(documents) }
            _ = try txn.withCursor(documents) { cursor in
                #expect(throws: LMDBError.self) { try cursor.put([1], forKey: "d9") }
            }
        }
        // Nothing of it reached the record; the store reads it as before.
        #expect(try store.read { try $0.retrieve(Department.self, id: "d1") }?.name == "Ops")
    }

    @Test func theRefusalEndsWithTheTransaction() throws {
        let store = try Store(path: folder.path)
        try store.write { try $0.park(Department(id: "d1", name: "Ops")) }
        // A read that used the hatch, then plain reads on this thread (which reuse the object).
        try store.read { tx in _ = tx.unsafeLMDBTransaction }
        let environment = try store.environment
        try environment.read { txn in
            let documents = try txn.openDatabase("depot.doc/default/Department", key: StringCodec.self, value: BytesCodec.self, create: false)
            #expect(try txn.get("d1", in: documents) != nil)
        }
    }
}

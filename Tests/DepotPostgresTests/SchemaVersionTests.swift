#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import Testing

/// A write takes the store's schema version on trust (see
/// `PostgresTransaction.stableValue(forKey:in:)`) and checks it before it commits: a schema
/// change by another host is still kept by this host's next write.
/// A document type of its own collection with an index (its first write sets the store's
/// schema version).
private struct Label: Document {
    static var collection: String { "Label" }
    var id: Int
    var name: String
    static var indexes: [DocumentIndex<Label>] { [.init(\.name)] }
}

@Suite("Schema version on trust", .enabled(if: PostgresTestServer.isAvailable, "DEPOT_POSTGRES_URL is not set"))
struct SchemaVersionTests {
    /// A Staff document as JSON (schemaless writes keep the indexes the store records).
    static func document(_ id: Int, email: String) throws -> DocumentValue {
        try DocumentValue(jsonString: #"{"id": \#(id), "name": "N \#(id)", "email": "\#(email)", "salary": \#(id), "company": "C"}"#)
    }

    /// `storeHadAVersion` false: the store had no schema version at all (no collection with an
    /// index yet), so the first host's writes take its absence on trust, and the check of that
    /// absence must make the write after the other host's indexes see them.
    @Test(arguments: [true, false])
    func anIndexAddedByAnotherHostIsKeptByTheNextWrite(storeHadAVersion: Bool) throws {
        try PostgresTestServer.withHosts(2) { drivers in
            let first = try Store(driver: drivers[0]), second = try Store(driver: drivers[1])
            // The first host gives the store a schema version (an index of another collection),
            // or not, then writes (and so knows the version or its absence, and takes it on
            // trust from the second write on) before the other adds Staff's indexes, one of
            // them unique on `email`.
            if storeHadAVersion { try first.write { tx in try tx.park(Label(id: 1, name: "a")) } }
            for id in 1...3 {
                try first.write { tx in try tx.put(document: try Self.document(id, email: "p\(id)@example.org"), in: "Staff", id: .int(Int64(id))) }
            }
            try second.write { tx in try tx.park(staff(100)) }
            // The first host's next write must see the index: a second `email` is refused.
            let error = #expect(throws: DepotError.self) {
                try first.write { tx in try tx.put(document: try Self.document(4, email: staff(100).email), in: "Staff", id: .int(4)) }
            }
            #expect(error?.code == .uniqueIndexViolation)
            // And a new document of the first host is found through the index by the other.
            try first.write { tx in try tx.put(document: try Self.document(5, email: "new@example.org"), in: "Staff", id: .int(5)) }
            let byIndex = try second.read { tx in
                try tx.query(collection: "Staff", conditions: [FieldCondition(field: "email", op: .equal, value: .string("new@example.org"))])
            }
            #expect(byIndex.plan.strategy != .scan)
            #expect(byIndex.documents.map(\.id) == [.int(5)])
        }
    }

    /// A read reads the version (it takes nothing on trust): after another host added indexes,
    /// the first host's next read has the new schema and so uses the index.
    @Test func aReadAfterAnotherHostChangedTheSchemaSeesTheChange() throws {
        try PostgresTestServer.withHosts(2) { drivers in
            let first = try Store(driver: drivers[0]), second = try Store(driver: drivers[1])
            try first.write { tx in try tx.park(Label(id: 1, name: "a")) }
            try first.write { tx in try tx.put(document: try Self.document(1, email: "p1@example.org"), in: "Staff", id: .int(1)) }
            let email = FieldCondition(field: "email", op: .equal, value: .string(staff(100).email))
            for _ in 0..<2 {
                // Reads that know the version (the second takes it on trust): no index yet.
                let before = try first.read { tx in try tx.query(collection: "Staff", conditions: [email]) }
                #expect(before.plan.strategy == .scan)
                #expect(before.documents.isEmpty)
            }
            try second.write { tx in try tx.park(staff(100)) }
            let after = try first.read { tx in try tx.query(collection: "Staff", conditions: [email]) }
            #expect(after.plan.strategy != .scan, "the read used the schema of before the change")
            #expect(after.documents.map(\.id) == [.int(100)])
        }
    }

    /// `Store.retrieve` reads the document with what the thread's view resolved before and
    /// checks the schema version after (one wait, see `StorageCapabilities.pipelinedReads`):
    /// after another host dropped the alias and made its collection again (a new keyspace ID:
    /// the old one reads nothing), the get still returns the new document, and nil once the
    /// alias is dropped for good.
    @Test func aGetAfterAnotherHostRemadeTheCollectionReadsTheNewOne() throws {
        try PostgresTestServer.withHosts(2) { drivers in
            let first = try Store(driver: drivers[0]).alias("tenant"), second = try Store(driver: drivers[1])
            try first.write { tx in try tx.park(Label(id: 1, name: "old")) }
            for _ in 0..<2 { #expect(try first.retrieve(Label.self, id: 1)?.name == "old") }
            try second.dropAlias("tenant")
            try second.alias("tenant").write { tx in try tx.park(Label(id: 1, name: "new")) }
            #expect(try first.retrieve(Label.self, id: 1)?.name == "new")
            #expect(try first.retrieve(Label.self, id: 1)?.name == "new")
            try second.dropAlias("tenant")
            #expect(try first.retrieve(Label.self, id: 1) == nil)
        }
    }

    /// A read closure of a reused view checks the schema version with its first look-up of
    /// what the view resolved (one wait with a get's read). After another host dropped the
    /// alias and made its collections again (new keyspace IDs, a new schema), each kind of
    /// look-up sees the new ones: a typed scan, a query by collection name (with the index the
    /// new schema has), a get; a closure that resolved nothing leaves the check to the next.
    @Test func aReadClosureAfterAnotherHostRemadeTheCollectionReadsTheNewOne() throws {
        try PostgresTestServer.withHosts(2) { drivers in
            let first = try Store(driver: drivers[0]).alias("tenant"), second = try Store(driver: drivers[1])
            try first.write { tx in try tx.park(Label(id: 1, name: "old")) }
            try first.write { tx in try tx.put(document: try Self.document(1, email: "p1@example.org"), in: "Staff", id: .int(1)) }
            let email = FieldCondition(field: "email", op: .equal, value: .string(staff(1).email))
            func resolveEverything() throws {
                #expect(try first.read { tx in try tx.retrieve(Label.self, id: 1) } != nil)
                _ = try first.read { tx in try tx.query(collection: "Staff", conditions: [email]) }
            }
            /// Another host makes the alias again: Label 1 named `name`, Staff 1 with its indexes.
            func remake(_ name: String) throws {
                try second.dropAlias("tenant")
                try second.alias("tenant").write { tx in
                    try tx.park(Label(id: 1, name: name))
                    try tx.park(staff(1)) // Staff's declared indexes, one of them on `email`
                }
            }
            for _ in 0..<2 { try resolveEverything() }
            try remake("scanned")
            try first.read { _ in }
            #expect(try first.read { tx in try tx.retrieveAll(Label.self).map(\.name) } == ["scanned"])

            try resolveEverything()
            try second.dropAlias("tenant")
            try second.alias("tenant").write { tx in
                try tx.put(document: try Self.document(1, email: staff(1).email), in: "Staff", id: .int(1)) // no index
            }
            #expect(try first.read { tx in try tx.query(collection: "Staff", conditions: [email]).plan.strategy } == .scan)
            try remake("queried")
            let after = try first.read { tx in try tx.query(collection: "Staff", conditions: [email]) }
            #expect(after.plan.strategy != .scan, "the read used the schema of before the change")
            #expect(after.documents.map(\.id) == [.int(1)])

            try resolveEverything()
            try remake("got")
            #expect(try first.read { tx in try tx.retrieve(Label.self, id: 1)?.name } == "got")
            try second.dropAlias("tenant")
            #expect(try first.read { tx in try tx.retrieve(Label.self, id: 1) } == nil)
            #expect(try first.read { tx in try tx.count(Label.self) } == 0)
        }
    }

    /// A write that takes the version on trust sends its insert before the epoch read answered,
    /// with keyspace handles guessed at the epoch seen last: when another host dropped a
    /// keyspace meanwhile (a new epoch), the write still succeeds, at once or on its retry.
    /// One document per write: from the second write on, the collection comes from what the
    /// first committed write resolved (`WriteTargets`). Another host drops the alias and makes
    /// the collection anew (new keyspace IDs, a new schema version): the next writes of the
    /// first host must go to the new collection and its index, not to the dropped keyspaces —
    /// with every write isolation (without key locks a put checks no keyspace itself: its
    /// handle must be checked before it goes out).
    @Test(arguments: [PostgresConfiguration.WriteIsolation.readCommitted, .repeatableRead, .serializable])
    func typedWritesAfterAnotherHostRemadeTheCollectionGoToTheNewOne(isolation: PostgresConfiguration.WriteIsolation) throws {
        try PostgresTestServer.withHosts(2, configure: { $0.writeIsolation = isolation }) { drivers in
            let first = try Store(driver: drivers[0]).alias("tenant"), second = try Store(driver: drivers[1])
            for id in 1...3 { try first.write { tx in try tx.park(Label(id: id, name: "old")) } }
            try second.dropAlias("tenant")
            try second.alias("tenant").write { tx in try tx.park(Label(id: 100, name: "other")) }
            for id in 4...6 { try first.write { tx in try tx.park(Label(id: id, name: "new")) } }
            let tenant = try second.alias("tenant")
            #expect(try tenant.read { tx in try tx.retrieveAll(Label.self) }.map(\.id).sorted() == [4, 5, 6, 100])
            let byIndex = try tenant.read { tx in try tx.execute(FetchRequest<Label>().matching(\.name, .equalTo("new"))) }
            #expect(byIndex.plan.usedIndex)
            #expect(byIndex.documents.map(\.id).sorted() == [4, 5, 6])
        }
    }

    @Test func anInsertAfterAnotherHostDroppedAKeyspaceSucceeds() throws {
        try PostgresTestServer.withHosts(2) { drivers in
            let first = try Store(driver: drivers[0])
            try first.write { tx in try tx.park(Label(id: 1, name: "a")) }
            for id in 2...4 { try first.write { tx in try tx.park(Label(id: id, name: "n\(id)")) } }
            for round in 0..<3 {
                // Another host creates and drops a keyspace: the epoch moves on.
                try drivers[1].write { txn in _ = try txn.keyspace(named: "scratch", create: true, multiValue: false) }
                try drivers[1].write { txn in
                    if let scratch = try txn.keyspace(named: "scratch", create: false, multiValue: false) { try txn.drop(scratch) }
                }
                try first.write { tx in try tx.park(Label(id: 10 + round, name: "r\(round)")) }
            }
            #expect(try first.read { tx in try tx.retrieveAll(Label.self) }.count == 7)
        }
    }
}
#endif

import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore
@testable import DepotEngine

/// One document per write transaction: the collection, its schema and its index keyspaces come
/// from what an earlier committed write resolved (`WriteTargets`) and the type's declaration is
/// worked out once (`TypeDeclarations`). Each test changes what was resolved between two writes
/// and checks that the next write sees the change.
@Suite("Write targets kept across write transactions")
struct WriteTargetCacheTests {
    let folder = TemporaryFolder()
    let store: Store
    init() throws { store = try Store(path: folder.path) }

    @Test func writesOfOneDocumentEachKeepEveryIndexAndUniqueness() throws {
        for i in 0..<20 {
            try store.write { tx in try tx.park(Gadget(id: "g\(i)", color: i % 2 == 0 ? "red" : "blue", serial: "s\(i)", weight: i)) }
        }
        // Each write after the first used the kept target; the next is refused by the unique index.
        let error = #expect(throws: DepotError.self) {
            try store.write { tx in try tx.park(Gadget(id: "other", color: "red", serial: "s3", weight: 0)) }
        }
        #expect(error?.code == .uniqueIndexViolation)
        try store.read { tx throws in
            #expect(try tx.fetch(FetchRequest<Gadget>().matching(\.color, .equalTo("red"))).count == 10)
            #expect(try tx.fetch(FetchRequest<Gadget>().matching(\.serial, .equalTo("s7"))).map(\.id) == ["g7"])
            #expect(try tx.count(Gadget.self) == 20)
        }
        #expect(store.core.engine.writeTargets.entry(.init(alias: Store.defaultAlias, collection: "Gadget"), version: try currentVersion()) != nil,
                "the first write's target was kept")
    }

    /// On LMDB and on a driver whose keyspace handles stay valid after a drop (as PostgreSQL's
    /// IDs do: `isCurrent` is always true there), where only the schema version tells a kept
    /// target from a stale one.
    @Test(arguments: [false, true]) func anIndexRemovedBetweenWritesIsNotWrittenByTheNext(inMemory: Bool) throws {
        let store = inMemory ? try Store(driver: InMemoryDriver()) : self.store
        try store.write { tx in try tx.park(Gadget(id: "a", color: "red", serial: nil, weight: 1)) }
        try store.write { tx in try tx.park(Gadget(id: "b", color: "red", serial: nil, weight: 2)) }
        // Another type of the same collection drops the color index (the schema version moves on).
        try store.write { tx in try tx.park(GadgetWithoutColorIndex(id: "c", color: "red", serial: nil, weight: 3)) }
        try store.write { tx in try tx.park(GadgetWithoutColorIndex(id: "d", color: "red", serial: nil, weight: 4)) }
        try store.read { tx throws in
            let found = try tx.query(collection: "Gadget", conditions: [FieldCondition(field: "color", op: .equal, value: .string("red"))])
            #expect(found.plan.usedIndex == false)
            #expect(found.documents.count == 4)
        }
        // Declared again: rebuilt from the stored documents, then kept up by single writes.
        try store.write { tx in try tx.park(Gadget(id: "e", color: "red", serial: nil, weight: 5)) }
        try store.write { tx in try tx.park(Gadget(id: "f", color: "red", serial: nil, weight: 6)) }
        try store.read { tx throws in
            let found = try tx.execute(FetchRequest<Gadget>().matching(\.color, .equalTo("red")))
            #expect(found.plan.usedIndex)
            #expect(found.documents.map(\.id).sorted() == ["a", "b", "c", "d", "e", "f"])
        }
    }

    @Test(arguments: [false, true]) func aWriteAfterTheAliasWasDroppedWritesTheNewCollection(inMemory: Bool) throws {
        let store = inMemory ? try Store(driver: InMemoryDriver()) : self.store
        let tenant = try store.alias("tenant")
        try tenant.write { tx in try tx.park(Gadget(id: "a", color: "red", serial: "s", weight: 1)) }
        try tenant.write { tx in try tx.park(Gadget(id: "b", color: "red", serial: "t", weight: 2)) }
        try store.dropAlias("tenant")
        // The dropped collection's keyspaces are gone: the kept target must not be used.
        try tenant.write { tx in try tx.park(Gadget(id: "c", color: "blue", serial: "s", weight: 3)) }
        try tenant.write { tx in try tx.park(Gadget(id: "d", color: "blue", serial: "t", weight: 4)) }
        try tenant.read { tx throws in
            #expect(try tx.count(Gadget.self) == 2)
            #expect(try tx.retrieve(Gadget.self, id: "a") == nil)
            #expect(try tx.fetch(FetchRequest<Gadget>().matching(\.serial, .equalTo("s"))).map(\.id) == ["c"])
            #expect(try tx.fetch(FetchRequest<Gadget>().matching(\.color, .equalTo("blue"))).count == 2)
        }
    }

    @Test func aFailedWriteKeepsNothingForTheNext() throws {
        // The first write of a collection creates it, then fails: nothing of it may be reused.
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try store.write { tx in
                try tx.park(Gadget(id: "a", color: "red", serial: nil, weight: 1))
                throw Refused()
            }
        }
        #expect(store.core.engine.writeTargets.entry(.init(alias: Store.defaultAlias, collection: "Gadget"), version: try currentVersion()) == nil)
        try store.write { tx in try tx.park(Gadget(id: "b", color: "red", serial: nil, weight: 2)) }
        try store.write { tx in try tx.park(Gadget(id: "c", color: "red", serial: nil, weight: 3)) }
        try store.read { tx throws in
            #expect(try tx.fetch(FetchRequest<Gadget>().matching(\.color, .equalTo("red"))).map(\.id).sorted() == ["b", "c"])
        }
    }

    @Test func anIndexFieldCheckThatFailsIsMadeAgainByTheNextWrite() throws {
        for _ in 0..<2 {
            let error = #expect(throws: DepotError.self) { try store.write { tx in try tx.park(Renamed(id: "r", colour: "red")) } }
            #expect(error?.code == .invalidIndex)
        }
        try store.read { tx throws in #expect(try tx.retrieve(Renamed.self, id: "r") == nil) }
    }

    /// The store's schema version now.
    private func currentVersion() throws -> UInt64 {
        try store.read { tx in try tx.context.schemaVersion() }
    }
}

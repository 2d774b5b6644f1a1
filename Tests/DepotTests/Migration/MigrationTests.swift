import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

struct PersonV1: Document, Equatable {
    static var collection: String { "Person" }
    var id: String
    var name: String
    var salary: String
    var nickname: String?
}

struct PersonV2: Document, Equatable {
    static var collection: String { "Person" }
    static var version: Int { 2 }
    var id: String
    var fullName: String
    var pay: Int
    var rating: Int
    static var indexes: [DocumentIndex<PersonV2>] { [.init(\.pay)] }
}

struct Badge: Document, Equatable {
    var id: String
    var owner: Member
}

struct Member: Document, Equatable {
    var id: String
    var fullName: String
}

struct RatedV1: Document, Equatable {
    static var collection: String { "Rated" }
    var id: String
    var name: String
}

struct RatedV2: Document, Equatable {
    static var collection: String { "Rated" }
    var id: String
    var name: String
    var rating: Int
    var address: Address
    static var fieldDefaults: [String: DocumentValue] {
        ["rating": .int(3), "address": .object(pairs: [("street", .string("unknown")), ("zip", .string("00000"))])]
    }
}

struct RatedNoDefault: Document {
    static var collection: String { "Rated" }
    var id: String
    var name: String
    var rating: Int
}

@Suite("Migrations")
struct MigrationTests {
    let folder = TemporaryFolder()
    let store: Store
    init() throws { store = try Store(path: folder.path) }

    private func migrator() throws -> Migrator {
        var migrator = Migrator()
        try migrator.register("rename and default") { m in
            try m.renameField("name", to: "fullName", in: "Person")
            try m.addField("rating", default: .int(3), in: "Person")
            try m.removeField("nickname", in: "Person")
        }
        try migrator.register("salary becomes an integer") { m in
            try m.transformField("salary", in: "Person") { value in
                guard case .string(let text)? = value, let number = Int(text) else { return .int(0) }
                return .int(Int64(number))
            }
            try m.renameField("salary", to: "pay", in: "Person")
        }
        return migrator
    }

    @Test func migrationsRunOnceInOrderWithoutTheOldTypes() throws {
        try store.write { tx in
            for i in 0..<20 { try tx.park(PersonV1(id: "p\(i)", name: "Person \(i)", salary: String(i * 10), nickname: "n\(i)")) }
        }
        let migrator = try migrator()
        #expect(try migrator.migrate(store) == ["rename and default", "salary becomes an integer"])
        #expect(try migrator.appliedMigrations(in: store) == migrator.names)
        #expect(try migrator.migrate(store) == [], "nothing runs twice")
        let people = try store.read { try $0.retrieveAll(PersonV2.self) }
        #expect(people.count == 20)
        #expect(people.first { $0.id == "p3" } == PersonV2(id: "p3", fullName: "Person 3", pay: 30, rating: 3))
        try store.write { tx in try tx.park(PersonV2(id: "new", fullName: "New", pay: 30, rating: 5)) }
        try store.read { tx throws in
            let result = try tx.execute(FetchRequest<PersonV2>().matching(\.pay, .equalTo(30)))
            #expect(result.plan.usedIndex)
            #expect(result.documents.map(\.id) == ["new", "p3"])
            #expect(try exported(tx, "Person").map(\.document).allSatisfy { $0["nickname"] == nil })
        }
    }

    /// Undo reverted a migration's documents and left the migration recorded as applied (so
    /// it never ran again): a migration is not undoable, and it clears the undo history.
    @Test func aMigrationIsNotUndoneAndClearsTheUndoHistory() throws {
        let history = store.enableUndo()
        try store.write { tx in try tx.park(PersonV1(id: "p1", name: "Person 1", salary: "10", nickname: nil)) }
        #expect(history.canUndo)
        let migrator = try migrator()
        #expect(try migrator.migrate(store).count == 2)
        #expect(!history.canUndo, "the history before the migration is gone")
        #expect(try history.undo() == false)
        #expect(try store.read { try $0.retrieve(PersonV2.self, id: "p1") } == PersonV2(id: "p1", fullName: "Person 1", pay: 10, rating: 3))
        #expect(try migrator.appliedMigrations(in: store) == migrator.names)
        // Later writes are undoable again.
        try store.write { tx in try tx.park(PersonV2(id: "p2", fullName: "Two", pay: 2, rating: 1)) }
        #expect(try history.undo())
        #expect(try store.read { try $0.retrieve(PersonV2.self, id: "p2") } == nil)
        #expect(try store.read { try $0.retrieve(PersonV2.self, id: "p1") }?.fullName == "Person 1")
    }

    @Test func aDuplicateNameIsRefusedWhenRegistered() throws {
        var migrator = try migrator()
        let refused = #expect(throws: DepotError.self) { try migrator.register("rename and default") { _ in } }
        #expect(refused?.code == .duplicateMigration)
        #expect(refused?.message.contains("rename and default") == true)
        #expect(migrator.names == ["rename and default", "salary becomes an integer"], "nothing was registered")
    }

    @Test func completedAndSupersededMigrationsAreReported() throws {
        var older = Migrator()
        try older.register("rename and default") { _ in }
        let current = try migrator()
        var newer = try migrator()
        try newer.register("third") { _ in }
        #expect(try current.completedMigrations(in: store) == [])
        #expect(try !current.hasCompletedMigrations(in: store))
        try older.migrate(store)
        #expect(try current.completedMigrations(in: store) == ["rename and default"])
        #expect(try !current.hasBeenSuperseded(in: store))
        try current.migrate(store)
        #expect(try current.hasCompletedMigrations(in: store))
        #expect(try !current.hasBeenSuperseded(in: store))
        #expect(try older.hasBeenSuperseded(in: store), "the store holds a migration the older app does not know")
        try newer.migrate(store)
        #expect(try current.hasBeenSuperseded(in: store))
        #expect(try newer.completedMigrations(in: store) == newer.names)
        #expect(try !newer.hasBeenSuperseded(in: store))
    }

    @Test func aFailingMigrationIsRolledBackAndResumedLater() throws {
        try store.write { tx in for i in 0..<5 { try tx.park(PersonV1(id: "p\(i)", name: "P", salary: "1", nickname: nil)) } }
        struct Stop: Error {}
        var migrator = try migrator()
        let shouldFail = LockedBox(true)
        try migrator.register("third") { m in
            try m.addField("team", default: .string("blue"), in: "Person")
            if shouldFail.get() { throw Stop() }
        }
        #expect(throws: Stop.self) { try migrator.migrate(store) }
        #expect(try migrator.appliedMigrations(in: store) == ["rename and default", "salary becomes an integer"])
        #expect(try store.read { try exported($0, "Person").allSatisfy { $0.document["team"] == nil } }, "the failed one left nothing")
        shouldFail.set(false)
        #expect(try migrator.migrate(store) == ["third"])
    }

    @Test func collectionsMoveAndReferencesFollow() throws {
        try store.write { tx in
            try tx.park(Badge(id: "b1", owner: Member(id: "m1", fullName: "Ada")))
            try tx.park(DynamicObject(entity: "Contractor", id: "c1", fields: [("fullName", .string("Grace"))]))
        }
        var migrator = Migrator()
        try migrator.register("members are people") { m in try m.renameCollection("Member", to: "Human") }
        try migrator.register("contractors are people too") { m in
            try m.migrateAll(from: "Contractor", to: "Human") { doc in
                var converted = doc
                converted.setValue(.bool(true), atPath: "external")
                return converted
            }
        }
        try migrator.migrate(store)
        try store.read { tx throws in
            #expect(try tx.collections().sorted() == ["Badge", "Human"])
            let badge = try #require(try exported(tx, "Badge").first)
            #expect(badge.document["owner"] == .reference(collection: "Human", id: .string("m1")))
            #expect(try tx.retrieve(dynamic: "Human", id: .string("c1"))?.value["external"] == .bool(true))
            #expect(try tx.retrieveAll(dynamic: "Human").count == 2)
        }
    }

    @Test func additiveChangesNeedNoMigration() throws {
        try store.write { tx in try tx.park(RatedV1(id: "r", name: "Old")) }
        let read = try store.read { try $0.retrieve(RatedV2.self, id: "r") }
        #expect(read == RatedV2(id: "r", name: "Old", rating: 3, address: Address(street: "unknown", zip: "00000")))
        let error = #expect(throws: DepotError.self) { _ = try store.read { try $0.retrieve(RatedNoDefault.self, id: "r") } }
        #expect(error?.code == .decodingFailed && error?.fieldPath == "rating")
    }

    @Test func readingACollectionWrittenByANewerVersionIsAnError() throws {
        try store.write { tx in try tx.park(PersonV2(id: "p", fullName: "P", pay: 1, rating: 1)) }
        let error = #expect(throws: DepotError.self) { _ = try store.read { try $0.retrieve(PersonV1.self, id: "p") } }
        #expect(error?.code == .newerVersion)
        let writing = #expect(throws: DepotError.self) { try store.write { tx in try tx.park(PersonV1(id: "q", name: "Q", salary: "1", nickname: nil)) } }
        #expect(writing?.code == .newerVersion)
    }
}

/// Every stored document of `collection`, as `depot export` prints them.
func exported(_ tx: DocumentTransaction, _ collection: String) throws -> [ExportedDocument] {
    var result: [ExportedDocument] = []
    try tx.export(collection: collection) { result.append($0); return true }
    return result
}

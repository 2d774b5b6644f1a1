import DepotTestSupport
import Foundation
import Testing

@testable import Depot
@testable import DepotCore

struct MRWorker: Document, Equatable {
    static var collection: String { "Worker" }
    var id: String
    var name: String
}

/// A badge whose reference to its worker is not indexed.
struct MRBadge: Document, Equatable {
    static var collection: String { "Badge" }
    var id: String
    var worker: Reference<MRWorker>?
}

/// The same badges with an index on the reference.
struct MRIndexedBadge: Document, Equatable {
    static var collection: String { "Badge" }
    var id: String
    var worker: Reference<MRWorker>?
    static var indexes: [DocumentIndex<MRIndexedBadge>] { [.init(\.worker)] }
}

/// Issue 30 item 1: a rename or move of a collection is not a delete. No delete rule may run,
/// the references follow the documents in the same transaction, and every count is kept — for
/// every rule, both operations, with and without an index on the reference.
@Suite("Migrations and delete rules")
struct MigrationDeleteRuleTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var rule: DeleteRule
        var rename: Bool
        var indexed: Bool
        var testDescription: String { "\(rule) \(rename ? "renameCollection" : "migrateAll") \(indexed ? "indexed" : "unindexed")" }
    }

    static let cases: [Case] = [DeleteRule.cascade, .nullify, .deny].flatMap { rule in
        [true, false].flatMap { rename in [true, false].map { Case(rule: rule, rename: rename, indexed: $0) } }
    }

    @Test(arguments: cases)
    func aMoveRunsNoDeleteRuleAndReferencesFollow(_ c: Case) throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        // 50 workers, 120 badges, 110 of them referencing a worker.
        try store.write { tx in
            for i in 0..<50 { try tx.park(MRWorker(id: String(format: "w%02d", i), name: "W")) }
            for i in 0..<120 {
                let worker = i < 110 ? Reference<MRWorker>(id: String(format: "w%02d", i % 50)) : nil
                if c.indexed {
                    try tx.park(MRIndexedBadge(id: String(format: "b%03d", i), worker: worker))
                } else {
                    try tx.park(MRBadge(id: String(format: "b%03d", i), worker: worker))
                }
            }
        }
        if c.indexed {
            store.registerDeleteRule(c.rule, from: MRIndexedBadge.self, via: \.worker)
        } else {
            store.registerDeleteRule(c.rule, from: MRBadge.self, via: \.worker)
        }
        var migrator = Migrator()
        try migrator.register("workers are staff") { m in
            if c.rename {
                try m.renameCollection("Worker", to: "Staff")
            } else {
                try m.migrateAll(from: "Worker", to: "Staff") { $0 }
            }
        }
        #expect(try migrator.migrate(store) == ["workers are staff"], "a move is never refused by a deny rule")
        try store.read { tx throws in
            #expect(try tx.collections().sorted() == ["Badge", "Staff"])
            #expect(try tx.retrieveAll(dynamic: "Staff").count == 50)
            let badges = try exported(tx, "Badge")
            #expect(badges.count == 120, "no badge was deleted")
            var referencing = 0
            for badge in badges {
                guard let number = Int(displayID(badge.id).dropFirst()) else { Issue.record("unexpected ID"); continue }
                if number < 110 {
                    referencing += 1
                    #expect(badge.document["worker"] == .reference(collection: "Staff", id: .string(String(format: "w%02d", number % 50))),
                            "badge \(displayID(badge.id)) follows its worker")
                } else {
                    #expect(badge.document["worker"] == nil || badge.document["worker"] == .null)
                }
            }
            #expect(referencing == 110, "no reference was nulled")
            // The reference index (when there is one) answers what a scan answers.
            for i in [0, 7, 49] {
                let id = String(format: "w%02d", i)
                let target = DocumentValue.reference(collection: "Staff", id: .string(id))
                let result = try tx.query(collection: "Badge", conditions: [FieldCondition(field: "worker", op: .equal, value: target)])
                #expect(result.plan.usedIndex == c.indexed)
                let scanned = badges.filter { $0.document["worker"] == target }.map { displayID($0.id) }.sorted()
                #expect(result.documents.map { displayID($0.id) }.sorted() == scanned)
                #expect(scanned.count == (i < 10 ? 3 : 2))
                let old = try tx.query(collection: "Badge", conditions: [FieldCondition(field: "worker", op: .equal, value: .reference(collection: "Worker", id: .string(id)))])
                #expect(old.documents.isEmpty, "no index entry still points at the old collection")
            }
        }
        #expect(try migrator.appliedMigrations(in: store) == ["workers are staff"])
    }
}

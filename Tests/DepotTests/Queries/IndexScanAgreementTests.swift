import DepotTestSupport
import Foundation
import Testing

@testable import Depot
@testable import DepotCore

/// A link to a gadget that is nulled when the gadget goes (indexed reference and tag).
struct RPNullLink: Document, Equatable {
    static var collection: String { "NullLink" }
    var id: String
    var gadget: Reference<Gadget>?
    var tag: String
    static var indexes: [DocumentIndex<RPNullLink>] { [.init(\.gadget), .init(\.tag)] }
}

/// A link to a gadget that is deleted with the gadget.
struct RPCascadeLink: Document, Equatable {
    static var collection: String { "CascadeLink" }
    var id: String
    var gadget: Reference<Gadget>?
    var tag: String
    static var indexes: [DocumentIndex<RPCascadeLink>] { [.init(\.gadget), .init(\.tag)] }
}

/// Issue 30 item 6: every index answers what a scan answers after each writer the record
/// pipeline serves — migrations, undo and redo, delete rules (nullify, cascade, owner cascade)
/// and the key/value kit — not only typed, dynamic and seeded writes (RecordPipelineTests).
@Suite("Indexes equal scans after every writer")
struct IndexScanAgreementTests {
    let folder = TemporaryFolder()
    let store: Store
    init() throws { store = try Store(path: folder.path) }

    /// For each indexed field of `collection`, every value in `values`: the index answers what a scan does.
    private func expectAgreement(_ label: String, _ collection: String, _ checks: [(field: String, values: [DocumentValue])]) throws {
        try store.read { tx throws in
            let all = try exported(tx, collection)
            for (field, values) in checks {
                for value in values {
                    let viaIndex = try tx.query(collection: collection, conditions: [FieldCondition(field: field, op: .equal, value: value)])
                    #expect(viaIndex.plan.usedIndex, "\(label): \(collection).\(field) index used")
                    let scanned = all.filter { ($0.document[path: field] ?? .null) == value }.map { displayID($0.id) }.sorted()
                    #expect(viaIndex.documents.map { displayID($0.id) }.sorted() == scanned, "\(label): \(collection).\(field)")
                }
            }
        }
    }

    private let colors: [DocumentValue] = ["red", "green", "blue", "black", "teal"].map { .string($0) }

    private func expectGadgetsAgree(_ label: String) throws {
        try expectAgreement(label, "Gadget", [("color", colors), ("weight", (0..<30).map { .int(Int64($0 * 5)) })])
    }

    private func expectLinksAgree(_ label: String) throws {
        let gadgets: [DocumentValue] = (0..<20).map { .reference(collection: "Gadget", id: .string("g\($0)")) } + [.null]
        let tags: [DocumentValue] = ["a", "b"].map { .string($0) }
        try expectAgreement(label, "NullLink", [("gadget", gadgets), ("tag", tags)])
        try expectAgreement(label, "CascadeLink", [("gadget", gadgets), ("tag", tags)])
    }

    @Test func migrationsKeepTheIndexes() throws {
        try store.write { tx throws in
            for i in 0..<20 { try tx.park(Gadget(id: "g\(i)", color: ["red", "green", "blue"][i % 3], serial: "S\(i)", weight: i * 5)) }
            for i in 0..<6 { try tx.park(DynamicObject(entity: "OldGadget", id: .string("o\(i)"), fields: [("color", .string("teal")), ("weight", .int(Int64(i * 5)))])) }
        }
        try expectGadgetsAgree("typed")
        var migrator = Migrator()
        try migrator.register("red is black") { m in
            try m.transformField("color", in: "Gadget") { $0 == .string("red") ? .string("black") : $0 }
            try m.transformField("weight", in: "Gadget") { value in
                guard case .int(let w)? = value else { return value }
                return .int(w >= 50 ? w - 50 : w)
            }
        }
        try migrator.register("old gadgets join") { m in try m.migrateAll(from: "OldGadget", to: "Gadget") { $0 } }
        #expect(try migrator.migrate(store).count == 2)
        try expectGadgetsAgree("migrated")
        try store.read { tx throws in #expect(try tx.count(Gadget.self) == 26) }
    }

    @Test func undoAndRedoKeepTheIndexes() throws {
        let history = store.enableUndo()
        try store.write { tx throws in
            for i in 0..<20 { try tx.park(Gadget(id: "g\(i)", color: ["red", "green", "blue"][i % 3], serial: "S\(i)", weight: i * 5)) }
        }
        try store.write { tx throws in
            for i in 0..<10 { try tx.park(Gadget(id: "g\(i)", color: "black", serial: "T\(i)", weight: 100 - i)) }
            _ = try tx.delete(Gadget.self, id: "g15")
            try tx.park(Gadget(id: "g25", color: "teal", serial: nil, weight: 25))
        }
        try expectGadgetsAgree("changed")
        #expect(try history.undo())
        try expectGadgetsAgree("undone")
        try store.read { tx throws in #expect(try tx.retrieve(Gadget.self, id: "g3")?.color == "red") }
        #expect(try history.redo())
        try expectGadgetsAgree("redone")
        #expect(try history.undo())
        #expect(try history.undo())
        try expectGadgetsAgree("undone to empty")
        try store.read { tx throws in #expect(try tx.count(Gadget.self) == 0) }
    }

    @Test func deleteRulesKeepTheIndexes() throws {
        store.registerDeleteRule(.nullify, from: RPNullLink.self, via: \.gadget)
        store.registerDeleteRule(.cascade, from: RPCascadeLink.self, via: \.gadget)
        try store.registerCascade(fromCollection: "Box", field: "content")
        try store.write { tx throws in
            for i in 0..<20 { try tx.park(Gadget(id: "g\(i)", color: ["red", "green", "blue"][i % 3], serial: "S\(i)", weight: i * 5)) }
            for i in 0..<40 {
                try tx.park(RPNullLink(id: "n\(i)", gadget: Reference(id: "g\(i % 20)"), tag: i % 2 == 0 ? "a" : "b"))
                try tx.park(RPCascadeLink(id: "c\(i)", gadget: Reference(id: "g\(i % 20)"), tag: i % 2 == 0 ? "a" : "b"))
            }
            for i in 0..<3 {
                try tx.park(DynamicObject(entity: "Box", id: .string("box\(i)"), fields: [("content", .reference(collection: "Gadget", id: .string("g1\(i)")))]))
            }
        }
        try expectGadgetsAgree("parked")
        try expectLinksAgree("parked")
        try store.write { tx throws in
            for i in [0, 1, 2, 5] { #expect(try tx.delete(Gadget.self, id: "g\(i)")) }
        }
        try expectGadgetsAgree("gadgets deleted")
        try expectLinksAgree("nullified and cascaded")
        try store.read { tx throws in
            #expect(try tx.count(RPCascadeLink.self) == 32)
            #expect(try tx.fetch(FetchRequest<RPNullLink>()).filter { $0.gadget == nil }.count == 8)
        }
        // The owner cascade: deleting a box deletes the gadget it holds, and that gadget's links.
        try store.write { tx throws in #expect(try tx.delete(DynamicObject(entity: "Box", id: "box0"))) }
        try expectGadgetsAgree("owner cascade")
        try expectLinksAgree("owner cascade")
        try store.read { tx throws in #expect(try tx.retrieve(Gadget.self, id: "g10") == nil) }
    }

    @Test func theKeyValueKitLeavesTheIndexesAlone() throws {
        try store.write { tx throws in
            for i in 0..<20 { try tx.park(Gadget(id: "g\(i)", color: ["red", "green", "blue"][i % 3], serial: "S\(i)", weight: i * 5)) }
        }
        let kv = store.keyValue()
        for i in 0..<30 { kv.set("value \(i)", forKey: "k\(i)") }
        try kv.save()
        try kv.deletePermanently("k3")
        try expectGadgetsAgree("key/value entries saved")
        try kv.removeAllPermanently()
        try expectGadgetsAgree("key/value entries removed")
        try store.read { tx throws in #expect(try tx.count(Gadget.self) == 20) }
    }
}

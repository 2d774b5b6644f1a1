// Cargo's names (Sources/DepotCore/Compatibility/Cargo.swift): each forward is called by its
// Cargo name and checked against the Depot call it forwards to, on a store over a Cargo-style
// storage engine (KPDictionaryEngine of KitsPortTests.swift).

import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

@Suite("Compatibility: Cargo")
struct CargoCompatibilityTests {
    let store: Store
    init() throws { store = try Store(driver: SimpleBackendDriver(backend: KPDictionaryEngine())) }

    private func object(_ id: String, _ firstname: String) -> DynamicObject {
        var object = DynamicObject(entity: "MyObject", id: .string(id))
        object.setValue(.string(firstname), forKey: "firstname")
        return object
    }

    @Test func saveForwardsToPark() throws {
        let wess = object("me", "Wess")
        let revision = try store.write { tx in try tx.save(wess) }
        #expect(revision == 1, "a new record, as park reports")
        let stored = try #require(try store.read { try $0.retrieve(dynamic: "MyObject", id: "me") })
        #expect(stored.id == .string("me") && stored.firstname == .string("Wess"))
        #expect(try store.write { tx in try tx.save(wess) } == 2, "saved again: the next revision")
        #expect(try store.write { tx in try tx.park(wess) } == 3, "save and park write the same record")
    }

    @Test func fetchEntityForwardsToRetrieveAllDynamic() throws {
        try store.write { tx throws in
            try tx.save(object("a", "Ann"))
            try tx.save(object("b", "Bea"))
        }
        try store.read { tx throws in
            let all = try tx.fetch(entity: "MyObject")
            #expect(all == (try tx.retrieveAll(dynamic: "MyObject")))
            #expect(all.map { $0.value(forKey: "firstname") } == [.string("Ann"), .string("Bea")], "fetch returns all results")
            #expect(try tx.fetch(entity: "Nothing").isEmpty)
        }
    }

    @Test func deleteEntityForwardsToDeleteCollection() throws {
        try store.write { tx throws in
            try tx.save(object("a", "Ann"))
            try tx.save(object("b", "Bea"))
            try tx.save(DynamicObject(entity: "Other", id: "x"))
        }
        #expect(try store.write { try $0.delete(entity: "MyObject") } == 2, "delete removes them all")
        try store.read { tx throws in
            #expect(try tx.fetch(entity: "MyObject").isEmpty)
            #expect(try tx.fetch(entity: "Other").count == 1, "other entities stay")
            #expect(try tx.collections().contains("MyObject"), "the collection stays known, as deleteCollection leaves it")
        }
    }

    @Test func valueForKeyForwardsToDynamicMember() {
        var wess = DynamicObject(entity: "MyObject")
        wess.setValue(.string("Wess"), forKey: "firstname")
        #expect(wess.firstname == .string("Wess"), "set by Cargo's name, read by property")
        wess.lastname = .string("Cope")
        #expect(wess.value(forKey: "lastname") == .string("Cope"), "set by property, read by Cargo's name")
        #expect(wess.value(forKey: "missing") == nil)
        wess.setValue(nil, forKey: "firstname")
        #expect(wess.firstname == nil && wess.fields.count == 1, "nil removes the field")
    }

    @Test func revertToLastForwardsToUndo() throws {
        let history = store.enableUndo()
        try store.write { tx in try tx.save(object("me", "first")) }
        try store.write { tx in try tx.save(object("me", "second")) }
        #expect(try history.revertToLast())
        #expect(try store.read { try $0.retrieve(dynamic: "MyObject", id: "me") }?.firstname == .string("first"))
        #expect(history.canRedo, "a revert is an undo: it can be redone")
        #expect(try history.revertToLast())
        #expect(try history.revertToLast() == false, "nothing left to revert")
    }
}

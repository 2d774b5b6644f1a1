// GarageStorage's names (Sources/DepotCore/Compatibility/GarageStorage.swift): each forward is
// called by its GarageStorage name and checked against the Depot call it forwards to.

import DepotLMDB
import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

/// A top-level GarageStorage object, declared with GarageStorage's protocol names.
private struct GCPerson: Mappable, Syncable, Equatable {
    var id: String { name }
    var name: String
    var age: Int
    var syncStatus: SyncStatus = .notSynced
    private enum CodingKeys: String, CodingKey { case name, age }
}

private struct GCPet: Mappable, Equatable {
    var id: Int
    var name: String
}

@Suite("Compatibility: GarageStorage")
struct GarageStorageCompatibilityTests {
    let folder = TemporaryFolder("gs-compat")
    let store: Store
    init() throws { store = try Store(path: folder.sub("store")) }

    private let sam = GCPerson(name: "Sam", age: 31)
    private let nick = GCPerson(name: "Nick", age: 29, syncStatus: .syncing)
    private let emily = GCPerson(name: "Emily", age: 27, syncStatus: .synced)

    /// Generic code written against GarageStorage's protocol name.
    private func parkMappable<M: Mappable>(_ object: M) throws { try store.park(object) }

    @Test func mappableIsDocument() throws {
        try parkMappable(sam)
        #expect(try store.retrieve(GCPerson.self, id: "Sam") == sam)
        #expect(GCPerson.collection == "GCPerson", "a Mappable type is a Document with its collection")
    }

    @Test func isAutosaveEnabledForwardsToAutosave() throws {
        #expect(store.isAutosaveEnabled && store.autosave)
        store.isAutosaveEnabled = false
        #expect(!store.autosave, "setting the GarageStorage name sets Depot's")
        try store.park(sam)
        #expect(store.hasUnsavedChanges, "autosave off: the park waits for save()")
        try store.save()
        store.autosave = true
        #expect(store.isAutosaveEnabled, "reading the GarageStorage name reads Depot's")
    }

    @Test func parkAllForwardsToParkOfArray() throws {
        try store.parkAll([sam, nick])
        #expect(try store.retrieveAll(GCPerson.self) == [nick, sam])
        #expect(try store.count(GCPerson.self) == 2)
    }

    @Test func retrieveIdentifierForwardsToRetrieveID() throws {
        try store.park(sam)
        let byGarageName = try store.retrieve(GCPerson.self, identifier: "Sam")
        #expect(byGarageName == sam)
        #expect(byGarageName == (try store.retrieve(GCPerson.self, id: "Sam")))
        #expect(try store.retrieve(GCPerson.self, identifier: "Nobody") == nil)
        try store.park(GCPet(id: 3, name: "Peaches"))
        #expect(try store.retrieve(GCPet.self, identifier: 3)?.name == "Peaches", "an integer identifier")
    }

    @Test func retrieveAllWithStatusForwardsToRetrieveWithSyncStatus() throws {
        try store.parkAll([sam, nick, emily])
        let core = try store.read { try $0.retrieve(GCPerson.self, withSyncStatus: .syncing) }
        #expect(try store.retrieveAll(GCPerson.self, withStatus: .syncing) == core)
        #expect(core.map(\.name) == ["Nick"])
        let inferred: [GCPerson] = try store.retrieveAll(withStatus: .synced)
        #expect(inferred.map(\.name) == ["Emily"])
        #expect(try store.retrieveAll(GCPerson.self, withStatus: .undetermined).isEmpty)
    }

    @Test func syncStatusForForwardsToSyncStatusOfID() throws {
        try store.park(nick)
        #expect(try store.syncStatus(for: nick) == .syncing)
        #expect(try store.syncStatus(for: nick) == (try store.syncStatus(of: GCPerson.self, id: "Nick")))
        #expect(try store.syncStatus(for: sam) == nil, "not stored: nil where GarageStorage threw")
    }

    @Test func setSyncStatusForArrayForwardsToSetSyncStatusIDs() throws {
        try store.parkAll([sam, nick])
        try store.setSyncStatus(.synced, for: [sam, nick])
        #expect(try store.syncStatus(of: GCPerson.self, id: "Sam") == .synced)
        #expect(try store.syncStatus(of: GCPerson.self, id: "Nick") == .synced)
        let error = #expect(throws: DepotError.self) { try store.setSyncStatus(.notSynced, for: [sam, emily]) }
        #expect(error?.code == .notStored && error?.id == "Emily")
        #expect(try store.syncStatus(of: GCPerson.self, id: "Sam") == .synced, "all or nothing: Sam is unchanged")
    }

    @Test func deleteAllObjectsForwardsToDeleteEverything() throws {
        try store.parkAll([sam, nick])
        try store.park(GCPet(id: 3, name: "Peaches"))
        try store.deleteAllObjects()
        #expect(try store.count(GCPerson.self) == 0)
        #expect(try store.count(GCPet.self) == 0)
    }

    // MARK: Objective-C era names

    @Test func objectNamesForwardToParkRetrieveDelete() throws {
        try store.parkObject(sam)
        #expect(try store.retrieve(GCPerson.self, id: "Sam") == sam)
        #expect(try store.retrieveObject(GCPerson.self, identifier: "Sam") == sam)
        #expect(try store.retrieveObject(GCPerson.self, identifier: "Nick") == nil)
        try store.parkObject(nick)
        #expect(try store.retrieveAllObjects(GCPerson.self) == (try store.retrieveAll(GCPerson.self)))
        try store.deleteObject(sam)
        #expect(try store.retrieve(GCPerson.self, id: "Sam") == nil)
        let error = #expect(throws: DepotError.self) { try store.deleteObject(sam) }
        #expect(error?.code == .notStored, "deleting what is not stored throws, as GarageStorage's deleteObject did")
    }

    @Test func deleteAllObjectsOfTypeForwardsToDeleteAll() throws {
        try store.parkAll([sam, nick])
        try store.park(GCPet(id: 3, name: "Peaches"))
        try store.deleteAllObjects(GCPerson.self)
        #expect(try store.retrieveAll(GCPerson.self).isEmpty)
        #expect(try store.count(GCPet.self) == 1, "other types stay")
    }
}

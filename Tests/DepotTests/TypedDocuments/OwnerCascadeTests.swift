// Owner-side cascades (registerCascade) with undo and redo, deleteAll and deleteEverything,
// observers, aliases, the unit of work and failed deletes; DLData's "<uniqueID>" seed marker and
// bundleResource links. (First written as a review's reproductions.)

import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

struct OCNode: Document, Equatable {
    var id: String
    var children: [Reference<OCNode>] = []
}

struct OCItem: Document, Equatable {
    var id: String
    var label: String = ""
}

struct OCOwner: Document, Equatable {
    var id: String
    var items: [Reference<OCItem>] = []
}

struct OCRenamedOwner: Document, Equatable {
    var id: String
    var items: [Reference<OCItem>] = []
    enum CodingKeys: String, CodingKey { case id, items = "itemList" }
}

struct OCEager: Document, Equatable {
    var id: String
    var item: OCItem
}

struct OCBadged: Document {
    static var collection: String { "Badged" }
    var id: String
    var badge: String
    enum CodingKeys: String, CodingKey { case id = "badgedID", badge }
}

@Suite("Deletes with rules where there are no savepoints")
struct DeleteRulesWithoutSavepointsTests {
    /// A driver without savepoints (JSONFileDriver) and LMDB with `writeMap` (no child
    /// transactions) delete with rules as before: no savepoint is asked for.
    @Test func aDriverWithoutSavepointsAndWriteMap() throws {
        let folder = TemporaryFolder()
        var options = StoreOptions()
        options.environment.unsafeDurability = [.writeMap]
        let stores = [
            try Store(driver: JSONFileDriver(folder: URL(fileURLWithPath: folder.sub("json")))),
            try Store(path: folder.sub("writemap"), options: options),
        ]
        #expect(!stores[1].capabilities.contains(.savepoints), "LMDB with writeMap has no child transactions")
        for store in stores {
            store.registerCascade(from: OCOwner.self, via: \.items)
            try store.write { tx in
                try tx.park(OCItem(id: "i1"))
                try tx.park(OCItem(id: "i2"))
                try tx.park(OCOwner(id: "o", items: [Reference(id: "i1")]))
                try tx.park(OCOwner(id: "p", items: [Reference(id: "i2")]))
            }
            try store.delete(OCOwner.self, id: "o")
            #expect(try store.read { try $0.retrieveAll(OCItem.self) }.map(\.id) == ["i2"])
            #expect(try store.write { tx in try tx.deleteAll(OCOwner.self) } == 1)
            #expect(try store.read { try $0.count(OCItem.self) } == 0)
        }
    }
}

@Suite("Owner-side cascades, undo, unit of work and DLData seed markers")
struct OwnerCascadeAndSeedMarkerTests {
    let folder = TemporaryFolder()
    let store: Store
    init() throws { store = try Store(path: folder.path) }

    /// Undoing the creation of an owner must not delete documents that existed before.
    @Test func UndoOfCreatingAnOwnerKeepsPreexistingOwned() throws {
        store.registerCascade(from: OCOwner.self, via: \.items)
        try store.write { tx in try tx.park(OCItem(id: "i1")); try tx.park(OCItem(id: "i2")) }
        let history = store.enableUndo()
        try store.write { tx in try tx.park(OCOwner(id: "o", items: [Reference(id: "i1"), Reference(id: "i2")])) }
        #expect(try history.undo())
        try store.read { tx throws in
            #expect(try tx.exists(OCOwner.self, id: "o") == false)
            #expect(try tx.count(OCItem.self) == 2, "items existed before the undone step")
        }
    }

    /// Undo/redo of a cascaded delete.
    @Test func UndoRedoCascadedDelete() throws {
        store.registerCascade(from: OCOwner.self, via: \.items)
        try store.write { tx in
            try tx.park(OCItem(id: "i1")); try tx.park(OCItem(id: "i2"))
            try tx.park(OCOwner(id: "o", items: [Reference(id: "i1"), Reference(id: "i2")]))
        }
        let history = store.enableUndo()
        try store.delete(OCOwner.self, id: "o")
        #expect(try store.read { try $0.count(OCItem.self) } == 0)
        #expect(try history.undo())
        #expect(try store.read { try $0.count(OCItem.self) } == 2)
        #expect(try history.redo())
        #expect(try store.read { try $0.count(OCItem.self) } == 0)
        #expect(try history.undo())
        #expect(try store.read { try $0.count(OCItem.self) } == 2)
    }

    /// deleteAll reports how many it deleted: with a tree in one collection.
    @Test func DeleteAllCountWithSelfOwnership() throws {
        store.registerCascade(from: OCNode.self, via: \.children)
        try store.write { tx in
            try tx.park(OCNode(id: "a", children: [Reference(id: "b"), Reference(id: "c")]))
            try tx.park(OCNode(id: "b"))
            try tx.park(OCNode(id: "c"))
        }
        let n = try store.write { tx in try tx.deleteAll(OCNode.self) }
        #expect(n == 3, "three documents were deleted")
        #expect(try store.read { try $0.count(OCNode.self) } == 0)
    }

    /// deleteAll with owned docs in another collection: recorded, undoable.
    @Test func DeleteAllCascadesAndNotifies() throws {
        store.registerCascade(from: OCOwner.self, via: \.items)
        try store.write { tx in
            try tx.park(OCItem(id: "i1")); try tx.park(OCItem(id: "i2")); try tx.park(OCItem(id: "keep"))
            try tx.park(OCOwner(id: "o", items: [Reference(id: "i1"), Reference(id: "i2")]))
        }
        let observer = OCObserver()
        store.addObserver(observer)
        try store.write { tx in _ = try tx.deleteAll(OCOwner.self) }
        #expect(try store.read { try $0.count(OCItem.self) } == 1)
        let set = try #require(observer.sets.last)
        #expect(set.deleted(OCItem.self).sorted() == ["i1", "i2"])
        #expect(set.deleted(OCOwner.self) == ["o"])
    }

    /// deleteEverything with cascades.
    @Test func DeleteEverything() throws {
        store.registerCascade(from: OCOwner.self, via: \.items)
        try store.write { tx in
            try tx.park(OCItem(id: "i1")); try tx.park(OCItem(id: "i2"))
            try tx.park(OCOwner(id: "o", items: [Reference(id: "i1"), Reference(id: "i2")]))
        }
        let n = try store.write { tx in try tx.deleteEverything() }
        #expect(n == 3)
    }

    /// Autosave off: the cascade happens at save().
    @Test func UnitOfWorkCascadeVisibility() throws {
        store.registerCascade(from: OCOwner.self, via: \.items)
        try store.write { tx in
            try tx.park(OCItem(id: "i1"))
            try tx.park(OCOwner(id: "o", items: [Reference(id: "i1")]))
        }
        store.autosave = false
        try store.delete(OCOwner.self, id: "o")
        #expect(try store.exists(OCOwner.self, id: "o") == false)
        // Delete rules run when save() applies the delete: until then the owned item still reads.
        #expect(try store.exists(OCItem.self, id: "i1"))
        try store.save()
        #expect(try store.exists(OCItem.self, id: "i1") == false)
    }

    /// Autosave off: delete an owner parked only in the unit of work, whose item is parked too.
    @Test func UnitOfWorkDeleteParked() throws {
        store.registerCascade(from: OCOwner.self, via: \.items)
        store.autosave = false
        try store.park(OCItem(id: "i1"))
        try store.park(OCOwner(id: "o", items: [Reference(id: "i1")]))
        try store.delete(OCOwner.self, id: "o")
        try store.save()
        #expect(try store.exists(OCItem.self, id: "i1") == false)
    }

    /// Eager (Document-typed) property.
    @Test func EagerCascade() throws {
        store.registerCascade(from: OCEager.self, via: \.item)
        try store.write { tx in try tx.park(OCEager(id: "e", item: OCItem(id: "x"))) }
        #expect(try store.read { try $0.exists(OCItem.self, id: "x") })
        try store.delete(OCEager.self, id: "e")
        #expect(try store.read { try $0.exists(OCItem.self, id: "x") } == false)
    }

    /// A renamed coding key: the key path names the Swift property, so the stored field is
    /// given by name (as for indexes on renamed keys).
    @Test func renamedKeyThroughTheStoredFieldName() throws {
        try store.registerCascade(fromCollection: OCRenamedOwner.collection, field: "itemList")
        try store.write { tx in
            try tx.park(OCItem(id: "i1"))
            try tx.park(OCRenamedOwner(id: "o", items: [Reference(id: "i1")]))
        }
        try store.delete(OCRenamedOwner.self, id: "o")
        #expect(try store.read { try $0.exists(OCItem.self, id: "i1") } == false)
    }

    /// Cascade in another alias.
    @Test func AliasCascade() throws {
        store.registerCascade(from: OCOwner.self, via: \.items)
        let other = try store.alias("B")
        try other.write { tx in
            try tx.park(OCItem(id: "i1"))
            try tx.park(OCOwner(id: "o", items: [Reference(id: "i1")]))
        }
        try store.write { tx in try tx.park(OCItem(id: "i1")) }
        try other.delete(OCOwner.self, id: "o")
        #expect(try other.read { try $0.exists(OCItem.self, id: "i1") } == false)
        #expect(try store.read { try $0.exists(OCItem.self, id: "i1") }, "default alias untouched")
    }

    // MARK: Seeds

    private func write(_ files: [String: String], in root: URL) throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        for (name, text) in files { try Data(text.utf8).write(to: root.appendingPathComponent(name)) }
    }

    /// The same object (same ID) in two files, with a "<uniqueID>" property: stored once.
    @Test func UniqueIDPropertyDuplicateObject() throws {
        let root = URL(fileURLWithPath: folder.sub("dup"))
        try write([
            "Main.json": #"{"seedlings": [{"seedFile": "A.json"}, {"seedFile": "B.json"}]}"#,
            "A.json": #"{"Employee": {"employeeID": "e1", "badge": "<uniqueID>"}}"#,
            "B.json": #"{"Employee": {"employeeID": "e1", "badge": "<uniqueID>"}}"#,
        ], in: root)
        let summary = try store.seed(from: root.appendingPathComponent("Main.json"))
        #expect(summary.documentsPerCollection == ["Employee": 1])
    }

    /// A registered type whose "<uniqueID>" property is a String.
    @Test func UniqueIDIntoStringProperty() throws {
        store.registerSeedType(OCBadged.self)
        let root = URL(fileURLWithPath: folder.sub("typed"))
        try write(["Main.json": #"{"Badged": {"badgedID": "<uniqueID>", "badge": "<uniqueID>"}}"#], in: root)
        let summary = try store.seed(from: root.appendingPathComponent("Main.json"))
        #expect(summary.documentsPerCollection == ["Badged": 1])
        let all = try store.read { try $0.fetch(OCBadged.self) }
        #expect(all.count == 1)
    }

    /// Registered type with Int ID.
    @Test func UniqueIDIntID() throws {
        store.registerSeedType(OCIntID.self)
        let root = URL(fileURLWithPath: folder.sub("int"))
        try write(["Main.json": #"{"IntThing": [{"intThingID": "<uniqueID>", "n": "<uniqueID>"}, {"intThingID": "<uniqueID>", "n": 3}]}"#], in: root)
        try store.seed(from: root.appendingPathComponent("Main.json"))
        let all = try store.read { try $0.fetch(OCIntID.self) }
        #expect(all.count == 2)
        // Re-seeding: generated ones again, with new IDs.
        try store.seed(from: root.appendingPathComponent("Main.json"))
        #expect(try store.read { try $0.fetch(OCIntID.self) }.count == 4)
    }

    /// bundleResource://../x: outside the root.
    @Test func BundleResourceTraversal() throws {
        let base = URL(fileURLWithPath: folder.sub("trav"))
        let root = base.appendingPathComponent("seeds")
        try write(["Outside.seed.json": #"{"Leak": {"id": "x"}}"#], in: base)
        try write(["Main.json": #"{"seedlings": [{"seedUrl": "bundleResource://../Outside.seed"}]}"#,
                   "Abs.json": #"{"seedlings": [{"seedUrl": "bundleResource:///\#(base.path)/Outside.seed"}]}"#], in: root)
        let error = #expect(throws: DepotError.self) { try store.seed(from: root.appendingPathComponent("Main.json")) }
        #expect(error?.seedProblem == .outsideRoot, "\(String(describing: error))")
        let error2 = #expect(throws: DepotError.self) { try store.seed(from: root.appendingPathComponent("Abs.json")) }
        #expect(error2?.seedProblem == .missingFile, "an absolute name is looked for inside the seed folder: \(String(describing: error2))")
    }

    // MARK: notStored

    @Test func UndoOfStepCreatingOwnerAndItems() throws {
        store.registerCascade(from: OCOwner.self, via: \.items)
        let history = store.enableUndo()
        try store.write { tx in
            try tx.park(OCItem(id: "i1"))
            try tx.park(OCOwner(id: "o", items: [Reference(id: "i1")]))
        }
        #expect(throws: Never.self) { try history.undo() }
        #expect(try store.read { try $0.count(OCItem.self) } == 0)
        #expect(try store.read { try $0.count(OCOwner.self) } == 0)
    }

    @Test func UndoOfEagerPark() throws {
        store.registerCascade(from: OCEager.self, via: \.item)
        let history = store.enableUndo()
        try store.write { tx in try tx.park(OCEager(id: "e", item: OCItem(id: "x"))) }
        #expect(throws: Never.self) { try history.undo() }
        #expect(try store.read { try $0.count(OCItem.self) } == 0)
    }

    @Test func PartialCascadeWithTry() throws {
        store.registerCascade(from: OCOwner.self, via: \.items)
        store.registerDeleteRule(.deny, from: OCHolder.self, via: \.item)
        try store.write { tx in
            try tx.park(OCItem(id: "i1")); try tx.park(OCItem(id: "i2"))
            try tx.park(OCOwner(id: "o", items: [Reference(id: "i1"), Reference(id: "i2")]))
            try tx.park(OCHolder(id: "h", item: Reference(id: "i2")))
        }
        try store.write { tx in _ = try? tx.delete(OCOwner.self, id: "o") }
        #expect(try store.read { try $0.exists(OCOwner.self, id: "o") })
        #expect(try store.read { try $0.exists(OCItem.self, id: "i1") }, "the failed delete changed nothing")
    }

    @Test func SetSyncStatusAllOrNothingAutosaveOff() throws {
        try store.write { tx in try tx.park(OCItem(id: "a")) }
        store.autosave = false
        #expect {  try store.setSyncStatus(.synced, for: OCItem.self, ids: ["a", "zz"]) } throws: { ($0 as? DepotError)?.code == .notStored }
        #expect(store.hasUnsavedChanges == false)
        #expect {  try store.delete(OCItem.self, id: "zz") } throws: { ($0 as? DepotError)?.code == .notStored }
        try store.delete(OCItem.self, id: "a")
        #expect {  try store.delete(OCItem.self, id: "a") } throws: { ($0 as? DepotError)?.code == .notStored }
        #expect {  try store.setSyncStatus(.synced, for: OCItem.self, ids: ["a"]) } throws: { ($0 as? DepotError)?.code == .notStored }
    }
}

struct OCIntID: Document {
    static var collection: String { "IntThing" }
    var id: Int
    var n: Int
    enum CodingKeys: String, CodingKey { case id = "intThingID", n }
}

final class OCObserver: StoreObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var _sets: [ChangeSet] = []
    var sets: [ChangeSet] { lock.withLock { _sets } }
    func store(_ store: Store, didCommit changes: ChangeSet) { lock.withLock { _sets.append(changes) } }
}

struct OCHolder: Document {
    var id: String
    var item: Reference<OCItem>?
}

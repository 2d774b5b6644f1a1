// What the original libraries' own tests expect, where a port to Depot found it missing:
// delete rules on properties stored under another coded name (DLData's cascades and denies,
// which Core Data applies whatever the names), unique IDs never handed out twice (DLData's
// generator), an observer told of every commit after it was added (DLData's delegate) and a
// class instance renamed between park and save (GarageStorage's unit of work).

import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

struct PBEmployee: Document, Equatable {
    var id: String
    var name: String = ""
}

/// A badge whose reference is stored under the coded name "owner".
struct PBBadge: Document {
    var id: String
    var holder: Reference<PBEmployee>
    enum CodingKeys: String, CodingKey { case id, holder = "owner" }
}

/// A team whose members are stored under the coded name "staff".
struct PBTeam: Document {
    var id: String
    var members: [Reference<PBEmployee>] = []
    enum CodingKeys: String, CodingKey { case id, members = "staff" }
}

/// A class document identified by a stored property that can change.
final class PBPerson: Document, @unchecked Sendable {
    var id: String { name }
    var name: String
    var age: Int
    init(name: String, age: Int) {
        self.name = name
        self.age = age
    }
    private enum CodingKeys: String, CodingKey { case name, age }
}

/// Records every change set it is given.
final class PBRecorder: StoreObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var sets: [ChangeSet] = []
    func store(_ store: Store, didCommit changes: ChangeSet) { lock.withLock { sets.append(changes) } }
    var count: Int { lock.withLock { sets.count } }
}

private struct Boom: Error {}

@Suite("Ports: behaviour the original libraries' tests expect")
struct PortedBehaviourTests {
    let folder = TemporaryFolder()

    @Test func aDenyRuleOnARenamedFieldFailsTheDeleteInsteadOfIgnoringIt() throws {
        let store = try Store(path: folder.path)
        try store.registerDeleteRule(.deny, from: PBBadge.self, via: \.holder)
        let ada = PBEmployee(id: "a", name: "Ada")
        try store.write { tx in
            try tx.park(ada)
            try tx.park(PBBadge(id: "b", holder: Reference(ada)))
        }
        let error = #expect(throws: DepotError.self) { try store.delete(ada) }
        #expect(error?.code == .invalidDeleteRule)
        #expect(error?.message.contains("field:") == true)
        #expect(try store.read { try $0.exists(PBEmployee.self, id: "a") })
    }

    @Test func aDenyRuleWithTheCodedFieldDenies() throws {
        let store = try Store(path: folder.path)
        try store.registerDeleteRule(.deny, from: PBBadge.self, via: \.holder, field: "owner")
        let ada = PBEmployee(id: "a", name: "Ada")
        try store.write { tx in
            try tx.park(ada)
            try tx.park(PBBadge(id: "b", holder: Reference(ada)))
            try tx.park(PBEmployee(id: "free"))
        }
        let error = #expect(throws: DepotError.self) { try store.delete(ada) }
        #expect(error?.code == .deleteDenied)
        try store.delete(PBEmployee.self, id: "free")
        #expect(try store.read { try $0.exists(PBEmployee.self, id: "free") } == false)
    }

    @Test func aCascadeOnARenamedFieldFailsTheDeleteUnlessGivenTheCodedField() throws {
        let store = try Store(path: folder.path)
        store.registerCascade(from: PBTeam.self, via: \.members)
        try store.write { tx in
            try tx.park(PBEmployee(id: "e1"))
            try tx.park(PBTeam(id: "t", members: [Reference(id: "e1")]))
        }
        let error = #expect(throws: DepotError.self) { try store.delete(PBTeam.self, id: "t") }
        #expect(error?.code == .invalidDeleteRule)
        #expect(try store.read { try $0.exists(PBTeam.self, id: "t") && $0.exists(PBEmployee.self, id: "e1") })

        let other = try Store(path: TemporaryFolder().path)
        other.registerCascade(from: PBTeam.self, via: \.members, field: "staff")
        try other.write { tx in
            try tx.park(PBEmployee(id: "e1"))
            try tx.park(PBTeam(id: "t", members: [Reference(id: "e1")]))
        }
        try other.delete(PBTeam.self, id: "t")
        #expect(try other.read { try $0.exists(PBEmployee.self, id: "e1") } == false)
    }

    @Test func aUniqueIDOfARolledBackTransactionIsNotHandedOutAgain() throws {
        let store = try Store(path: folder.path)
        var inside: UInt64 = 0
        #expect(throws: Boom.self) {
            try store.write { tx -> Void in
                inside = try tx.nextUniqueID()
                throw Boom()
            }
        }
        let next = try store.uniqueIDs.next()
        #expect(next > inside)
        let again = try store.write { tx in try tx.nextUniqueID() }
        #expect(again > inside && again != next)
    }

    @Test func anObserverAddedWhileAnExplicitTransactionIsOpenHearsItsCommit() throws {
        let store = try Store(path: folder.path)
        let tx = try store.beginTransaction()
        try tx.park(PBEmployee(id: "x"))
        let recorder = PBRecorder()
        store.addObserver(recorder)
        try tx.commit()
        #expect(recorder.count == 1)
    }

    @Test func aClassInstanceRenamedBetweenParkAndSaveFailsTheSave() throws {
        let store = try Store(path: folder.path)
        store.autosave = false
        let nick = PBPerson(name: "Nick", age: 26)
        try store.park(nick)
        nick.name = "Nicholas"
        let error = #expect(throws: DepotError.self) { try store.save() }
        #expect(error?.code == .invalidKey)
        #expect(error?.message.contains("Nick") == true)
        #expect(store.hasUnsavedChanges)
        try store.park(nick) // parked again under its new ID: both are in the unit of work
        store.rollback()
        try store.park(nick)
        try store.save()
        #expect(try store.read { try $0.retrieve(PBPerson.self, id: "Nicholas")?.age } == 26)
        #expect(try store.read { try $0.exists(PBPerson.self, id: "Nick") } == false)
    }
}

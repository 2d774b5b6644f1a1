import Foundation
import Testing
import DepotTestSupport
@testable import Depot
@testable import DepotCore
import DepotLMDB

private struct Boom: Error {}

func sampleEmployee(_ id: String, salary: Int = 100, department: Department? = nil) -> Employee {
    Employee(id: id, name: "Employee \(id)", salary: salary, address: Address(street: "Street \(id)", zip: "0\(id)"), department: department)
}

@Suite("Documents")
struct DocumentTests {
    let folder = TemporaryFolder()
    let store: Store

    init() throws { store = try Store(path: folder.path) }

    @Test func parkRetrieveCountExistsDelete() throws {
        try store.write { tx throws in
            try tx.park(sampleEmployee("e1"))
            try tx.park([sampleEmployee("e2"), sampleEmployee("e3")])
        }
        try store.read { tx throws in
            #expect(try tx.retrieve(Employee.self, id: "e2") == sampleEmployee("e2"))
            #expect(try tx.retrieve(Employee.self, id: "nope") == nil)
            #expect(try tx.count(Employee.self) == 3)
            #expect(try tx.exists(Employee.self, id: "e3"))
            #expect(try tx.retrieveAll(Employee.self).map(\.id) == ["e1", "e2", "e3"])
        }
        try store.write { tx throws in
            #expect(try tx.delete(sampleEmployee("e1")))
            #expect(try tx.delete(Employee.self, id: "e1") == false)
            #expect(try tx.delete(Employee.self, id: "e2"))
        }
        #expect(try store.retrieveAll(Employee.self).map(\.id) == ["e3"])
        try store.write { tx throws in #expect(try tx.deleteAll(Employee.self) == 1) }
        #expect(try store.count(Employee.self) == 0)
    }

    @Test func upsertReplacesAndCountsRevisions() throws {
        try store.write { tx throws in
            #expect(try tx.park(sampleEmployee("e1", salary: 1)) == 1)
            #expect(try tx.park(sampleEmployee("e1", salary: 2)) == 2)
        }
        #expect(try store.retrieve(Employee.self, id: "e1")?.salary == 2)
        #expect(try store.count(Employee.self) == 1)
        #expect(try store.read { try $0.revision(of: Employee.self, id: "e1") } == 2)
    }

    @Test func integerIDsSortNumerically() throws {
        let ids: [Int64] = [10, -5, 0, 1_000_000, -1_000_000, 2, Int64.max, Int64.min]
        try store.write { tx in for id in ids { try tx.park(Counter(id: id, value: Int(truncatingIfNeeded: id))) } }
        #expect(try store.retrieveAll(Counter.self).map(\.id) == ids.sorted())
        try store.write { tx in for id in [200, 3, 17] as [UInt8] { try tx.park(Small(id: id, label: "\(id)")) } }
        #expect(try store.retrieveAll(Small.self).map(\.id) == [3, 17, 200])
        let u = UUID()
        try store.write { tx in try tx.park(Tagged(id: u, tags: ["x"])) }
        #expect(try store.retrieve(Tagged.self, id: u)?.tags == ["x"])
        #expect(try store.read { try $0.collections() }.contains("tagged-things"))
    }

    @Test func referencesAreStoredSeparatelyAndResolved() throws {
        let sales = Department(id: "d1", name: "Sales")
        var e = sampleEmployee("e1", department: sales)
        e.mentors = [Department(id: "d2", name: "Research"), sales]
        e.byRole = ["lead": Department(id: "d3", name: "Ops")]
        try store.write { tx in try tx.park(e) }
        #expect(try store.count(Department.self) == 3, "children are their own records")
        // A change to a child is seen by every parent.
        try store.write { tx in try tx.park(Department(id: "d1", name: "Sales & Marketing")) }
        let loaded = try #require(try store.retrieve(Employee.self, id: "e1"))
        #expect(loaded.department?.name == "Sales & Marketing")
        #expect(loaded.mentors.map(\.name) == ["Research", "Sales & Marketing"])
        #expect(loaded.byRole["lead"]?.name == "Ops")
        // Deleting the parent leaves the children.
        try store.write { tx in _ = try tx.delete(loaded) }
        #expect(try store.count(Department.self) == 3)
    }

    @Test func danglingReferenceNamesParentAndChild() throws {
        try store.write { tx in try tx.park(sampleEmployee("e1", department: Department(id: "gone", name: "x"))) }
        try store.write { tx in _ = try tx.delete(Department.self, id: "gone") }
        let error = #expect(throws: DepotError.self) { _ = try store.retrieve(Employee.self, id: "e1") }
        #expect(error == .danglingReference(parentCollection: "Employee", parentID: "e1", childCollection: "Department", childID: "gone"))
    }

    @Test func unidentifiedDocumentsAreKeyedByContent() throws {
        try store.write { tx throws in
            let k1 = try tx.park(unidentified: Note(text: "hi", stars: 1))
            let k2 = try tx.park(unidentified: Note(text: "hi", stars: 1))
            #expect(k1 == k2)
            #expect(k1.count == 64)
            try tx.park(unidentified: Note(text: "hi", stars: 2)) // a changed copy is a second record
        }
        let notes = try store.read { try $0.retrieveAll(unidentified: Note.self) }
        #expect(notes.count == 2)
        #expect(Set(notes.map(\.stars)) == [1, 2])
        try store.write { tx throws in #expect(try tx.delete(unidentified: Note(text: "hi", stars: 1))) }
        #expect(try store.read { try $0.retrieveAll(unidentified: Note.self) } == [Note(text: "hi", stars: 2)])
    }

    @Test func everyCodableShapeRoundTrips() throws {
        let value = Everything(id: "all")
        try store.write { tx in try tx.park(value) }
        let back = try #require(try store.retrieve(Everything.self, id: "all"))
        #expect(back == value)
        try store.write { tx in try tx.park(Kennel(id: 1, dog: Dog(name: "Rex", breed: "Collie"))) }
        let kennel = try #require(try store.retrieve(Kennel.self, id: 1))
        #expect(kennel.dog.name == "Rex")
        #expect(kennel.dog.breed == "Collie")
    }

    @Test func invalidIDsAreClearErrors() throws {
        let empty = #expect(throws: DepotError.self) { try store.write { tx in try tx.park(sampleEmployee("")) } }
        #expect(empty?.description.contains("empty") == true)
        let long = #expect(throws: DepotError.self) {
            try store.write { tx in try tx.park(sampleEmployee(String(repeating: "x", count: 600))) }
        }
        #expect(long?.description.contains("600 bytes") == true)
        #expect(try store.count(Employee.self) == 0)
    }

    @Test func wrongTypeErrorNamesCollectionIDAndFieldPath() throws {
        struct EmployeeV2: Document {
            static var collection: String { "Employee" }
            var id: String
            var name: String
            var salary: String // was Int
        }
        try store.write { tx in try tx.park(sampleEmployee("e9")) }
        let error = #expect(throws: DepotError.self) { _ = try store.retrieve(EmployeeV2.self, id: "e9") }
        guard let error, error.code == .decodingFailed else {
            Issue.record("expected decodingFailed, got \(String(describing: error))")
            return
        }
        #expect(error.alias == "default" && error.collection == "Employee" && error.id == "e9" && error.fieldPath == "salary")
        struct Wrong: Document { static var collection: String { "Employee" }; var id: Int }
        #expect(throws: DepotError.idKindMismatch(alias: "default", collection: "Employee", stored: .string, requested: .signed)) {
            _ = try store.retrieve(Wrong.self, id: 1)
        }
    }

    @Test func flippedByteIsReportedNotDecoded() throws {
        try store.write { tx in try tx.park(sampleEmployee("e1")) }
        try damageStoredRecord(store, collection: "Employee", id: "e1", fromEnd: 3)
        #expect(throws: DepotError.checksumMismatch(alias: "default", collection: "Employee", id: "e1")) {
            _ = try store.retrieve(Employee.self, id: "e1")
        }
    }
}

struct Node: Document, Equatable {
    var id: Int
    var next: [Node]
}

@Suite("Reference cycles")
struct ReferenceCycleTests {
    /// Node 1 is being parked when its grandchild (Node 1 again) is met: stored, the records would
    /// form a cycle 1 → 2 → 1 that no read resolves. The park was accepted and every later read
    /// failed; the park is refused now, naming the chain, and nothing is stored.
    @Test func aCycleOfEagerReferencesIsRefusedWhenParked() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let error = #expect(throws: DepotError.self) {
            try store.write { tx in
                try tx.park(Node(id: 1, next: [Node(id: 2, next: [Node(id: 1, next: [])])]))
            }
        }
        guard let error, error.code == .referenceCycle else {
            Issue.record("expected referenceCycle, got \(String(describing: error))")
            return
        }
        #expect(error.message == "reference cycle: Node/1 → Node/2 → Node/1")
        #expect(try store.retrieve(Node.self, id: 1) == nil && store.retrieve(Node.self, id: 2) == nil, "nothing stored")
        // A document referring to itself.
        let own = #expect(throws: DepotError.self) { try store.write { tx in try tx.park(Node(id: 3, next: [Node(id: 3, next: [])])) } }
        #expect(own?.code == .referenceCycle && own?.message == "reference cycle: Node/3 → Node/3")
        // The same child twice (no cycle) is fine.
        try store.write { tx in try tx.park(Node(id: 4, next: [Node(id: 5, next: []), Node(id: 5, next: [])])) }
        #expect(try store.retrieve(Node.self, id: 4)?.next.count == 2)
    }

    /// With autosave off, the same cycle went into the unit of work, and every `save()` then
    /// failed until `rollback()` dropped all unsaved changes: refused when parked.
    @Test func aCycleIsRefusedWhenParkedIntoAUnitOfWork() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        store.autosave = false
        try store.park(Node(id: 9, next: []))
        let error = #expect(throws: DepotError.self) {
            try store.park(Node(id: 1, next: [Node(id: 2, next: [Node(id: 1, next: [])])]))
        }
        #expect(error?.code == .referenceCycle && error?.message == "reference cycle: Node/1 → Node/2 → Node/1", "\(String(describing: error))")
        try store.park(Node(id: 4, next: [Node(id: 5, next: []), Node(id: 5, next: [])])) // a shared child: no cycle
        try store.save()
        #expect(try store.retrieve(Node.self, id: 9) != nil && store.retrieve(Node.self, id: 4)?.next.count == 2)
        #expect(try store.retrieve(Node.self, id: 1) == nil)
    }

    /// A cycle already on disk (written by a version before the park refused it, or by hand)
    /// is still a clear error when read.
    @Test func cycleInStoredDataIsAClearError() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        try store.write { tx in
            try tx.park(Node(id: 2, next: [Node(id: 1, next: [])]))  // 2 → 1
            try tx.park(Node(id: 1, next: []))
        }
        // 1 → 2 written as a document of its own, with the reference to the stored 2.
        try store.write { tx in
            _ = try tx.park(DynamicObject(entity: "Node", id: .int(1), fields: [("id", .int(1)), ("next", .array([.reference(collection: "Node", id: .int(2))]))]))
        }
        let error = #expect(throws: DepotError.self) { _ = try store.retrieve(Node.self, id: 1) }
        guard let error, error.code == .referenceCycle else {
            Issue.record("expected referenceCycle, got \(String(describing: error))")
            return
        }
        #expect(error.message == "reference cycle: Node/1 → Node/2 → Node/1")
    }
}

import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

/// A type whose collection other writers (dynamic objects, seeding) also write.
struct Gadget: Document, Equatable {
    static var collection: String { "Gadget" }
    var id: String
    var color: String
    var serial: String?
    var weight: Int
    static var indexes: [DocumentIndex<Gadget>] {
        [.init(\.color), .init(\.serial, unique: true), .init(\.weight)]
    }
}

/// The same collection declared without the `color` index (as after removing it).
struct GadgetWithoutColorIndex: Document, Equatable {
    static var collection: String { "Gadget" }
    var id: String
    var color: String
    var serial: String?
    var weight: Int
    static var indexes: [DocumentIndex<GadgetWithoutColorIndex>] { [.init(\.serial, unique: true), .init(\.weight)] }
}

/// A coded name that differs from the property name.
struct Renamed: Document {
    var id: String
    var colour: String
    enum CodingKeys: String, CodingKey { case id, colour = "c" }
    static var indexes: [DocumentIndex<Renamed>] { [.init(\.colour)] }
}

struct RenamedWithField: Document {
    static var collection: String { "Renamed2" }
    var id: String
    var colour: String
    enum CodingKeys: String, CodingKey { case id, colour = "c" }
    static var indexes: [DocumentIndex<RenamedWithField>] { [.init(\.colour, field: "c")] }
}

/// A department that is not Equatable (references are compared by their bytes).
struct PlainDepartment: Document {
    var id: String
    var name: String
}

struct PlainEmployee: Document {
    var id: String
    var department: PlainDepartment
}

@Suite("Record pipeline")
struct RecordPipelineTests {
    let folder = TemporaryFolder()
    let store: Store
    init() throws { store = try Store(path: folder.path) }

    /// Every index query answers exactly what a scan answers.
    private func expectIndexesAgreeWithScan(_ label: String) throws {
        try store.read { tx throws in
            let all = try tx.retrieveAll(Gadget.self)
            for color in ["red", "green", "blue", "black"] {
                let viaIndex = try tx.execute(FetchRequest<Gadget>().matching(\.color, .equalTo(color)))
                #expect(viaIndex.plan.usedIndex, "\(label): color index used")
                #expect(viaIndex.documents.map(\.id).sorted() == all.filter { $0.color == color }.map(\.id).sorted(), "\(label): color \(color)")
                let schemaless = try tx.query(collection: "Gadget", conditions: [FieldCondition(field: "color", op: .equal, value: .string(color))])
                #expect(schemaless.plan.usedIndex, "\(label): schemaless query uses the index")
                #expect(schemaless.documents.map { displayID($0.id) }.sorted() == all.filter { $0.color == color }.map(\.id).sorted(),
                        "\(label): schemaless color \(color)")
            }
            let heavy = try tx.execute(FetchRequest<Gadget>().matching(\.weight, .greaterThan(50)))
            #expect(heavy.plan.usedIndex)
            #expect(heavy.documents.map(\.id).sorted() == all.filter { $0.weight > 50 }.map(\.id).sorted(), "\(label): weight range")
            for gadget in all {
                if let serial = gadget.serial {
                    let found = try tx.fetch(FetchRequest<Gadget>().matching(\.serial, .equalTo(serial)))
                    #expect(found.map(\.id) == [gadget.id], "\(label): serial \(serial)")
                }
            }
        }
    }

    @Test func indexesAreRightWhicheverPathWroteTheDocument() throws {
        // Typed parks declare the indexes (and build them).
        try store.write { tx in
            for i in 0..<20 { try tx.park(Gadget(id: "g\(i)", color: ["red", "green", "blue"][i % 3], serial: "S\(i)", weight: i * 5)) }
        }
        try expectIndexesAgreeWithScan("typed")
        // Dynamic objects update and create documents in the same collection.
        try store.write { tx in
            var changed = DynamicObject(entity: "Gadget", id: "g1")
            changed.color = .string("black"); changed.serial = .string("S1"); changed.weight = .int(99)
            try tx.park(changed)
            var fresh = DynamicObject(entity: "Gadget", id: "d1")
            fresh.color = .string("blue"); fresh.weight = .int(7)
            try tx.park(fresh)
            #expect(try tx.delete(DynamicObject(entity: "Gadget", id: "g2")))
        }
        try expectIndexesAgreeWithScan("dynamic")
        // Seeding writes the same collection (an update, a new one).
        let seedFolder = folder.sub("seed")
        try FileManager.default.createDirectory(atPath: seedFolder, withIntermediateDirectories: true)
        let seedFile = URL(fileURLWithPath: seedFolder + "/Main.seed.json")
        try Data(#"{"Gadget": [{"id": "g3", "color": "green", "serial": "S3", "weight": 60}, {"id": "s1", "color": "red", "serial": "X1", "weight": 1}]}"#.utf8).write(to: seedFile)
        try store.seed(from: seedFile)
        try expectIndexesAgreeWithScan("seeded")
        // A unique clash through a dynamic object is refused and changes nothing.
        let clash = #expect(throws: DepotError.self) {
            try store.write { tx in
                var dup = DynamicObject(entity: "Gadget", id: "d2")
                dup.color = .string("red"); dup.serial = .string("S4"); dup.weight = .int(1)
                try tx.park(dup)
            }
        }
        #expect(clash?.code == .uniqueIndexViolation)
        try expectIndexesAgreeWithScan("after a refused write")
        // Typed deletes and deleteAll keep the indexes empty.
        try store.write { tx in _ = try tx.delete(Gadget.self, id: "g4") }
        try expectIndexesAgreeWithScan("typed delete")
    }

    @Test func anIndexRemovedAndAddedAgainIsRebuiltNotTrusted() throws {
        try store.write { tx in for i in 0..<10 { try tx.park(Gadget(id: "g\(i)", color: "red", serial: nil, weight: i)) } }
        // The type no longer declares the color index: the next write drops it...
        try store.write { tx in
            for i in 0..<10 { try tx.park(GadgetWithoutColorIndex(id: "g\(i)", color: i % 2 == 0 ? "green" : "blue", serial: nil, weight: i)) }
        }
        try store.read { tx throws in
            #expect(try tx.query(collection: "Gadget", conditions: [FieldCondition(field: "color", op: .equal, value: .string("red"))]).plan.usedIndex == false)
        }
        // ...and declaring it again rebuilds it from the stored documents.
        try store.write { tx in _ = try tx.count(Gadget.self) }
        try expectIndexesAgreeWithScan("re-added")
        try store.read { tx throws in
            #expect(try tx.fetch(FetchRequest<Gadget>().matching(\.color, .equalTo("red"))).isEmpty)
            #expect(try tx.fetch(FetchRequest<Gadget>().matching(\.color, .equalTo("green"))).count == 5)
        }
    }

    @Test func anIndexWhoseFieldPathDoesNotHoldTheValueIsAnError() throws {
        let error = #expect(throws: DepotError.self) { try store.write { tx in try tx.park(Renamed(id: "r", colour: "red")) } }
        #expect(error?.code == .invalidIndex)
        #expect(error?.message.contains("field:") == true)
        try store.write { tx in try tx.park(RenamedWithField(id: "r", colour: "red")) }
        try store.read { tx throws in
            let found = try tx.execute(FetchRequest<RenamedWithField>().matching(\.colour, .equalTo("red")))
            #expect(found.plan.usedIndex)
            #expect(found.documents.map(\.id) == ["r"])
        }
    }

    @Test func writesThroughAReadTransactionAreTypedErrors() throws {
        let attempts: [(String, (DocumentTransaction) throws -> Void)] = [
            ("park", { _ = try $0.park(Gadget(id: "x", color: "red", serial: nil, weight: 1)) }),
            ("park unidentified", { _ = try $0.park(unidentified: Address(street: "s", zip: "z")) }),
            ("park dynamic", { _ = try $0.park(DynamicObject(entity: "Things", id: "t")) }),
            ("delete", { _ = try $0.delete(Gadget.self, id: "x") }),
            ("deleteAll", { _ = try $0.deleteAll(Gadget.self) }),
            ("deleteCollection", { _ = try $0.deleteCollection("Gadget") }),
            ("setSyncStatus", { _ = try $0.setSyncStatus(.synced, for: Gadget.self, ids: ["x"]) }),
            ("nextUniqueID", { _ = try $0.nextUniqueID() }),
        ]
        for (what, attempt) in attempts {
            let error = #expect(throws: DepotError.self, "\(what)") { try store.read { tx in try attempt(tx) } }
            #expect(error?.code == .readOnlyTransaction, "\(what): \(String(describing: error))")
        }
        // The same after the collection exists.
        try store.write { tx in try tx.park(Gadget(id: "x", color: "red", serial: nil, weight: 1)) }
        for (what, attempt) in attempts {
            let error = #expect(throws: DepotError.self, "\(what), existing") { try store.read { tx in try attempt(tx) } }
            #expect(error?.code == .readOnlyTransaction, "\(what): \(String(describing: error))")
        }
        #expect(try store.read { try $0.retrieve(Gadget.self, id: "x") }?.color == "red")
    }

    @Test func namedRequestsCheckDocumentSubstitutionsAndNeverTrap() throws {
        store.registerFetchRequest("departmentStaff", for: Employee.self, variables: ["department": .document(Department.self), "floor": .int]) { vars in
            let department = try vars.document("department", as: Department.self)
            let floor = try vars["floor", as: Int.self]
            return FetchRequest<Employee>().filter { $0.department?.id == department.id && $0.salary > floor }
        }
        store.registerFetchRequest("undeclared", for: Employee.self) { vars in
            FetchRequest<Employee>().matching(\.name, .equalTo(try vars["name", as: String.self]))
        }
        let sales = Department(id: "d1", name: "Sales")
        try store.write { tx in
            try tx.park(sampleEmployee("e1", salary: 50, department: sales))
            try tx.park(sampleEmployee("e2", salary: 500, department: sales))
            try tx.park(sampleEmployee("e3", salary: 500, department: Department(id: "d2", name: "Ops")))
        }
        try store.read { tx throws in
            let found = try tx.fetch(named: "departmentStaff", as: Employee.self, substitutions: ["department": sales, "floor": 100])
            #expect(found.map(\.id) == ["e2"])
            let missing = #expect(throws: DepotError.self) { _ = try tx.fetch(named: "departmentStaff", as: Employee.self, substitutions: ["floor": 1]) }
            #expect(missing?.code == .missingSubstitution)
            let wrong = #expect(throws: DepotError.self) {
                _ = try tx.fetch(named: "departmentStaff", as: Employee.self, substitutions: ["department": "d1", "floor": 1])
            }
            #expect(wrong?.code == .mistypedSubstitution)
            #expect(wrong?.message.contains("Department") == true)
            let undeclared = #expect(throws: DepotError.self) {
                _ = try tx.fetch(named: "undeclared", as: Employee.self, substitutions: ["name": "Ada"])
            }
            #expect(undeclared?.code == .mistypedSubstitution)
        }
    }

    @Test func referencedDocumentsAreParkedOncePerTransaction() throws {
        let observer = RecordingObserver()
        store.addObserver(observer)
        let sales = Department(id: "sales", name: "Sales")
        let plain = PlainDepartment(id: "p", name: "Plain")
        try store.write { tx in
            for i in 0..<50 {
                try tx.park(sampleEmployee("e\(i)", department: sales))
                try tx.park(PlainEmployee(id: "p\(i)", department: plain))
            }
        }
        try store.read { tx throws in
            #expect(try tx.revision(of: Department.self, id: "sales") == 1, "written once, not 50 times")
            #expect(try tx.revision(of: PlainDepartment.self, id: "p") == 1, "bytes compared for non-Equatable types")
        }
        // A changed department is written again, and parking it directly is not skipped.
        try store.write { tx in
            try tx.park(sampleEmployee("e0", department: sales))
            try tx.park(sampleEmployee("e1", department: Department(id: "sales", name: "Sales & Marketing")))
            try tx.park(Department(id: "sales", name: "Sales"))
            try tx.park(sampleEmployee("e2", department: Department(id: "sales", name: "Sales")))
        }
        try store.read { tx throws in
            #expect(try tx.retrieve(Department.self, id: "sales")?.name == "Sales")
            #expect(try tx.revision(of: Department.self, id: "sales") == 5, "e0, e1 (changed), the direct park, e2 (after the direct park)")
        }
        #expect(observer.sets.first?.created(Department.self) == ["sales"])
    }
}

@Suite("Packed record keys")
struct PackedKeyTests {
    @Test func orderAndBytesMatchTheRawKeys() {
        var generator = SystemRandomNumberGenerator()
        var keys: [[UInt8]] = [[], [0], [0, 0], [1], [255], Array(repeating: 7, count: 16), Array(repeating: 7, count: 17),
                               Array(repeating: 7, count: 16) + [0], Array(repeating: 7, count: 40)]
        for _ in 0..<400 {
            let count = Int.random(in: 0...24, using: &generator)
            keys.append((0..<count).map { _ in UInt8.random(in: 0...3, using: &generator) })
        }
        for a in keys {
            #expect(PackedKey(a).bytes == a)
            #expect(PackedKey(a).withUnsafeBytes { [UInt8]($0) } == a)
            for b in keys.prefix(60) {
                #expect((PackedKey(a) < PackedKey(b)) == a.lexicographicallyPrecedes(b), "\(a) < \(b)")
                #expect((PackedKey(a) == PackedKey(b)) == (a == b), "\(a) == \(b)")
            }
        }
    }
}

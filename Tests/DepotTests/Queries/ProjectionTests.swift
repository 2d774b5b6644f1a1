import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

/// A requirement that `Employee` meets with a stored property: `\P.salary` formed in generic code
/// is a key path to the protocol's (computed) requirement, not to the stored property.
protocol Salaried { var salary: Int { get } }
extension Employee: Salaried {}

/// The projection `field(_:of:)` from generic code: the key path is formed inside.
func salaryInGenericCode<P: Document & Salaried>(_: P.Type, _ tx: DocumentTransaction, _ id: P.ID) throws -> Int? {
    try tx.field(\P.salary, of: id)
}

@Suite("Projections")
struct ProjectionTests {
    @Test func aKeyPathFormedInGenericCodeReadsTheField() throws {
        let people = (0..<50).map { sampleEmployee("g\($0)", salary: 1_000 + $0, department: Department(id: "d", name: "D")) }
        try store.write { tx in for p in people { try tx.park(p) } }
        try store.read { tx throws in
            for p in people { #expect(try salaryInGenericCode(Employee.self, tx, p.id) == p.salary) }
            #expect(try salaryInGenericCode(Employee.self, tx, "nobody") == nil)
        }
    }

    let folder = TemporaryFolder()
    let store: Store
    init() throws { store = try Store(path: folder.path) }

    @Test func fieldsAreReadWithoutTheRestAndAgreeWithFullReads() throws {
        var ada = sampleEmployee("e1", salary: 120, department: Department(id: "d1", name: "R&D"))
        ada.mentors = [Department(id: "m1", name: "Mentors"), Department(id: "m2", name: "More")]
        try store.write { tx in try tx.park(ada) }
        try store.read { tx throws in
            let values = try #require(try tx.fields(of: Employee.self, id: "e1", ["salary", "address.zip", "department", "mentors.1", "missing", "address.nope"]))
            #expect(values[0] == .int(120))
            #expect(values[1] == .string(ada.address.zip))
            #expect(values[2] == .reference(collection: "Department", id: .string("d1")))
            #expect(values[3] == .reference(collection: "Department", id: .string("m2")))
            #expect(values[4] == nil && values[5] == nil)
            #expect(try tx.fields(of: Employee.self, id: "nobody", ["salary"]) == nil)
            #expect(try tx.field(\Employee.salary, of: "e1") == 120)
            #expect(try tx.field(\Employee.address, of: "e1") == ada.address)
            #expect(try tx.field(\Employee.name, of: "nobody") == nil)
            // References in a projected field are resolved, as in a full read.
            #expect(try tx.field(\Employee.department, of: "e1") == Department(id: "d1", name: "R&D"))
            #expect(try tx.field(\Employee.mentors, of: "e1") == ada.mentors)
            // Key paths asked in turn in one transaction (each field path is worked out once).
            for _ in 0..<3 {
                #expect(try tx.field(\Employee.salary, of: "e1") == 120)
                #expect(try tx.field(\Employee.name, of: "e1") == ada.name)
                #expect(try tx.field(\Employee.address.zip, of: "e1") == ada.address.zip)
            }
            // Key paths made at run time (a new object per call) are found by value.
            for _ in 0..<100 {
                let built = (\Employee.address).appending(path: \Address.zip)
                #expect(try tx.field(built, of: "e1") == ada.address.zip)
            }
        }
        // A field of the wrong stored type names the field.
        try store.write { tx in
            var odd = DynamicObject(entity: "Employee", id: "odd")
            odd.salary = "lots"
            try tx.park(odd)
        }
        let mistyped = #expect(throws: DepotError.self) { _ = try store.read { try $0.field(\Employee.salary, of: "odd") } }
        #expect(mistyped?.code == .decodingFailed)
        #expect("\(mistyped.map { $0 } as Any)".contains("salary"))
        // Random documents: every top-level field read alone equals the full decode's.
        var rng = SystemRandomNumberGenerator()
        try store.write { tx in
            for i in 0..<50 { try tx.park(staff(Int.random(in: 0..<10_000, using: &rng) + i * 10_000)) }
        }
        try store.read { tx throws in
            for s in try tx.retrieveAll(Staff.self) {
                let values = try #require(try tx.fields(of: Staff.self, id: s.id, ["name", "email", "salary", "company"]))
                #expect(values == [.string(s.name), .string(s.email), .int(Int64(s.salary)), .string(s.company)])
            }
        }
    }

    @Test func aDamagedRecordIsAnErrorNotAWrongValue() throws {
        try store.write { tx in try tx.park(sampleEmployee("e1")) }
        try damageStoredRecord(in: store, collection: "Employee", id: "e1")
        let error = #expect(throws: DepotError.self) { _ = try store.read { try $0.fields(of: Employee.self, id: "e1", ["name"]) } }
        #expect(error?.code == .checksumMismatch)
    }
}

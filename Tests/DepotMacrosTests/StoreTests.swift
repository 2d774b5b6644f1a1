#if Macros
import Depot
import Foundation
import Testing

@Suite("Generated codecs in a Store")
struct StoreTests {
    let scratch = Scratch()
    let store: Store

    init() throws { store = try Store(path: scratch.path) }

    @Test func generatedAndCodableRecordsReadEachOther() throws {
        let person = Person(id: "p1", name: "Ada", age: 36, email: nil, tags: ["x"])
        try store.write { tx throws in
            try tx.park(person)
            try tx.park(PlainPerson(id: "p2", name: "Bob", age: 40, email: "b@example.com", tags: []))
        }
        try store.read { tx throws in
            #expect(try tx.retrieve(Person.self, id: "p1") == person)
            #expect(try tx.retrieve(PlainPerson.self, id: "p1")
                    == PlainPerson(id: "p1", name: "Ada", age: 36, email: nil, tags: ["x"]))
            #expect(try tx.retrieve(Person.self, id: "p2")
                    == Person(id: "p2", name: "Bob", age: 40, email: "b@example.com", tags: []))
            #expect(try tx.retrieveAll(Person.self).map(\.id) == ["p1", "p2"])
        }
    }

    @Test func referencesGoThroughTheHook() throws {
        let sales = Department(id: "sales", title: "Sales")
        let mentor = Employee(id: 1, name: "Grace", department: nil, mentor: nil, colleagues: [])
        let employee = Employee(id: 2, name: "Alan", department: sales, mentor: Reference(mentor),
                                colleagues: [Reference(id: 1), Reference(id: 3)])
        try store.write { tx throws in
            try tx.park(mentor)
            try tx.park(employee)
        }
        try store.read { tx throws in
            #expect(try tx.retrieve(Department.self, id: "sales") == sales) // parked as its own record
            #expect(try tx.retrieve(Employee.self, id: 2) == employee)
            let plain = try #require(try tx.retrieve(PlainEmployee.self, id: 2))
            #expect(plain.department == sales && plain.mentor?.id == 1 && plain.colleagues.map(\.id) == [1, 3])
        }
        // Renaming the department is seen through the reference (it is not stored inline).
        try store.write { tx throws in try tx.park(Department(id: "sales", title: "Revenue")) }
        #expect(try store.retrieve(Employee.self, id: 2)?.department?.title == "Revenue")
        // A Codable-written record with references reads through the generated code.
        try store.write { tx throws in
            try tx.park(PlainEmployee(id: 3, name: "Edsger", department: sales, mentor: Reference(id: 2), colleagues: []))
        }
        let edsger = try #require(try store.retrieve(Employee.self, id: 3))
        #expect(edsger.mentor?.id == 2 && edsger.department?.id == "sales")
    }

    @Test func generatedDocumentsReferencingGeneratedDocuments() throws {
        let ada = Person(id: "ada", name: "Ada", age: 36, email: nil, tags: [])
        let bob = Person(id: "bob", name: "Bob", age: 40, email: "b@example.com", tags: ["x"])
        let team = Team(id: "t", lead: ada, members: [ada, bob])
        try store.write { tx throws in try tx.park(team) }
        try store.read { tx throws in
            #expect(try tx.count(Person.self) == 2) // parked as their own records
            #expect(try tx.retrieve(Team.self, id: "t") == team)
        }
        try store.write { tx throws in try tx.park(Person(id: "ada", name: "Ada L.", age: 37, email: nil, tags: [])) }
        #expect(try store.retrieve(Team.self, id: "t")?.members.first?.name == "Ada L.")
    }

    @Test func fieldDefaultsFillOlderRecords() throws {
        try store.write { tx throws in try tx.park(OldRated(id: "r", title: "Old")) }
        #expect(try store.retrieve(Rated.self, id: "r") == Rated(id: "r", title: "Old", rating: 3))
    }

    @Test func mistypedRecordNamesTheField() throws {
        try store.write { tx throws in try tx.park(WrongPerson(id: "w", name: 5)) }
        #expect {
            _ = try store.retrieve(Person.self, id: "w")
        } throws: { error in
            "\(error)".contains("name")
        }
    }

    @Test func everythingThroughTheStore() throws {
        let value = RoundTripTests.everything(optionals: true)
        try store.write { tx throws in try tx.park(value) }
        #expect(try store.retrieve(Everything.self, id: value.id) == value)
    }
}

/// A `Person` record of the wrong shape.
struct WrongPerson: Document {
    static var collection: String { "Person" }
    var id: String
    var name: Int
}
#endif

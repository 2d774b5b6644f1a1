import Foundation
import Testing
import DepotTestSupport
@testable import Depot
@testable import DepotCore
import DepotLMDB

@Suite("Kits: dynamic objects")
struct DynamicObjectTests {
    @Test(arguments: DriverKind.allCases)
    func dynamicMembersStoreAndConvert(_ kind: DriverKind) throws {
        let folder = TemporaryFolder()
        let store = try kind.makeStore(folder)
        var person = DynamicObject(entity: "Person", id: "p1")
        person.firstname = "Wess"
        person.age = 38
        #expect(person.firstname == .string("Wess"))
        try store.write { tx in try tx.park(person) }
        let back = try #require(try store.read { try $0.retrieve(dynamic: "Person", id: "p1") })
        #expect(back == person)
        // Dynamic → typed, and typed → dynamic.
        let typed = try back.decode(as: KitPerson.self)
        #expect(typed == KitPerson(id: "p1", firstname: "Wess", age: 38))
        #expect(try store.retrieve(KitPerson.self, id: "p1") == typed)
        let fromTyped = try DynamicObject(KitPerson(id: "p2", firstname: "Ada", age: 36))
        #expect(fromTyped.entity == "Person" && fromTyped.age == .int(36))
        try store.write { tx in try tx.park(fromTyped) }
        #expect(try store.read { try $0.retrieveAll(dynamic: "Person") }.map(\.id) == [.string("p1"), .string("p2")])
        var unidentified = DynamicObject(entity: "Note")
        unidentified.text = "no id"
        try store.write { tx in
            try tx.park(unidentified)
            #expect(try tx.delete(person))
        }
        #expect(try store.read { try $0.retrieveAll(dynamic: "Note") }.first?.text == .string("no id"))
        #expect(try store.read { try $0.retrieve(dynamic: "Person", id: "p1") } == nil)
        person.removed = nil
        #expect(person.fields.map(\.key) == ["id", "firstname", "age"])
    }

    /// A dynamic object that does not fit the type fails as a DepotError naming the entity, the
    /// ID and the field path, never the value.
    @Test func decodingAsAnotherShapeIsADepotError() throws {
        var person = DynamicObject(entity: "Person", id: "p1")
        person.firstname = "Wess"
        person.age = "thirty-eight"
        let error = #expect(throws: DepotError.self) { try person.decode(as: KitPerson.self) }
        #expect(error?.code == .decodingFailed)
        #expect(error?.collection == "Person" && error?.id == "p1")
        #expect(error?.fieldPath == "age", "\(String(describing: error))")
        #expect(error?.message.contains("thirty-eight") == false, "\(String(describing: error))")
    }
}

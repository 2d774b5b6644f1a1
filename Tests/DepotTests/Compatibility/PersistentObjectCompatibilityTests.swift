// PersistentObject's names (Sources/DepotCore/Compatibility/PersistentObject.swift): each
// forward is called by its PersistentObject name and checked against the Depot call it
// forwards to.

import DepotLMDB
import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

@Suite("Compatibility: PersistentObject")
struct PersistentObjectCompatibilityTests {
    let folder = TemporaryFolder("po-compat")

    @Test func persistentObjectIsPersistent() throws {
        let store = try Store(path: folder.sub("store"))
        let person = try PersistentObject<KPPerson>(key: "person", store: store)
        #expect(type(of: person) == Persistent<KPPerson>.self)
        person.reset(KPPerson(name: "Brian Doyle-Murray", age: 79))
        try person.save()
        #expect(try Persistent<KPPerson>(key: "person", store: store).value?.name == "Brian Doyle-Murray")
    }

    @Test func objectForwardsToValue() throws {
        let store = try Store(path: folder.sub("store"))
        let person = try PersistentObject<KPPerson>(key: "person", store: store)
        #expect(person.object == nil, "fresh slate")
        person.reset(KPPerson(name: "Justin Theroux", age: 44))
        #expect(person.object == person.value)
        #expect(person.object?.name == "Justin Theroux")
        person.value = KPPerson(name: "Liv Tyler", age: 38)
        #expect(person.object?.name == "Liv Tyler", "reads what value holds")
    }

    @Test func objectChangedExternallyForwardsToOnExternalChange() throws {
        let repository = KPRecordingRepository()
        final class Seen: @unchecked Sendable {
            let lock = NSLock()
            var names: [String?] = []
        }
        let seen = Seen()
        let person = try PersistentObject<KPPerson>(key: "person", repository: repository)
        #expect(person.objectChangedExternally == nil && person.onExternalChange == nil)
        person.objectChangedExternally = { new in seen.lock.withLock { seen.names.append(new?.name) } }
        #expect(person.onExternalChange != nil, "set through PersistentObject's name, held as onExternalChange")
        try repository.changeExternally(to: KPPerson(name: "Patti Levin", age: 60))
        #expect(person.object?.name == "Patti Levin", "replaced before the call")
        #expect(seen.lock.withLock { seen.names } == ["Patti Levin"])
        person.onExternalChange = nil
        #expect(person.objectChangedExternally == nil, "cleared through Depot's name")
    }
}

// Ports of GarageStorage's own test cases (mrlegowatch/GarageStorageSwift, Tests/GarageStorageTests)
// to Depot's document API. One @Test per upstream case, named after it; each carries a comment
// naming the upstream test. Written against Depot, in our own words; the upstream models are
// re-declared here with a `GS` prefix so that they do not clash with the other test models.

import DepotLMDB
import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

// MARK: - SwiftCodableTests

@Suite("GarageStoragePort: SwiftCodableTests")
struct GarageStoragePortSwiftCodableTests {
    let folder = TemporaryFolder("gs-port")
    let store: Store
    init() throws { store = try Store(path: folder.sub("store")) }

    // Upstream: SwiftCodableTests.identifiable
    @Test func identifiable() throws {
        try store.park(gsSam())
        let sam = try #require(try store.retrieve(GSPerson.self, id: "Sam"))
        #expect(sam.name == "Sam")
        #expect(sam.importantDates.count == 3)
        #expect(sam.brother?.name == "Nick", "the brother reference comes back resolved")
        #expect(sam.siblings.count == 2)
    }

    // Upstream: SwiftCodableTests.mappableNonString
    @Test func mappableNonString() throws {
        try store.park([gsPet(), gsPet2()])
        let peaches = try #require(try store.retrieve(GSPet.self, id: 3))
        #expect(peaches.name == "Peaches")
        let cream = try #require(try store.retrieve(GSPet.self, id: 5))
        #expect(cream.name == "Cream")
        #expect(peaches != cream)
        let again = try #require(try store.retrieve(GSPet.self, id: 3))
        #expect(again == peaches, "two fetches of the same ID are equivalent")
    }

    // Upstream: SwiftCodableTests.arrayOfIdentifiable
    @Test func arrayOfIdentifiable() throws {
        try store.park([gsNick(), gsEmily()])
        #expect(try store.retrieve(GSPerson.self, id: "Nick")?.name == "Nick")
        #expect(try store.retrieve(GSPerson.self, id: "Emily")?.name == "Emily")
        #expect(try store.retrieve(GSPerson.self, id: "Sam") == nil, "Sam was never parked")
    }

    // Upstream: SwiftCodableTests.retrievingCollections
    @Test func retrievingCollections() throws {
        try parkPeopleAndAddresses(store)
        let people = try store.retrieveAll(GSPerson.self)
        #expect(people.count == 3)
        #expect(Set(people.map(\.name)) == ["Sam", "Nick", "Emily"])
        #expect(try addresses(store).count == 2)
    }

    // Upstream: SwiftCodableTests.deletingObject
    @Test func deletingObject() throws {
        try store.park([gsNick(), gsEmily(), gsSam()])
        let nick = try #require(try store.retrieve(GSPerson.self, id: "Nick"))
        try store.delete(nick)
        #expect(try store.retrieve(GSPerson.self, id: "Nick") == nil)
    }

    // Upstream: SwiftCodableTests.deletingCollections
    @Test func deletingCollections() throws {
        try parkPeopleAndAddresses(store)
        try store.deleteAll(GSPerson.self)
        #expect(try store.retrieveAll(GSPerson.self).isEmpty)
        let left = try addresses(store)
        #expect(left.count == 2)
        #expect(left.first?.city == "Boston")
    }

    // Upstream: SwiftCodableTests.deletingAllObjects
    @Test func deletingAllObjects() throws {
        try parkPeopleAndAddresses(store)
        try store.deleteEverything()
        #expect(try store.retrieveAll(GSPerson.self).isEmpty)
        #expect(try addresses(store).isEmpty)
        // Again, on an empty store: a no-op, not an error.
        try store.deleteAll(GSPerson.self)
        try store.deleteEverything()
    }

    // Upstream: SwiftCodableTests.dates (also SwiftDateTests.dates)
    @Test func dates() throws {
        let sam = gsSam()
        sam.birthdate = try #require(utcCalendar.date(from: DateComponents(year: 1950, month: 1, day: 1)))
        #expect(sam.birthdate.timeIntervalSinceReferenceDate == -1609459200.0, "assumption of the test")
        try store.park(sam)
        let back = try #require(try store.retrieve(GSPerson.self, id: "Sam"))
        #expect(back.birthdate.timeIntervalSinceReferenceDate == -1609459200.0)
    }

    // Upstream: SwiftCodableTests.identifiableReferences
    @Test func identifiableReferences() throws {
        var right = GSBranch(name: "Right")
        right.branches = [GSBranch(name: "Lower"), GSBranch(name: "Bottom")]
        var left = GSBranch(name: "Left")
        left.branches = [GSBranch(name: "Upper"), right, GSBranch(name: "Top")]
        // Parking the top-level object parks every branch it reaches.
        try store.park(GSTree(name: "Tree", mainBranch: left))

        let tree = try #require(try store.retrieve(GSTree.self, id: "Tree"))
        let leftBack = try #require(try store.retrieve(GSBranch.self, id: "Left"))
        #expect(tree.mainBranch.branches.count == 3)
        #expect(tree.mainBranch == leftBack)
        let rightBack = try #require(try store.retrieve(GSBranch.self, id: "Right"))
        #expect(rightBack.branches.count == 2)
    }

    // Upstream: SwiftCodableTests.nonExistentObject
    @Test func nonExistentObject() throws {
        #expect(try store.retrieve(GSPerson.self, id: "Frodo") == nil)
    }

    // Upstream: SwiftCodableTests.pureSwiftCodable (also SwiftMigrationTests.testPureSwiftCodable)
    @Test func pureSwiftCodable() throws {
        // No store: a Document type stays plain Codable (references encode inline as JSON).
        let encoder = JSONEncoder()
        encoder.outputFormatting = .prettyPrinted
        let data = try encoder.encode(gsSam())
        let sam = try JSONDecoder().decode(GSPerson.self, from: data)
        #expect(sam.name == "Sam")
        #expect(sam.address == gsAddress())
        #expect(sam.brother != nil)
        #expect(sam.siblings.count == 2)
    }

    // Upstream: SwiftCodableTests.autosaveDisabled (also SwiftGarageTests.autosaveDisabled)
    @Test func autosaveDisabled() throws {
        #expect(store.autosave == true, "autosave is on by default")
        store.autosave = false
        try store.park(gsNick())
        try store.park(gsEmily())
        store.autosave = true
        #expect(store.autosave == true)
        try store.save()
        let nick = try store.retrieve(GSPerson.self, id: "Nick")
        #expect(nick?.name == "Nick")
        let emily = try store.retrieve(GSPerson.self, id: "Emily")
        #expect(emily?.name == "Emily")
        // Committed for real: a plain read transaction (no unit of work) sees them.
        #expect(try store.read { try $0.count(GSPerson.self) } == 2)
    }

    // Upstream: SwiftCodableTests.convenienceInitializer (also SwiftGarageTests.convenienceInitializer)
    @Test func convenienceInitializer() throws {
        // GarageStorage's `Garage(named:)`: a store at a named location, here a nested folder.
        let named = try Store(path: folder.sub("GarageStorageTests/ConvenienceInitializer"))
        try named.park(gsSam())
        let sam = try #require(try named.retrieve(GSPerson.self, id: "Sam"))
        #expect(sam.name == "Sam")
        #expect(sam.importantDates.count == 3)
        try named.deleteEverything()
    }

    // Upstream: SwiftCodableTests.hashableParkAndDelete
    @Test func hashableParkAndDelete() throws {
        // GarageStorage keys a Hashable root by its hash; Depot keys an unidentified value by the
        // SHA-256 of its content. There is no retrieve-by-key for those, so read them all.
        let first = gsAddress(), second = gsAddress2()
        let (k1, k2) = try store.write { tx in (try tx.park(unidentified: first), try tx.park(unidentified: second)) }
        #expect(k1 != k2)
        let all = try addresses(store)
        #expect(Set(all) == [first, second])
        let stored = try #require(all.first { $0.street == "330 Congress St." })
        #expect(stored.city == "Boston" && stored.zip == "02140")

        #expect(try store.write { try $0.delete(unidentified: first) })
        #expect(try addresses(store) == [second], "only the first address is gone")
        #expect(try store.write { try $0.delete(unidentified: second) })
        #expect(try addresses(store).isEmpty)
    }
}

// MARK: - SwiftGarageTests

@Suite("GarageStoragePort: SwiftGarageTests")
struct GarageStoragePortSwiftGarageTests {
    let folder = TemporaryFolder("gs-port")
    let store: Store
    init() throws { store = try Store(path: folder.sub("store")) }

    // Upstream: SwiftGarageTests.deletingAllObjects (the completion-handler variant)
    @Test func deletingAllObjects() async throws {
        try parkPeopleAndAddresses(store)
        // GarageStorage deletes in the background and calls back; Depot's async write returns.
        let deleted = try await store.write { tx in try tx.deleteEverything() }
        #expect(deleted == 5)
        #expect(try store.retrieveAll(GSPerson.self).isEmpty)
        #expect(try addresses(store).isEmpty)
        try store.deleteAll(GSPerson.self)
        try store.deleteEverything()
    }

    // Upstream: SwiftGarageTests.backToBackDeleteAllObjects
    @Test func backToBackDeleteAllObjects() async throws {
        try store.park([gsSam(), gsNick(), gsEmily()])
        #expect(try store.retrieveAll(GSPerson.self).count == 3)
        try store.deleteEverything()
        _ = try await store.write { tx in try tx.deleteEverything() }
        #expect(try store.retrieveAll(GSPerson.self).isEmpty)
        try store.deleteEverything()
        #expect(try store.retrieveAll(GSPerson.self).isEmpty)
    }
}

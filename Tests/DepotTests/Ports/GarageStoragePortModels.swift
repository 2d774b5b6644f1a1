// Models and fixtures of the GarageStorage ports (GarageStoragePortTests.swift): the shapes of
// mrlegowatch/GarageStorageSwift's test objects, re-declared with a `GS` prefix.

import DepotLMDB
import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

// MARK: - Models (the shapes of the upstream test objects)

/// Upstream `SwiftAddress`: a plain Hashable value with no identity (parked "by value").
struct GSAddress: Codable, Hashable {
    var street: String
    var city: String
    var zip: String
}

/// Upstream `SwiftPerson`: a class identified by its name, with eager references to other
/// persons, and a sync status that is not part of its coded form.
final class GSPerson: Syncable {
    var id: String { name }
    var name: String = ""
    var address: GSAddress?
    var age: Int = 0
    var birthdate: Date = Date()
    var importantDates: [Date] = []
    var siblings: [GSPerson] = []
    var brother: GSPerson?
    var syncStatus: SyncStatus = .undetermined

    private enum CodingKeys: String, CodingKey {
        case name, address, age, birthdate, importantDates, siblings, brother
    }
}

/// Upstream `SwiftPet`: an integer identifier, sync status `.notSynced` by default.
final class GSPet: Syncable, Equatable {
    var id: Int { age }
    var name: String = ""
    var age: Int = 0
    var syncStatus: SyncStatus = .notSynced

    private enum CodingKeys: String, CodingKey { case name, age }

    static func == (lhs: GSPet, rhs: GSPet) -> Bool { lhs.id == rhs.id }
}

/// Upstream `SwiftBranch`: a value type referencing more branches.
struct GSBranch: Document, Equatable {
    var id: String
    var branches: [GSBranch] = []
    init(name: String) { id = name }
}

/// Upstream `SwiftTree`: a class with a required (non-optional) reference.
final class GSTree: Document {
    var id: String
    var mainBranch: GSBranch
    init(name: String, mainBranch: GSBranch) {
        id = name
        self.mainBranch = mainBranch
    }
}

/// Upstream `SwiftPersonWithParent`: a non-optional reference to another document.
final class GSPersonWithParent: Document {
    var id: String { name }
    var name: String = ""
    var parent: GSPerson = GSPerson()
    private enum CodingKeys: String, CodingKey { case name, parent }
}

/// Upstream `InfiniteBag` (TestableEdgeCaseTests.testArrayOfArray): bags inside bags.
struct GSBag: Document {
    var id: String
    var contents: [GSBag] = []
}

/// Upstream `CustomDataEncryptor`: a toy reversible transform (XOR), enough to see that stored
/// bytes differ from an untransformed store's.
struct GSXORTransform: RecordTransform, Equatable {
    func seal(_ record: UnsafeRawBufferPointer, context: RecordTransformContext) throws -> [UInt8] { record.map { $0 ^ 0x5A } }
    func open(_ stored: UnsafeRawBufferPointer, context: RecordTransformContext) throws -> [UInt8] { stored.map { $0 ^ 0x5A } }
}

// MARK: - Mocks (the upstream fixtures: Sam, Nick, Emily, two addresses, two pets)

func gsAddress() -> GSAddress { GSAddress(street: "330 Congress St.", city: "Boston", zip: "02140") }
func gsAddress2() -> GSAddress { GSAddress(street: "321 Summer Street", city: "Boston", zip: "02140") }

func gsNick() -> GSPerson {
    let p = GSPerson()
    p.name = "Nick"; p.address = gsAddress(); p.age = 26
    return p
}

func gsEmily() -> GSPerson {
    let p = GSPerson()
    p.name = "Emily"; p.address = gsAddress(); p.age = 24
    return p
}

/// Sam: three important dates, brother Nick, siblings Nick and Emily, status `.syncing`.
func gsSam() -> GSPerson {
    let p = GSPerson()
    p.name = "Sam"; p.age = 31; p.birthdate = Date(); p.address = gsAddress()
    p.importantDates = [Date(), Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 100)]
    let nick = gsNick()
    p.brother = nick
    p.siblings = [nick, gsEmily()]
    p.syncStatus = .syncing
    return p
}

func gsPet() -> GSPet { let pet = GSPet(); pet.name = "Peaches"; pet.age = 3; return pet }
func gsPet2() -> GSPet { let pet = GSPet(); pet.name = "Cream"; pet.age = 5; return pet }

func gsChild() -> GSPersonWithParent {
    let child = GSPersonWithParent()
    child.name = "Child"
    child.parent = gsNick()
    return child
}

var utcCalendar: Calendar {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
    return calendar
}

/// Parks Nick, Emily, Sam and the two addresses (the upstream "heterogeneous objects").
func parkPeopleAndAddresses(_ store: Store) throws {
    try store.park([gsNick(), gsEmily(), gsSam()])
    try store.write { tx in
        try tx.park(unidentified: gsAddress())
        try tx.park(unidentified: gsAddress2())
    }
}

func addresses(_ store: Store) throws -> [GSAddress] {
    try store.read { try $0.retrieveAll(unidentified: GSAddress.self) }
}

/// The raw stored bytes of a document record (under any transform), through the LMDB binding.
func rawRecord(_ store: Store, collection: String, id: String) throws -> [UInt8]? {
    try store.environment.write { txn in
        let db = try txn.openDatabase("depot.doc/default/\(collection)", key: StringCodec.self, value: BytesCodec.self, create: false)
        return try txn.get(id, in: db)
    }
}


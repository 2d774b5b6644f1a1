// Ports of GarageStorage's own test cases, continued (GarageStoragePortTests.swift): sync status,
// dates, errors, raw storage and edge cases.

import DepotLMDB
import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

// MARK: - SwiftSyncableTests

@Suite("GarageStoragePort: SwiftSyncableTests")
struct GarageStoragePortSwiftSyncableTests {
    let folder = TemporaryFolder("gs-port")
    let store: Store
    init() throws { store = try Store(path: folder.sub("store")) }

    private func persons(_ status: SyncStatus) throws -> [GSPerson] {
        try store.read { try $0.retrieve(GSPerson.self, withSyncStatus: status) }
    }

    // Upstream: SwiftSyncableTests.syncStatus
    @Test func syncStatus() throws {
        let sam = gsSam(), nick = gsNick(), emily = gsEmily(), pet = gsPet()
        try store.park([nick, emily, sam])
        try store.write { tx in
            try tx.park(unidentified: gsAddress())
            try tx.park(unidentified: gsAddress2())
        }
        try store.park([pet])

        #expect(try persons(.syncing).map(\.name) == ["Sam"], "Sam was parked syncing")
        // Upstream: "no items should be not synced" — Nick and Emily were parked `.undetermined`.
        #expect(try persons(.notSynced).isEmpty)

        try store.setSyncStatus(.notSynced, for: sam)
        try store.setSyncStatus(.notSynced, for: pet)   // another type with the same status
        #expect(try persons(.syncing).isEmpty)
        #expect(try persons(.notSynced).map(\.name) == ["Sam"], "only persons, not the pet")

        try store.setSyncStatus(.undetermined, for: GSPerson.self, ids: [nick.id, sam.id])
        #expect(try store.syncStatus(of: GSPerson.self, id: nick.id) == .undetermined)
    }

    // Upstream: SwiftSyncableTests.invalidSyncStatus
    @Test func invalidSyncStatus() throws {
        let sam = gsSam()   // never parked
        // Upstream: both calls throw failedToRetrieveObject naming the type and "Sam".
        let single = #expect(throws: DepotError.self) { try store.setSyncStatus(.notSynced, for: sam) }
        #expect(single?.code == .notStored && single?.collection == "GSPerson" && single?.id == "Sam")
        try store.park(gsNick())
        let several = #expect(throws: DepotError.self) {
            try store.setSyncStatus(.synced, for: GSPerson.self, ids: ["Nick", sam.id])
        }
        #expect(several?.code == .notStored && several?.id == "Sam")
        #expect(try store.syncStatus(of: GSPerson.self, id: "Nick") == .undetermined, "all or nothing: Nick is unchanged")
        // The same with autosave off: the unit of work checks before it records.
        store.autosave = false
        #expect(try #require(throws: DepotError.self) { try store.setSyncStatus(.notSynced, for: sam) }.code == .notStored)
        #expect(!store.hasUnsavedChanges)
        store.autosave = true
        // The transaction-level calls report it instead of throwing.
        #expect(try store.write { try $0.setSyncStatus(.notSynced, for: sam) } == false)
        #expect(try store.write { try $0.setSyncStatus(.notSynced, for: GSPerson.self, ids: [sam.id]) } == ["Sam"])
    }
}

// MARK: - SwiftDateTests

@Suite("GarageStoragePort: SwiftDateTests")
struct GarageStoragePortSwiftDateTests {
    let folder = TemporaryFolder("gs-port")

    // Upstream: SwiftDateTests.temporaryDateStrategies
    @Test func temporaryDateStrategies() throws {
        // GarageStorage encodes stored dates with the current strategy (a date-only format loses
        // the time; reading back without it fails). Depot keeps dates exactly inside the store and
        // applies a strategy only to external forms (export, seeds): check that instead.
        var options = StoreOptions()
        options.dateStrategy = .formatted("yyyy-MM-dd")
        let store = try Store(path: folder.sub("store"), options: options)
        let nick = gsNick()
        let birth = try #require(utcCalendar.date(from: DateComponents(year: 1985, month: 6, day: 15, hour: 12, minute: 30)))
        nick.birthdate = birth
        try store.park(nick)

        let back = try #require(try store.retrieve(GSPerson.self, id: "Nick"))
        #expect(back.birthdate == birth, "the stored date keeps its time")
        var lines: [String] = []
        try store.read { tx in
            try tx.export(collection: GSPerson.collection) { doc in
                lines.append(try doc.jsonLine(dateStrategy: store.dateStrategy))
                return true
            }
        }
        #expect(lines.count == 1)
        #expect(lines.first?.contains("\"birthdate\":\"1985-06-15\"") == true, "the external form uses the format")
        // Deleting needs neither strategy.
        try store.delete(nick)
        #expect(try store.retrieve(GSPerson.self, id: "Nick") == nil)
    }
}

// MARK: - SwiftErrorTests

@Suite("GarageStoragePort: SwiftErrorTests")
struct GarageStoragePortSwiftErrorTests {
    let folder = TemporaryFolder("gs-port")
    let store: Store
    init() throws { store = try Store(path: folder.sub("store")) }

    // Upstream: SwiftErrorTests.garageErrorDomainCompatibility
    @Test func garageErrorDomainCompatibility() {
        #expect(DepotError.errorDomain == "Depot.DepotError")
    }

    // Upstream: SwiftErrorTests.nsErrorDomain
    @Test func nsErrorDomain() {
        let error = DepotError.danglingReference(parentCollection: "GSPersonWithParent", parentID: "Child", childCollection: "GSPerson", childID: "Sam")
        #expect((error as NSError).domain == DepotError.errorDomain)
    }

    // Upstream: SwiftErrorTests.failedToRetrieveObjectUserInfo (Depot's "object not there" error is danglingReference)
    @Test func failedToRetrieveObjectUserInfo() {
        let error = DepotError.danglingReference(parentCollection: "GSPersonWithParent", parentID: "Child", childCollection: "GSPerson", childID: "Sam")
        let description = error.errorUserInfo[NSLocalizedDescriptionKey] as? String
        #expect(description?.contains("GSPerson") == true)
        #expect(description?.contains("Sam") == true)
        #expect(error.errorUserInfo["DepotErrorCollection"] as? String == "GSPerson")
        #expect(error.errorUserInfo["DepotErrorID"] as? String == "Sam")
    }

    // Upstream: SwiftErrorTests.failedToRetrieveObjectNSError
    @Test func failedToRetrieveObjectNSError() {
        let error = DepotError.danglingReference(parentCollection: "GSPersonWithParent", parentID: "Child", childCollection: "GSPerson", childID: "Sam")
        let ns = error as NSError
        #expect(ns.localizedDescription.contains("GSPerson"))
        #expect(ns.localizedDescription.contains("Sam"))
    }

    // Upstream: SwiftErrorTests.storageDataIsNilUserInfo (Depot's "record unusable" errors)
    @Test func storageDataIsNilUserInfo() {
        let error = DepotError.checksumMismatch(alias: "default", collection: "GSPerson", id: "Sam")
        let description = error.errorUserInfo[NSLocalizedDescriptionKey] as? String
        #expect(description?.contains("GSPerson") == true)
        #expect(description?.contains("Sam") == true)
        #expect(error.errorUserInfo["DepotErrorCode"] as? String == "checksumMismatch")
    }

    // Upstream: SwiftErrorTests.storageDataIsNilNSError
    @Test func storageDataIsNilNSError() {
        let ns = DepotError.corruptRecord(alias: "default", collection: "GSPerson", id: "Sam", detail: "empty") as NSError
        #expect(ns.localizedDescription.contains("GSPerson"))
        #expect(ns.localizedDescription.contains("Sam"))
    }

    // Upstream: SwiftErrorTests.failedToRetrieveFromDelete
    @Test func failedToRetrieveFromDelete() throws {
        // Upstream: deleting a never-parked object throws failedToRetrieveObject.
        let error = #expect(throws: DepotError.self) { try store.delete(gsSam()) }
        #expect(error?.code == .notStored && error?.collection == "GSPerson" && error?.id == "Sam")
        #expect((error as NSError?)?.localizedDescription.contains("GSPerson/Sam") == true)
        store.autosave = false
        #expect(try #require(throws: DepotError.self) { try store.delete(GSPerson.self, id: "Sam") }.code == .notStored)
        try store.park(gsSam())
        try store.delete(GSPerson.self, id: "Sam") // parked in the unit of work: found
        try store.save()
        store.autosave = true
        // The transaction-level delete reports it instead of throwing.
        #expect(try store.write { try $0.delete(gsSam()) } == false)
    }

    // Upstream: SwiftErrorTests.storageDataIsNilFromRetrieve
    @Test func storageDataIsNilFromRetrieve() throws {
        try store.park(gsNick())
        try damageStoredRecord(store, collection: "GSPerson", id: "Nick", fromEnd: 3)
        do {
            _ = try store.retrieve(GSPerson.self, id: "Nick")
            Issue.record("a damaged record must not decode")
        } catch let error as DepotError {
            #expect(error.code == .checksumMismatch)
            #expect(error.collection == "GSPerson" && error.id == "Nick")
        }
    }

    // Upstream: SwiftErrorTests.missingRequiredIdentifiableReference
    @Test func missingRequiredIdentifiableReference() throws {
        try store.park(gsChild())
        let parent = try #require(try store.retrieve(GSPerson.self, id: "Nick"), "the parent was parked with the child")
        try store.delete(parent)
        do {
            _ = try store.retrieve(GSPersonWithParent.self, id: "Child")
            Issue.record("a child whose required parent is gone must not decode")
        } catch let error as DepotError {
            #expect(error.code == .danglingReference)
            #expect(error.message.contains("GSPerson"))
            #expect(error.message.contains("Nick"))
        }
    }

    // Upstream: SwiftErrorTests.missingIdentifiableReferenceInArray
    @Test func missingIdentifiableReferenceInArray() throws {
        let sam = gsSam()
        try store.park(sam)
        #expect(sam.siblings.count == 2)
        let nick = try #require(try store.retrieve(GSPerson.self, id: "Nick"))
        try store.delete(nick)
        do {
            _ = try store.retrieve(GSPerson.self, id: "Sam")
            Issue.record("Sam references a deleted sibling and must not decode")
        } catch let error as DepotError {
            #expect(error.code == .danglingReference)
            #expect(error.message.contains("Nick"))
        }
    }
}

// MARK: - RawStorageTests

@Suite("GarageStoragePort: RawStorageTests")
struct GarageStoragePortRawStorageTests {
    let folder = TemporaryFolder("gs-port")

    // Upstream: RawStorageTests.testRawStorage
    @Test func testRawStorage() throws {
        // A storage row exists for the key but holds no data: write an empty value under it.
        let store = try Store(path: folder.sub("store"))
        try store.park(gsNick())
        try store.environment.write { txn in
            let db = try txn.openDatabase("depot.doc/default/GSPerson", key: StringCodec.self, value: BytesCodec.self, create: false)
            try txn.put([], forKey: "Nick", in: db)
        }
        do {
            _ = try store.retrieve(GSPerson.self, id: "Nick")
            Issue.record("an empty record must not decode")
        } catch let error as DepotError {
            #expect([DepotError.Code.corruptRecord, .checksumMismatch].contains(error.code))
            #expect(error.localizedDescription.contains("GSPerson"))
        }
    }
}

// MARK: - TestableEdgeCaseTests

@Suite("GarageStoragePort: TestableEdgeCaseTests")
struct GarageStoragePortTestableEdgeCaseTests {
    let folder = TemporaryFolder("gs-port")

    // Upstream: TestableEdgeCaseTests.testDateFormatter
    @Test func testDateFormatter() throws {
        let date = try #require(utcCalendar.date(from: DateComponents(year: 1950, month: 1, day: 1)))
        #expect(date.timeIntervalSinceReferenceDate == -1609459200.0, "assumption of the test")
        #expect(DateStrategy.iso8601.value(for: date) == .string("1950-01-01T00:00:00Z"))
        let parsed = DateStrategy.iso8601.date(from: .string("1950-01-01T00:00:00-05:00"))
        #expect(parsed?.timeIntervalSinceReferenceDate == -1609441200.0)
    }

    // Upstream: TestableEdgeCaseTests.testCustomEncryptor
    @Test func testCustomEncryptor() throws {
        var options = StoreOptions()
        options.recordTransform = GSXORTransform()
        let encrypted = try Store(path: folder.sub("encrypted"), options: options)
        let plain = try Store(path: folder.sub("plain"))
        let sam = gsSam()
        try encrypted.park(sam)
        try plain.park(sam)
        let sealed = try #require(try rawRecord(encrypted, collection: "GSPerson", id: "Sam"))
        let clear = try #require(try rawRecord(plain, collection: "GSPerson", id: "Sam"))
        #expect(sealed != clear, "the transform changed the stored bytes")
        #expect(try encrypted.retrieve(GSPerson.self, id: "Sam")?.siblings.count == 2, "and reads them back")
    }

    // Upstream: TestableEdgeCaseTests.testInvalidStoreGarage (older revision)
    @Test func testInvalidStoreGarage() throws {
        // A store whose folder cannot exist: its parent is a regular file.
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        let file = folder.sub("not-a-folder")
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: (any Error).self) { _ = try Store(path: file + "/OtherGarage") }
    }

    // Upstream: TestableEdgeCaseTests.testArrayOfArray (older revision)
    @Test func testArrayOfArray() throws {
        let store = try Store(path: folder.sub("store"))
        let backpack = GSBag(id: "Backpack", contents: [
            GSBag(id: "Box"),
            GSBag(id: "Sachel", contents: [GSBag(id: "Purse")]),
        ])
        try store.park(backpack)
        #expect(try store.retrieveAll(GSBag.self).count == 4)
    }

    // Upstream: TestableEdgeCaseTests.testMissingIdentifiable (older revision; ObjC fox without a name)
    @Test func testMissingIdentifiable() throws {
        let store = try Store(path: folder.sub("store"))
        let nameless = GSPerson()   // the identifying attribute (name) is missing
        let error = #expect(throws: DepotError.self) { try store.park(nameless) }
        #expect(error?.code == .invalidKey)
        #expect(try store.retrieve(GSPerson.self, id: "Sam") == nil)
    }
}

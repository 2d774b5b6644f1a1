import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

/// A syncable document whose status is also a stored field (the property is `Codable`): a view
/// must read the status from the record's flags, as a full read does, not the stored field.
private struct Parcel: Syncable, Equatable {
    var id: Int
    var label: String
    var weight: Double
    var fragile: Bool
    var note: String?
    var syncStatus: SyncStatus = .notSynced
    /// A computed property: no stored field.
    var heavy: Bool { weight > 10 }
}

/// Field names of every key length class: short (one word), up to 63 bytes (one header byte),
/// 64 and more (a longer key header, walked the general way).
private struct Wordy: Document, Equatable {
    var id: Int
    var a: Int
    var sevenAB: String
    var aFieldNameThatIsLongerThanEightBytes: Int
    var aFieldNameOfExactlySixtyFourBytesWhichNeedsATwoByteKeyHeader0123: String
    var aFieldNameThatGoesOnAndOnForMoreThanSixtyFourBytesOfUTF8InTotalXYZ: Double
}

/// A document whose records written before `level` existed read as level 7.
private struct Lamp: Document, Equatable {
    var id: String
    var name: String
    var level: Int
    static var fieldDefaults: [String: DocumentValue] { ["level": .int(7)] }
}

@Suite("Document views")
struct DocumentViewTests {
    let folder = TemporaryFolder()
    let store: Store
    init() throws { store = try Store(path: folder.path) }

    @Test func everyFieldOfAViewEqualsTheDecodedDocumentsProperty() throws {
        var rng = SystemRandomNumberGenerator()
        var staffByID: [Int: Staff] = [:]
        for i in 0..<300 {
            let s = staff(Int.random(in: 0..<1_000, using: &rng) + i * 1_000)
            staffByID[s.id] = s
        }
        var employees = (0..<40).map { sampleEmployee("e\($0)", salary: $0 * 7, department: $0 % 3 == 0 ? nil : Department(id: "d\($0 % 4)", name: "Dept \($0 % 4)")) }
        employees[5].name = "Ünïcödé name, long enough not to be a small string"
        employees[6].mentors = [Department(id: "m1", name: "Mentor")]
        try store.write { tx in
            for s in staffByID.values { try tx.park(s) }
            for e in employees { try tx.park(e) }
        }
        try store.read { tx throws in
            let decoded = try tx.retrieveAll(Staff.self)
            var seen: [Int] = []
            try tx.forEachView(Staff.self) { view throws -> Bool in
                let id = try view.id
                seen.append(id)
                let s = try #require(staffByID[id])
                #expect(try view.name == s.name)
                #expect(try view.email == s.email)
                #expect(try view.salary == s.salary)
                #expect(try view.company == s.company)
                #expect(try view.decodeDocument() == s)
                #expect(try view.storedRevision == 1)
                return true
            }
            #expect(seen == decoded.map(\.id))
            var reversed: [Int] = []
            try tx.forEachView(Staff.self, reverse: true) { reversed.append(try $0.id); return true }
            #expect(reversed == seen.reversed())

            var count = 0
            try tx.forEachView(Employee.self) { view throws -> Bool in
                let e = try #require(employees.first { $0.id == (try? view.id) })
                #expect(try view.name == e.name)
                #expect(try view.salary == e.salary)
                #expect(try view.address == e.address)
                #expect(try view.field(\.address.zip) == e.address.zip)
                // References are resolved, as in a full read.
                #expect(try view.department == e.department)
                #expect(try view.mentors == e.mentors)
                count += 1
                return true
            }
            #expect(count == employees.count)
        }
    }

    @Test func fieldsWithLongNamesAreFoundAsShortOnes() throws {
        let words = (0..<20).map { i in
            Wordy(id: i, a: i, sevenAB: "s\(i)", aFieldNameThatIsLongerThanEightBytes: i * 3,
                  aFieldNameOfExactlySixtyFourBytesWhichNeedsATwoByteKeyHeader0123: String(repeating: "x", count: i),
                  aFieldNameThatGoesOnAndOnForMoreThanSixtyFourBytesOfUTF8InTotalXYZ: Double(i) / 4)
        }
        #expect("aFieldNameOfExactlySixtyFourBytesWhichNeedsATwoByteKeyHeader0123".utf8.count == 64)
        try store.write { tx in for w in words { try tx.park(w) } }
        try store.read { tx throws in
            var seen = 0
            try tx.forEachView(Wordy.self) { view throws -> Bool in
                let w = words[try view.id]
                #expect(try view.a == w.a)
                #expect(try view.sevenAB == w.sevenAB)
                #expect(try view.aFieldNameThatIsLongerThanEightBytes == w.aFieldNameThatIsLongerThanEightBytes)
                #expect(try view.aFieldNameOfExactlySixtyFourBytesWhichNeedsATwoByteKeyHeader0123 == w.aFieldNameOfExactlySixtyFourBytesWhichNeedsATwoByteKeyHeader0123)
                #expect(try view.aFieldNameThatGoesOnAndOnForMoreThanSixtyFourBytesOfUTF8InTotalXYZ == w.aFieldNameThatGoesOnAndOnForMoreThanSixtyFourBytesOfUTF8InTotalXYZ)
                seen += 1
                return true
            }
            #expect(seen == words.count)
            for w in words {
                #expect(try tx.field(\Wordy.aFieldNameThatGoesOnAndOnForMoreThanSixtyFourBytesOfUTF8InTotalXYZ, of: w.id)
                        == w.aFieldNameThatGoesOnAndOnForMoreThanSixtyFourBytesOfUTF8InTotalXYZ)
            }
        }
    }

    @Test func returningFalseStopsTheScan() throws {
        try store.write { tx in for i in 0..<20 { try tx.park(Counter(id: Int64(i), value: i * 2)) } }
        var values: [Int] = []
        try store.read { tx in
            try tx.forEachView(Counter.self) { view in
                values.append(try view.value)
                return values.count < 5
            }
        }
        #expect(values == [0, 2, 4, 6, 8])
        // No collection yet: nothing to visit.
        try store.read { tx in try tx.forEachView(Tagged.self) { _ in Issue.record("visited a document of an absent collection"); return true } }
    }

    @Test func syncStatusDefaultsOptionalsAndComputedPropertiesReadAsTheDocumentHasThem() throws {
        let parcels = [Parcel(id: 1, label: "a", weight: 2.5, fragile: true, note: nil),
                       Parcel(id: 2, label: "b", weight: 12, fragile: false, note: "handle with care")]
        try store.write { tx in for p in parcels { try tx.park(p) } }
        try store.setSyncStatus(.synced, for: Parcel.self, ids: [2])
        // An older lamp record, written before `level` existed.
        try store.write { tx in
            var old = DynamicObject(entity: "Lamp", id: "old")
            old.name = "Old"
            try tx.park(old)
            try tx.park(Lamp(id: "new", name: "New", level: 3))
        }
        try store.read { tx throws in
            let decoded = try tx.retrieveAll(Parcel.self)
            #expect(decoded.map(\.syncStatus) == [.notSynced, .synced])
            var index = 0
            try tx.forEachView(Parcel.self) { view throws -> Bool in
                let p = decoded[index]
                #expect(try view.syncStatus == p.syncStatus)
                #expect(try view.note == p.note)
                #expect(try view.weight == p.weight)
                #expect(try view.fragile == p.fragile)
                #expect(try view.field(\.heavy) == p.heavy)
                #expect(try view.decodeDocument() == p)
                index += 1
                return true
            }
            #expect(index == 2)
            // The projection by ID reads the status as the full read does, too.
            #expect(try tx.field(\Parcel.syncStatus, of: 2) == .synced)
            #expect(try tx.field(\Parcel.syncStatus, of: 1) == .notSynced)
            var levels: [String: Int] = [:]
            try tx.forEachView(Lamp.self) { levels[try $0.id] = try $0.level; return true }
            #expect(levels == ["old": 7, "new": 3])
        }
    }

    @Test func unsavedChangesOfAUnitOfWorkAreVisited() throws {
        try store.write { tx in for i in 0..<4 { try tx.park(Counter(id: Int64(i), value: i)) } }
        store.autosave = false
        try store.park(Counter(id: 1, value: 100))
        try store.park(Counter(id: 9, value: 9))
        try store.delete(Counter.self, id: 2)
        var seen: [Int64: Int] = [:]
        var order: [Int64] = []
        // Reads through the store lay the unit of work over the stored documents.
        try store.readThrough { tx in try tx.forEachView(Counter.self) { seen[try $0.id] = try $0.value; order.append(try $0.id); return true } }
        #expect(seen == [0: 0, 1: 100, 3: 3, 9: 9])
        #expect(order == [0, 1, 3, 9])
        // A read transaction sees what is stored.
        var stored: [Int64: Int] = [:]
        try store.read { tx in try tx.forEachView(Counter.self) { stored[try $0.id] = try $0.value; return true } }
        #expect(stored == [0: 0, 1: 1, 2: 2, 3: 3])
    }

    @Test func aViewReadAfterAWriteInItsTransactionIsAnError() throws {
        try store.write { tx in for i in 0..<5 { try tx.park(Counter(id: Int64(i), value: i)) } }
        // Read first, then write: allowed; every document is visited and every write kept.
        try store.write { tx in
            try tx.forEachView(Counter.self) { view in
                var counter = try view.decodeDocument()
                counter.value += 100
                try tx.park(counter)
                return true
            }
        }
        #expect(try store.read { try $0.retrieveAll(Counter.self) }.map(\.value) == [100, 101, 102, 103, 104])
        // Any read of the view after a write began (LMDB may have moved its bytes): a typed error.
        let reads: [(borrowing DocumentView<Counter>) throws -> Void] = [
            { _ = try $0.value }, { _ = try $0.id }, { _ = try $0.storedRevision }, { _ = try $0.decodeDocument() },
        ]
        for read in reads {
            let error = #expect(throws: DepotError.self) {
                try store.write { tx in
                    try tx.forEachView(Counter.self) { view in
                        try tx.park(Counter(id: 99, value: 0))
                        try read(view)
                        return true
                    }
                }
            }
            #expect(error?.code == .transactionMisuse)
        }
        // The failed transactions kept nothing.
        #expect(try store.read { try $0.exists(Counter.self, id: 99) } == false)
    }

    @Test func aFieldOfTheWrongTypeOrADamagedRecordIsAnErrorNamingIt() throws {
        try store.write { tx in
            var odd = DynamicObject(entity: "Employee", id: "odd")
            odd.salary = "lots"
            try tx.park(odd)
        }
        let mistyped = #expect(throws: DepotError.self) {
            try store.read { tx in try tx.forEachView(Employee.self) { _ = try $0.salary; return true } }
        }
        #expect(mistyped?.code == .decodingFailed)
        #expect("\(mistyped.map { $0 } as Any)".contains("salary"))
        #expect("\(mistyped.map { $0 } as Any)".contains("odd"))

        try store.write { tx in try tx.park(sampleEmployee("e1")) }
        try damageStoredRecord(in: store, collection: "Employee", id: "e1")
        let damaged = #expect(throws: DepotError.self) {
            try store.read { tx in try tx.forEachView(Employee.self) { _ in true } }
        }
        #expect(damaged?.code == .checksumMismatch)
    }
}

import DepotLMDB
import Foundation
import Testing
import DepotTestSupport
@testable import Depot
@testable import DepotCore

/// Seeded random damage to stored records, read back through the store: a damaged record must
/// be reported (checksum or record error naming collection and ID), never decoded as something
/// else, never crash.
@Suite("Record fuzzing through the store")
struct RecordFuzzTests {
    static let iterations = ProcessInfo.processInfo.environment["DEPOT_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 20_000

    func sampleStore(_ folder: TemporaryFolder) throws -> (Store, [String]) {
        let store = try Store(path: folder.path)
        var ids: [String] = []
        try store.write { tx in
            for i in 0..<20 {
                let id = "e\(i)"
                ids.append(id)
                var employee = Employee(id: id, name: "name \(i) ✓", salary: i * 1000 - 5000,
                                        address: Address(street: String(repeating: "s", count: i * 7), zip: "\(10000 + i)"))
                if i % 3 == 0 { employee.department = Department(id: "d\(i % 2)", name: "dept") }
                if i % 4 == 0 { employee.mentors = [Department(id: "m\(i)", name: "mentor")] }
                try tx.park(employee)
            }
        }
        return (store, ids)
    }

    func mutate(_ bytes: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var bytes = bytes
        for _ in 0..<(1 + Int(rng.next() % 3)) {
            let i = Int(rng.next() % UInt64(bytes.count))
            switch rng.next() % 6 {
            case 0: bytes[i] ^= UInt8(1) << UInt8(rng.next() % 8)
            case 1: bytes[i] = UInt8(truncatingIfNeeded: rng.next())
            case 2: bytes.removeSubrange(max(1, i)...)
            case 3: bytes.insert(UInt8(truncatingIfNeeded: rng.next()), at: i)
            case 4: bytes.append(contentsOf: (0..<Int(rng.next() % 8 + 1)).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
            default: bytes.replaceSubrange(i..<min(bytes.count, i + 4), with: [0xFF, 0xFF, 0xFF, 0x7F])
            }
            if bytes.isEmpty { bytes = [0] }
        }
        return bytes
    }

    /// Raw bytes under `id` in the Employee database, through the same transaction.
    func raw(_ tx: DocumentTransaction) throws -> Database<StringCodec, BytesCodec> {
        try #require(tx.rawLMDBForTests).openDatabase("depot.doc/default/Employee", key: StringCodec.self, value: BytesCodec.self, create: false)
    }

    @Test func damagedRecordsAlwaysThrowChecksumOrRecordErrors() throws {
        let folder = TemporaryFolder()
        let (store, ids) = try sampleStore(folder)
        var rng = SplitMix64(seed: 0xF1A5)
        var outcomes: [String: Int] = [:]
        struct Discard: Error {}
        // One write transaction that is rolled back at the end: damage, read back, restore.
        _ = try? store.write { tx in
            let txn = try #require(tx.rawLMDBForTests)
            let db = try raw(tx)
            for _ in 0..<Self.iterations {
                let id = ids[Int(rng.next() % UInt64(ids.count))]
                let original = try #require(try txn.get(id, in: db))
                let damaged = mutate(original, &rng)
                if damaged == original { continue }
                try txn.put(damaged, forKey: id, in: db)
                do {
                    _ = try tx.retrieve(Employee.self, id: id)
                    Issue.record("\(id): a damaged record decoded")
                } catch let error as DepotError where error.code == .checksumMismatch {
                    #expect(error.alias == "default" && error.collection == "Employee" && error.id == id)
                    outcomes["checksum", default: 0] += 1
                } catch let error as DepotError where error.code == .corruptRecord {
                    #expect(error.collection == "Employee" && error.id == id)
                    outcomes["record", default: 0] += 1
                } catch {
                    Issue.record("\(id): unexpected \(error)")
                }
                try txn.put(original, forKey: id, in: db)
            }
            throw Discard()
        }
        #expect(try store.retrieveAll(Employee.self).count == 20, "the store is unchanged")
        print("record fuzzing (checksummed): \(Self.iterations) iterations: \(outcomes)")
    }

    /// Damage with a valid checksum (as if the encoder had written garbage): the decoder behind
    /// the store must throw a typed error or decode, never crash.
    @Test func resealedGarbageNeverCrashesTheDecoder() throws {
        let folder = TemporaryFolder()
        let (store, ids) = try sampleStore(folder)
        var rng = SplitMix64(seed: 0x5EA1)
        var outcomes: [String: Int] = [:]
        struct Discard: Error {}
        _ = try? store.write { tx in
            let txn = try #require(tx.rawLMDBForTests)
            let db = try raw(tx)
            for _ in 0..<Self.iterations {
                let id = ids[Int(rng.next() % UInt64(ids.count))]
                let original = try #require(try txn.get(id, in: db))
                var damaged = [UInt8](original.prefix(Record.headerSize)) + mutate(Array(original.dropFirst(Record.headerSize)), &rng)
                Record.seal(&damaged)
                try txn.put(damaged, forKey: id, in: db)
                do {
                    _ = try tx.retrieve(Employee.self, id: id)
                    outcomes["decoded", default: 0] += 1
                } catch let error as DepotError {
                    outcomes[Mirror(reflecting: error).children.first?.label ?? "\(error)", default: 0] += 1
                } catch {
                    Issue.record("\(id): untyped \(error)")
                }
                do {
                    try tx.export(collection: "Employee") { _ in true }
                } catch is DepotError {
                } catch {
                    Issue.record("export: untyped \(error)")
                }
                // Fields read in place: a view scan and a projection walk the damaged bytes.
                do {
                    try tx.forEachView(Employee.self) { view in
                        _ = try view.name
                        _ = try view.salary
                        _ = try view.field(\.address.zip)
                        _ = try view.department
                        return true
                    }
                } catch is DepotError {
                } catch {
                    Issue.record("view: untyped \(error)")
                }
                do {
                    _ = try tx.field(\Employee.salary, of: id)
                    _ = try tx.field(\Employee.name, of: id)
                } catch is DepotError {
                } catch {
                    Issue.record("field: untyped \(error)")
                }
                try txn.put(original, forKey: id, in: db)
            }
            throw Discard()
        }
        #expect(try store.retrieveAll(Employee.self).count == 20)
        print("record fuzzing (re-sealed): \(Self.iterations) iterations: \(outcomes)")
    }
}

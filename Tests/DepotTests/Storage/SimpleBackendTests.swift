import Foundation
import Testing
import DepotTestSupport
@testable import Depot
@testable import DepotCore
@testable import DepotEngine
import DepotDriverTesting

/// A dictionary backend that can be told to fail, counting what it is asked.
final class DictionaryBackend: SimpleStorageBackend, @unchecked Sendable {
    // @unchecked Sendable: every property is guarded by `lock`.
    struct Refused: Error {}
    private let lock = NSLock()
    private var values: [String: Data] = [:]
    private var failAfter: Int?
    private var saves = 0

    var snapshot: [String: Data] { lock.withLock { values } }
    var saveCount: Int { lock.withLock { saves } }
    func failSaves(after count: Int?) { lock.withLock { failAfter = count } }
    func put(_ data: Data, _ key: String) { lock.withLock { values[key] = data } }

    func save(_ data: Data, forKey key: String) throws {
        try lock.withLock {
            if let left = failAfter {
                if left == 0 { throw Refused() }
                failAfter = left - 1
            }
            saves += 1
            values[key] = data
        }
    }
    func load(forKey key: String) throws -> Data? { lock.withLock { values[key] } }
    func delete(forKey key: String) throws { lock.withLock { values[key] = nil } }
    func keys() throws -> [String] { lock.withLock { Array(values.keys) } }
}

@Suite("Simple storage backends")
struct SimpleBackendTests {
    @Test func readmeDefaultsDriverPersistsAcrossReopen() throws {
        let folder = TemporaryFolder()
        let file = URL(fileURLWithPath: folder.sub("defaults.plist"))
        do {
            let store = try Store(driver: SimpleBackendDriver(backend: FileDefaults(file: file)))
            try store.write { tx in
                try tx.park(sampleEmployee("e2", department: Department(id: "d", name: "Ops")))
                try tx.park([Counter(id: 10, value: 1), Counter(id: -3, value: 2)])
                for i in 0..<10 { try tx.park(staff(i)) }
            }
            let kv = store.keyValue()
            kv["name"] = "Ada"
            try kv.save()
        }
        let store = try Store(driver: SimpleBackendDriver(backend: FileDefaults(file: file)))
        #expect(try store.retrieve(Employee.self, id: "e2")?.department?.name == "Ops")
        #expect(try store.retrieveAll(Counter.self).map(\.id) == [-3, 10])
        let result = try store.read { tx in try tx.execute(FetchRequest<Staff>().matching(\.salary, .equalTo(staff(3).salary))) }
        #expect(result.plan.usedIndex && result.documents.map(\.id) == [3])
        #expect((store.keyValue()["name"] as String?) == "Ada")
    }

    @Test func onlyChangedRecordsAreWrittenThroughUnderThePrefix() throws {
        let backend = DictionaryBackend()
        backend.put(Data("mine".utf8), "app.setting")
        let store = try Store(driver: SimpleBackendDriver(backend: backend, keyPrefix: "db."))
        try store.write { tx in for i in 0..<20 { try tx.park(Counter(id: Int64(i), value: i)) } }
        let before = backend.saveCount
        try store.write { tx in try tx.park(Counter(id: 5, value: 50)) }
        #expect(backend.saveCount - before <= 2, "one record (and at most one bookkeeping key), not the collection")
        #expect(backend.snapshot["app.setting"] == Data("mine".utf8), "keys without the prefix are left alone")
        #expect(backend.snapshot.keys.filter { $0 != "app.setting" }.allSatisfy { $0.hasPrefix("db.") })
        try store.write { tx in _ = try tx.delete(Counter.self, id: 5) }
        let reopened = try Store(driver: SimpleBackendDriver(backend: backend, keyPrefix: "db."))
        #expect(try reopened.count(Counter.self) == 19)
    }

    @Test func aFailedWriteThroughFailsTheCommitAndReloads() throws {
        let backend = DictionaryBackend()
        let driver = try SimpleBackendDriver(backend: backend)
        let store = try Store(driver: driver)
        try store.write { tx in try tx.park(Counter(id: 1, value: 1)) }
        backend.failSaves(after: 0)
        let wrapped = #expect(throws: DepotError.self) {
            try store.write { tx in try tx.park([Counter(id: 2, value: 2), Counter(id: 3, value: 3)]) }
        }
        #expect(wrapped?.code == .storage)
        let error = wrapped?.underlyingError as? SimpleBackendError
        #expect(error?.kind == .writeThroughFailed)
        #expect(error?.description.contains("Refused") == true, "the message names the backend's error type")
        backend.failSaves(after: nil)
        #expect(try store.retrieveAll(Counter.self).map(\.id) == [1], "memory serves what the backend holds")
        try store.write { tx in try tx.park(Counter(id: 5, value: 5)) }
        #expect(try Store(driver: SimpleBackendDriver(backend: backend)).retrieveAll(Counter.self).map(\.id) == [1, 5])
    }

    @Test func unreadableDataAndAnEmptyPrefixAreTypedErrors() throws {
        let backend = DictionaryBackend()
        backend.put(Data([7, 7]), "depot.e.6b.zz")
        #expect {
            _ = try SimpleBackendDriver(backend: backend)
        } throws: { error in
            (error as? SimpleBackendError)?.kind == .corruptEntry && "\(error)".contains("depot.e.6b.zz")
        }
        #expect(throws: DepotError.self) { _ = try SimpleBackendDriver(backend: DictionaryBackend(), keyPrefix: "") }
    }

    @Test func multiValueLayoutRoundTrips() throws {
        let values: [[UInt8]] = [[], [1], [2, 3]]
        let decoded = SimpleBackendLayout.decode(SimpleBackendLayout.encode(values, multiValue: true))
        #expect(decoded?.values == values && decoded?.multiValue == true)
        #expect(SimpleBackendLayout.decode(Data([1, 0, 0, 0, 9, 1])) == nil, "a truncated value is refused")
        #expect(SimpleBackendLayout.unhex("0aff") == [0x0a, 0xff] && SimpleBackendLayout.unhex("0g") == nil)
    }
}

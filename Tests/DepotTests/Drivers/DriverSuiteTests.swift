import Foundation
import Testing
import DepotTestSupport
@testable import Depot
import DepotLMDB

/// The drivers every shared test runs against.
enum DriverKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case lmdb, memory, jsonFiles
    var testDescription: String { rawValue }

    func makeStore(_ folder: TemporaryFolder) throws -> Store {
        switch self {
        case .lmdb: return try Store(path: folder.sub("lmdb"))
        case .memory: return try Store(driver: InMemoryDriver())
        case .jsonFiles: return try Store(driver: JSONFileDriver(folder: URL(fileURLWithPath: folder.sub("json"))))
        }
    }
}

@Suite("Every storage driver")
struct DriverSuiteTests {
    @Test(arguments: DriverKind.allCases)
    func documentsReferencesAndOrder(_ kind: DriverKind) throws {
        let folder = TemporaryFolder()
        let store = try kind.makeStore(folder)
        try store.write { tx in
            try tx.park(sampleEmployee("e2", department: Department(id: "d", name: "Ops")))
            try tx.park(sampleEmployee("e1"))
            try tx.park([Counter(id: 10, value: 1), Counter(id: -3, value: 2), Counter(id: 2, value: 3)])
        }
        try store.read { tx throws in
            #expect(try tx.retrieve(Employee.self, id: "e2")?.department?.name == "Ops")
            #expect(try tx.retrieveAll(Employee.self).map(\.id) == ["e1", "e2"])
            #expect(try tx.retrieveAll(Counter.self).map(\.id) == [-3, 2, 10])
            #expect(try tx.count(Department.self) == 1)
            #expect(try tx.exists(Employee.self, id: "e1"))
        }
        try store.write { tx in _ = try tx.delete(Employee.self, id: "e1") }
        #expect(try store.retrieveAll(Employee.self).map(\.id) == ["e2"])
    }

    @Test(arguments: DriverKind.allCases)
    func aliasesIndexesQueriesAndSync(_ kind: DriverKind) throws {
        let folder = TemporaryFolder()
        let store = try kind.makeStore(folder)
        try store.write { tx in
            for i in 0..<40 { try tx.park(staff(i)) }
            try tx.alias("B").park(staff(99))
            try tx.park(Task2(id: "t", title: "x"))
        }
        try store.read { tx throws in
            let result = try tx.execute(FetchRequest<Staff>().matching(\.salary, .equalTo(staff(5).salary)))
            #expect(result.plan.usedIndex)
            #expect(result.documents.map(\.id) == (0..<40).filter { staff($0).salary == staff(5).salary })
            let prefix = try tx.fetch(FetchRequest<Staff>().matching(\.name, .hasPrefix("Grace")).sorted(by: SortDescriptor(\.id)))
            #expect(prefix.map(\.id) == (0..<40).filter { staff($0).name.hasPrefix("Grace") })
            #expect(try tx.alias("B").count(Staff.self) == 1)
            #expect(try tx.retrieve(Task2.self, withSyncStatus: .undetermined).map(\.id) == ["t"])
        }
        #expect(try store.aliases() == ["B", "default"])
        #expect(throws: DepotError.self) {
            try store.write { tx in try tx.park(Staff(id: 500, name: "X", email: staff(1).email, salary: 1, company: "Y")) }
        }
        let id = try store.uniqueIDs.next()
        #expect(try store.uniqueIDs.next() > id)
    }

    @Test(arguments: DriverKind.allCases)
    func changeSetsAreDelivered(_ kind: DriverKind) throws {
        let folder = TemporaryFolder()
        let store = try kind.makeStore(folder)
        let observer = RecordingObserver()
        store.addObserver(observer)
        try store.write { tx in try tx.park(sampleEmployee("a")) }
        try store.write { tx in try tx.park(sampleEmployee("a", salary: 2)) }
        #expect(observer.sets.map { $0.created(Employee.self) } == [["a"], []])
        #expect(observer.sets.last?.updated(Employee.self) == ["a"])
    }

    /// Rollback is a capability: with transactions a throwing write leaves nothing; without, the
    /// operations done before the throw stay (as the driver's capabilities say).
    @Test(arguments: DriverKind.allCases)
    func rollbackFollowsTheCapabilities(_ kind: DriverKind) throws {
        struct Boom: Error {}
        let folder = TemporaryFolder()
        let store = try kind.makeStore(folder)
        #expect(throws: Boom.self) {
            try store.write { tx in
                try tx.park(sampleEmployee("partial"))
                throw Boom()
            }
        }
        let stayed = try store.exists(Employee.self, id: "partial")
        #expect(stayed == !store.capabilities.contains(.transactions))
        if store.capabilities.contains(.savepoints) {
            try store.write { tx in
                _ = try? tx.savepoint { try tx.park(sampleEmployee("undone")); throw Boom() }
                try tx.park(sampleEmployee("kept"))
            }
            #expect(try !store.exists(Employee.self, id: "undone") && store.exists(Employee.self, id: "kept"))
        } else {
            #expect(throws: DepotError.self) { try store.write { tx in try tx.savepoint { } } }
        }
    }

    @Test func inMemorySnapshotsAndWriterRules() throws {
        let driver = InMemoryDriver()
        let store = try Store(driver: driver)
        try store.write { tx in try tx.park(sampleEmployee("a")) }
        try store.read { tx throws in
            // A write committed meanwhile is not seen by this snapshot.
            let other = Thread { _ = try? store.write { tx in try tx.park(sampleEmployee("b")) } }
            other.start()
            while try store.count(Employee.self) < 2 { usleep(1000) }
            #expect(try tx.count(Employee.self) == 1)
        }
        #expect(throws: DepotError.self) { try store.write { _ in try store.write { _ in } } }
        #expect(throws: DepotError.self) { _ = try store.environment }
        #expect(store.path == "memory:memory")
    }
}

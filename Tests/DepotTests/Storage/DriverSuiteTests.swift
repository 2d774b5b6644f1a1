import Foundation
import Testing
import DepotTestSupport
@testable import Depot
@testable import DepotCore
import DepotDriverTesting
import DepotLMDB

/// The drivers every shared test runs against (the storage and document checks themselves live
/// in the public `DepotDriverTesting` library).
enum DriverKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case lmdb, memory, jsonFiles, simpleBackend
    var testDescription: String { rawValue }

    func makeStore(_ folder: TemporaryFolder) throws -> Store {
        try Store(driver: makeDriver(folder))
    }

    func makeDriver(_ folder: TemporaryFolder, _ name: String = "db") throws -> any StorageDriver {
        switch self {
        case .lmdb: return LMDBDriver(environment: try Environment.open(path: folder.sub("lmdb-\(name)"), options: StoreOptions().environment))
        case .memory: return InMemoryDriver()
        case .jsonFiles: return try JSONFileDriver(folder: URL(fileURLWithPath: folder.sub("json-\(name)")))
        case .simpleBackend: return try SimpleBackendDriver(backend: FileDefaults(file: URL(fileURLWithPath: folder.sub("\(name).plist"))))
        }
    }
}

@Suite("Every storage driver")
struct DriverSuiteTests {
    /// The public conformance suite (`DepotDriverTesting`), a fresh driver per check.
    @Test(arguments: DriverKind.allCases)
    func passesTheConformanceSuite(_ kind: DriverKind) throws {
        let folder = TemporaryFolder()
        var made = 0
        let report = try DriverConformance.check(makeDriver: {
            made += 1
            return try kind.makeDriver(folder, "check\(made)")
        })
        #expect(report.passed.count + report.skipped.count == DriverConformance.checkNames.count)
        let expectedSkips = kind == .jsonFiles ? 5 : 0 // rollback, aborted drop, savepoints, snapshots (two)
        #expect(report.skipped.count == expectedSkips, "\(report)")
    }

    /// The suite fails, naming the check, for a driver that claims more than it does.
    @Test func reportsTheFirstFailingCheck() throws {
        let folder = TemporaryFolder()
        var made = 0
        let failure = #expect(throws: DriverConformanceFailure.self) {
            try DriverConformance.check(makeDriver: {
                made += 1
                return ClaimsTransactions(inner: try JSONFileDriver(folder: URL(fileURLWithPath: folder.sub("j\(made)"))))
            })
        }
        #expect(failure?.check == "a throwing write rolls back entirely")
        #expect(failure?.description.contains("must leave nothing") == true)
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

/// A JSON-file driver that wrongly claims rollback.
private final class ClaimsTransactions: StorageDriver {
    let inner: JSONFileDriver
    init(inner: JSONFileDriver) { self.inner = inner }
    var capabilities: StorageCapabilities { [.transactions] }
    var location: String { inner.location }
    func read<R>(_ body: (any StorageTransaction) throws -> R) throws -> R { try inner.read(body) }
    func write<R>(_ body: (any StorageTransaction) throws -> R) throws -> R { try inner.write(body) }
}

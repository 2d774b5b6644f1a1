import Foundation
import Testing
import DepotTestSupport
import DepotLMDB
@testable import Depot
@testable import DepotCore

/// The document layer (DepotCore) knows LMDB only through `EnvironmentBackedDriver`; these check
/// that the LMDB driver (module Depot) keeps what the core assumes of it.
@Suite("Layering: DepotCore and its LMDB driver")
struct LayeringTests {
    @Test func theCoreKeyLimitIsLMDBs() {
        #expect(StorageLimits.standardMaxKeySize == Environment.standardMaxKeySize)
    }

    @Test func storesOnOneEnvironmentShareOneCoreThroughAnyDriverObject() throws {
        let folder = TemporaryFolder()
        let byPath = try Store(path: folder.path)
        let environment = try byPath.environment
        let byDriver = try Store(driver: LMDBDriver(environment: environment))
        let byEnvironment = try Store(environment: environment)
        #expect(byPath.core === byDriver.core)
        #expect(byPath.core === byEnvironment.core)
        #expect(byPath.core.native != nil)
        // A document written through one handle is read through another.
        try byDriver.write { _ = try $0.put(document: ["name": "a"], in: "Things", id: "a") }
        #expect(try byPath.read { try $0.document(in: "Things", id: "a") } != nil)
    }

    @Test func otherDriversHaveNoLMDBExtras() throws {
        let store = try Store(driver: InMemoryDriver())
        #expect(store.core.native == nil)
        #expect(throws: DepotError.self) { _ = try store.environment }
        #expect(throws: DepotError.self) { _ = try store.beginTransaction() }
    }
}

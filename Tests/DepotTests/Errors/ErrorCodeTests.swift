import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

/// Misuse is reported under a code that says what was wrong (one code per kind of mistake, not
/// one catch-all), so that a caller can tell them apart with `catch DepotError.<code>`.
@Suite("Error codes name the mistake")
struct ErrorCodeTests {
    @Test func eachMistakeHasItsOwnCode() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        // A scoped transaction commits when its closure returns.
        let committed = #expect(throws: DepotError.self) { try store.write { tx in try tx.commit() } }
        #expect(committed?.code == .transactionMisuse)
        // A malformed query condition.
        let query = #expect(throws: DepotError.self) { _ = try FieldCondition(field: "age", operator: "≈", text: "3") }
        #expect(query?.code == .invalidQuery)
        #expect(query?.message.contains("unknown operator") == true)
        // LMDB-only features on another driver.
        let memory = try Store(driver: InMemoryDriver())
        let explicit = #expect(throws: DepotError.self) { _ = try memory.beginTransaction() }
        #expect(explicit?.code == .unsupported)
        let environment = #expect(throws: DepotError.self) { _ = try memory.environment }
        #expect(environment?.code == .unsupported)
        // The patterns match by code.
        do {
            _ = try memory.beginTransaction()
            Issue.record("no error")
        } catch DepotError.unsupported {
        } catch {
            Issue.record("caught as another code: \(error)")
        }
    }

    @Test func everyCodeIsListedOnceAndNamedByItsRawValue() {
        let codes = DepotError.Code.all
        #expect(Set(codes.map(\.rawValue)).count == codes.count)
        #expect(codes.contains(.transactionMisuse) && codes.contains(.storageInconsistent) && codes.contains(.duplicateMigration))
    }
}

import Foundation
import Testing
import DepotLMDB
import DepotTestSupport
@testable import Depot
@testable import DepotCore

private struct Mine: Error, Equatable {}

/// A caller of the document layer catches `DepotError` only: the driver's errors come wrapped
/// (code `storage`), its own patterns still match, and the caller's own errors pass untouched.
@Suite("Storage errors, wrapped")
struct StorageErrorTests {
    let folder = TemporaryFolder()

    @Test func aFullMapIsADepotErrorThatLMDBsPatternMatches() throws {
        var options = StoreOptions()
        options.environment.mapSize = 1 << 20
        options.environment.automaticGrowth = false
        let store = try Store(path: folder.path, options: options)
        let big = String(repeating: "x", count: 64 << 10)
        var caught: (any Error)?
        do {
            try store.write { tx in
                for i in 0..<64 { try tx.park(Department(id: "d\(i)", name: big)) }
            }
        } catch {
            caught = error
        }
        let error = try #require(caught as? DepotError, "\(String(describing: caught))")
        #expect(error.code == .storage)
        #expect(LMDBError.mapFull ~= error)
        #expect((error.underlyingError as? LMDBError)?.code == LMDBError.mapFull.code)
        var matched = false
        do { throw error } catch LMDBError.mapFull { matched = true } catch {}
        #expect(matched, "catch LMDBError.mapFull still matches")
        // All or nothing: nothing of the failed write is stored.
        #expect(try store.read { try $0.retrieveAll(Department.self) }.isEmpty)
    }

    @Test func theCallersOwnErrorsPassUntouched() throws {
        let store = try Store(path: folder.path)
        #expect(throws: Mine()) { try store.write { _ in throw Mine() } }
        #expect(throws: Mine()) { try store.read { _ in throw Mine() } }
    }

    @Test func aDepotErrorIsNotWrappedTwice() {
        let inner = DepotError.storage(LMDBError.mapFull)
        #expect(DepotError.storage(wrapping: inner) == inner)
        #expect(DepotError.storage(wrapping: inner).underlyingError is LMDBError)
    }
}

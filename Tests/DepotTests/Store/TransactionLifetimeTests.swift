import Foundation
import Testing
import DepotTestSupport
@testable import Depot
@testable import DepotCore
import DepotEngine

private struct Boom: Error {}

/// A write's state (its context, which holds the storage transaction, and the after-commit hook
/// that captures it) is let go when the write returns: kept, every write would leak both
/// (the PostgreSQL driver did, 2.5–3.2 KB per write, until 2026-12-06).
@Suite("Transaction lifetime")
struct TransactionLifetimeTests {
    @Test(arguments: DriverKind.allCases)
    func aWritesContextIsLetGoWhenItReturns(_ kind: DriverKind) throws {
        let folder = TemporaryFolder()
        let store = try kind.makeStore(folder)
        weak var committed: TransactionContext?
        weak var thrown: TransactionContext?
        try store.write { tx in
            try tx.park(sampleEmployee("a"))
            committed = tx.context
        }
        #expect(throws: Boom.self) {
            try store.write { tx in
                try tx.park(sampleEmployee("b"))
                thrown = tx.context
                throw Boom()
            }
        }
        #expect(try store.count(Employee.self) == (kind == .jsonFiles ? 2 : 1))
        #expect(committed == nil, "a committed write's context outlived it")
        #expect(thrown == nil, "the context of a write that threw outlived it")
    }

    /// LMDB's group commit, and the other drivers' calls on the blocking-call threads.
    @Test(arguments: DriverKind.allCases)
    func anAsyncWritesContextIsLetGoWhenItReturns(_ kind: DriverKind) async throws {
        let folder = TemporaryFolder()
        let store = try kind.makeStore(folder)
        let seen = WeakProbe()
        try await store.write { tx in
            try tx.park(sampleEmployee("a"))
            seen.hold(tx.context)
        }
        #expect(try store.count(Employee.self) == 1)
        #expect(seen.isReleased, "a group-committed write's context outlived it")
    }
}

#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import Testing

/// Records the change sets a store publishes.
final class RecordingObserver: StoreObserver, @unchecked Sendable {
    // @unchecked Sendable: `sets` is guarded by `lock`.
    private let lock = NSLock()
    private var recorded: [ChangeSet] = []
    var sets: [ChangeSet] { lock.withLock { recorded } }
    func store(_ store: Store, didCommit changes: ChangeSet) { lock.withLock { recorded.append(changes) } }
}

/// Two drivers on one schema stand for two hosts: the watcher of one reports the other's commits
/// (the change log lives in the shared tables, written in the same transaction as the changes).
@Suite("Changes of other hosts", .enabled(if: PostgresTestServer.isAvailable, "DEPOT_POSTGRES_URL is not set"))
struct ExternalChangeTests {
    @Test func committedChangesOfAnotherHostAreReportedAndRolledBackOnesNever() throws {
        let schema = PostgresTestServer.uniqueSchema()
        let hostA = try PostgresTestServer.driver(schema: schema)
        let hostB = try PostgresTestServer.driver(schema: schema)
        defer {
            try? hostA.dropSchema()
            hostA.close()
            hostB.close()
        }
        let storeA = try Store(driver: hostA)
        let storeB = try Store(driver: hostB)
        let observer = RecordingObserver()
        storeB.addObserver(observer)
        let watcher = try storeB.watchExternalChanges(every: .milliseconds(20))
        defer { watcher.stop() }
        // Writers look for watchers at most once a second: keep writing until one is logged.
        var i = 0
        let seen = try eventually(within: 15) {
            i += 1
            try storeA.write { tx in try tx.park(staff(i)) }
            return observer.sets.contains { $0.isExternal && !$0.created(Staff.self).isEmpty }
        }
        #expect(seen)
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try storeA.write { tx in
                try tx.park(staff(900))
                throw Boom()
            }
        }
        try storeA.write { tx in try tx.park(staff(901)) }
        #expect(eventually(within: 15) { observer.sets.contains { $0.isExternal && $0.created(Staff.self).contains(901) } })
        #expect(!observer.sets.contains { $0.created(Staff.self).contains(900) }, "a rolled-back write is never reported")
    }
}
#endif

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

/// Messages collected from several threads.
final class ErrorList: @unchecked Sendable {
    // @unchecked Sendable: `items` is guarded by `lock`.
    private let lock = NSLock()
    private var items: [String] = []
    var all: [String] { lock.withLock { items } }
    func append(_ item: String) { lock.withLock { items.append(item) } }
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

    /// Writers on two hosts log side by side (entries numbered by their transaction IDs, no
    /// shared counter row), and a third host's watcher reports every committed change once.
    @Test func concurrentWritersOfTwoHostsAreEachReportedOnce() throws {
        try PostgresTestServer.withHosts(3) { drivers in
            let writers = try drivers[0..<2].map { try Store(driver: $0) }
            let watching = try Store(driver: drivers[2])
            let observer = RecordingObserver()
            watching.addObserver(observer)
            let watcher = try watching.watchExternalChanges(every: .milliseconds(20))
            defer { watcher.stop() }
            // Writers look for watchers at most once a second: write until one is logged.
            var warmUp = 10_000
            #expect(try eventually(within: 15) {
                warmUp += 1
                try writers[0].write { tx in try tx.park(staff(warmUp)) }
                try writers[1].write { tx in try tx.park(staff(warmUp + 5_000)) }
                let created = observer.sets.filter(\.isExternal).flatMap { $0.created(Staff.self) }
                return created.contains { (10_000..<15_000).contains($0) } && created.contains { $0 >= 15_000 }
            })
            // Four threads, two per host, 25 one-document transactions each.
            let errors = ErrorList()
            let group = DispatchGroup()
            for thread in 0..<4 {
                DispatchQueue.global().async(group: group) {
                    for i in 0..<25 {
                        do {
                            try writers[thread % 2].write { tx in try tx.park(staff(thread * 100 + i)) }
                        } catch {
                            errors.append("\(error)")
                        }
                    }
                }
            }
            group.wait()
            #expect(errors.all.isEmpty, "\(errors.all)")
            let expected = Set((0..<4).flatMap { t in (0..<25).map { t * 100 + $0 } })
            func reported() -> [Int] { observer.sets.filter(\.isExternal).flatMap { $0.created(Staff.self) }.filter { $0 < 1_000 } }
            #expect(eventually(within: 30) { Set(reported()) == expected })
            #expect(reported().count == expected.count, "each committed change reported once")
            // No writer wrote the counter row: entries are numbered by transaction IDs.
            let counter = try writers[0].driver.read { txn -> Bool in
                guard let meta = try txn.keyspace(named: "depot.meta", create: false, multiValue: false) else { return false }
                return try Array("changelog/next".utf8).withUnsafeBytes { try txn.withValue(forKey: $0, in: meta) { _ in true } } ?? false
            }
            #expect(!counter)
        }
    }
}
#endif

#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import PostgresNIO
import Synchronization
import Testing

/// The statements the driver folds together to save round trips keep their promises: `COMMIT`
/// sent behind unanswered puts never commits part of a write, the insert path stores a key once
/// and reports the stored value otherwise, and a keyspace dropped under either is retried.
@Suite("PostgreSQL folded statements", .enabled(if: PostgresTestServer.isAvailable, "DEPOT_POSTGRES_URL is not set"))
struct RoundTripTests {
    /// Bytes that do not compress: as a key, larger than a B-tree entry may be (the server
    /// fails the insert with SQLSTATE 54000).
    static func oversizedKey() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<8000).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// A put that fails on the server while the closure catches the error and returns: the
    /// transaction was aborted, so the write must fail rather than report a commit, and none of
    /// its puts may be stored.
    @Test func aFailureTheClosureCaughtFailsTheWrite() throws {
        try PostgresTestServer.withDriver { driver in
            try driver.write { txn in _ = try txn.keyspace(named: "t", create: true, multiValue: false) }
            var caught = false
            #expect(throws: PostgresDriverError.self) {
                try driver.write { txn in
                    guard let space = try txn.keyspace(named: "t", create: false, multiValue: false) else { return }
                    try txn.store([1], forKey: [1], in: space)
                    try txn.store([2], forKey: Self.oversizedKey(), in: space)
                    // The failed put's answer is checked at the next wait; the closure swallows it.
                    do { _ = try txn.value([1], in: space) } catch {
                        // A `DepotError` (code `storage`) around the server's error, as the LMDB
                        // driver's: the closure catches one error type.
                        caught = (error as? DepotError)?.underlyingError is PostgresDriverError
                    }
                }
            }
            #expect(caught)
            let stored = try driver.read { txn in
                try txn.keyspace(named: "t", create: false, multiValue: false).map { try txn.value([1], in: $0) } ?? nil
            }
            #expect(stored == nil, "a put of an aborted write was committed")
        }
    }

    /// The last put fails and nothing waits for it before `COMMIT` is sent: the write fails and
    /// stores nothing.
    @Test func aLastPutThatFailsRollsTheCommitBack() throws {
        try PostgresTestServer.withDriver { driver in
            #expect(throws: PostgresDriverError.self) {
                try driver.write { txn in
                    guard let space = try txn.keyspace(named: "t", create: true, multiValue: false) else { return }
                    try txn.store([1], forKey: [1], in: space)
                    try txn.store([2], forKey: Self.oversizedKey(), in: space)
                }
            }
            let exists = try driver.read { try $0.keyspace(named: "t", create: false, multiValue: false) != nil }
            #expect(!exists, "the keyspace created by the failed write was committed")
        }
    }

    /// `putIfAbsent` of `value` under `key`: whether it stored it, and the stored value it was
    /// shown otherwise.
    func insert(_ txn: any StorageTransaction, _ space: Keyspace, _ key: [UInt8], _ value: [UInt8]) throws -> (Bool, [UInt8]?) {
        var seen: [UInt8]?
        let stored = try value.withUnsafeBytes { v in
            try key.withUnsafeBytes { try txn.putIfAbsent(v, forKey: $0, in: space) { seen = [UInt8]($0) } }
        }
        return (stored, seen)
    }

    /// `putIfAbsent` stores an absent key and reports true; for a present key it stores nothing
    /// and hands over the stored value, also for a key put earlier in the same transaction.
    @Test func putIfAbsentStoresOnceAndShowsTheStoredValue() throws {
        try PostgresTestServer.withDriver { driver in
            try driver.write { txn in
                let space = try #require(try txn.keyspace(named: "t", create: true, multiValue: false))
                #expect(try insert(txn, space, [1], [10]) == (true, nil))
                #expect(try insert(txn, space, [1], [11]) == (false, [10]))
                try txn.store([20], forKey: [2], in: space)
                #expect(try insert(txn, space, [2], [21]) == (false, [20]))
            }
            try driver.write { txn in
                let space = try #require(try txn.keyspace(named: "t", create: false, multiValue: false))
                #expect(try insert(txn, space, [1], [12]) == (false, [10]))
                #expect(try insert(txn, space, [3], [30]) == (true, nil))
            }
            try driver.read { txn in
                let space = try #require(try txn.keyspace(named: "t", create: false, multiValue: false))
                #expect(try txn.value([1], in: space) == [10])
                #expect(try txn.value([2], in: space) == [20])
                #expect(try txn.value([3], in: space) == [30])
            }
        }
    }

    /// A value a write read (under its key's lock) answers that write's `putIfAbsent` without a
    /// statement, until the write changes it: after a put, a delete or a savepoint rolled back,
    /// the stored value is asked for again.
    @Test func aValueReadInTheWriteAnswersItsPutIfAbsentUntilItChanges() throws {
        try PostgresTestServer.withDriver { driver in
            try driver.write { txn in
                let space = try #require(try txn.keyspace(named: "t", create: true, multiValue: false))
                try txn.store([10], forKey: [1], in: space)
                try txn.store([20], forKey: [2], in: space)
            }
            try driver.write { txn in
                let space = try #require(try txn.keyspace(named: "t", create: false, multiValue: false))
                #expect(try txn.value([1], in: space) == [10])
                #expect(try insert(txn, space, [1], [11]) == (false, [10]))
                try txn.store([12], forKey: [1], in: space)
                #expect(try insert(txn, space, [1], [13]) == (false, [12]))
                #expect(try [UInt8]([1]).withUnsafeBytes { try txn.delete(forKey: $0, in: space) })
                #expect(try insert(txn, space, [1], [14]) == (true, nil))
                #expect(try txn.value([2], in: space) == [20])
                _ = try? txn.savepoint {
                    try txn.store([21], forKey: [2], in: space)
                    throw CancellationError()
                }
                #expect(try insert(txn, space, [2], [22]) == (false, [20]))
            }
            try driver.read { txn in
                let space = try #require(try txn.keyspace(named: "t", create: false, multiValue: false))
                #expect(try txn.value([1], in: space) == [14])
                #expect(try txn.value([2], in: space) == [20])
            }
        }
    }

    /// Calls that wait for no answer (a read that reads nothing: its opening and its
    /// `COMMIT AND CHAIN` go out unanswered) leave their answers to the connection's next wait;
    /// they never pile up on it when no call waits: the connection reads them when more than a
    /// few are unread.
    @Test func unansweredStatementsDoNotPileUpOnAConnection() throws {
        try PostgresTestServer.withDriver(configure: { $0.maximumConnections = 1 }) { driver in
            var most = 0
            for _ in 0..<60 {
                try driver.read { _ in }
                most = max(most, driver.idleUnreadGroups)
            }
            #expect(most > 0, "these reads leave answers unread (else this test checks nothing)")
            #expect(most <= PostgresSession.unreadLimit, "unread groups on the idle connection: at most \(most)")
            try driver.write { txn in _ = try txn.keyspace(named: "after", create: true, multiValue: false) }
            let found = try driver.read { txn in try txn.keyspace(named: "after", create: false, multiValue: false) != nil }
            #expect(found, "the connection still answers after the reads")
        }
    }

    /// The statements of a write leave together (libpq's pipeline): a new document's write
    /// waits for the server once (its opening, its insert and `COMMIT` in one round trip), a
    /// document retrieved and parked back and a delete twice (the read the write needs first,
    /// then the rest with `COMMIT`), and ten new documents in one write once.
    @Test func aWriteWaitsForTheServerOncePerAnswerItNeeds() throws {
        try PostgresTestServer.withDriver(configure: { $0.maximumConnections = 1 }) { driver in
            let store = try Store(driver: driver)
            try store.write { tx in try tx.park(Ticket(id: 0, title: "warm", count: 0)) }
            var syncs: [Int] = []
            func roundTrips(_ body: () throws -> Void) rethrows -> Int {
                let before = driver.idleRoundTrips, syncsBefore = driver.idleSyncs
                try body()
                // The statements sent before each wait end with one Sync: one message of the
                // client, one answer of the server, per round trip.
                syncs.append(driver.idleSyncs - syncsBefore)
                return driver.idleRoundTrips - before
            }
            var inserts: [Int] = [], updates: [Int] = [], deletes: [Int] = [], batches: [Int] = []
            for id in 1...3 {
                inserts.append(try roundTrips { _ = try store.write { tx in try tx.park(Ticket(id: id, title: "t", count: 0)) } })
                updates.append(try roundTrips {
                    try store.write { tx in
                        guard var ticket = try tx.retrieve(Ticket.self, id: id) else { return }
                        ticket.count += 1
                        try tx.park(ticket)
                    }
                })
                deletes.append(try roundTrips { _ = try store.write { tx in try tx.delete(Ticket.self, id: id) } })
                batches.append(try roundTrips {
                    try store.write { tx in for n in 0..<10 { try tx.park(Ticket(id: 100 * id + n, title: "b", count: 0)) } }
                })
            }
            #expect(inserts.min() == 1, "round trips per new document: \(inserts)")
            #expect(updates.min() == 2, "round trips per update: \(updates)")
            #expect(deletes.min() == 2, "round trips per delete: \(deletes)")
            #expect(batches.min() == 1, "round trips per write of 10 new documents: \(batches)")
            // After the first round (which prepares statements), as many Syncs as round trips.
            let trips = inserts.indices.flatMap { [inserts[$0], updates[$0], deletes[$0], batches[$0]] }
            #expect(syncs.dropFirst(4) == trips.dropFirst(4), "one Sync per round trip: \(syncs) for \(trips)")
            #expect(try store.read { tx in try tx.retrieveAll(Ticket.self).count } == 31)
        }
    }

    /// A store whose collections have no index has no schema version: its writes take that
    /// absence on trust (checked before `COMMIT`) instead of reading it, so a new document's
    /// write waits once there too (it used to read the version first: two waits).
    @Test func aWriteToAStoreWithoutIndexesWaitsOnce() throws {
        struct Note: Document {
            static var collection: String { "Note" }
            var id: Int
            var text: String
        }
        try PostgresTestServer.withDriver(configure: { $0.maximumConnections = 1 }) { driver in
            let store = try Store(driver: driver)
            try store.write { tx in try tx.park(Note(id: 0, text: "warm")) }
            var inserts: [Int] = []
            for id in 1...3 {
                let before = driver.idleRoundTrips
                try store.write { tx in try tx.park(Note(id: id, text: "n")) }
                inserts.append(driver.idleRoundTrips - before)
            }
            #expect(inserts.max() == 1, "round trips per new document: \(inserts)")
            #expect(try store.read { tx in try tx.retrieveAll(Note.self).count } == 4)
        }
    }

    /// A get in a read closure waits for the server once, as `Store.retrieve` does: the
    /// document's read goes out behind the opening with the schema version, and the version is
    /// confirmed when both answered. Two gets of one type in one closure wait twice (the
    /// second for its own answer).
    @Test func aGetInAReadClosureWaitsForTheServerOnce() throws {
        try PostgresTestServer.withDriver(configure: { $0.maximumConnections = 1 }) { driver in
            let store = try Store(driver: driver)
            try store.write { tx in for id in 1...2 { try tx.park(Ticket(id: id, title: "t\(id)", count: id)) } }
            func roundTrips(_ body: () throws -> Void) rethrows -> Int {
                let before = driver.idleRoundTrips
                try body()
                return driver.idleRoundTrips - before
            }
            var closures: [Int] = [], gets: [Int] = [], pairs: [Int] = []
            for _ in 0..<3 {
                closures.append(try roundTrips {
                    let found = try store.read { tx in try tx.retrieve(Ticket.self, id: 1) }
                    #expect(found?.count == 1)
                })
                gets.append(try roundTrips {
                    let found = try store.retrieve(Ticket.self, id: 2)
                    #expect(found?.count == 2)
                })
                pairs.append(try roundTrips {
                    let both = try store.read { tx in [try tx.retrieve(Ticket.self, id: 1), try tx.retrieve(Ticket.self, id: 2)] }
                    #expect(both.map { $0?.title } == ["t1", "t2"])
                })
            }
            #expect(closures.min() == 1, "round trips per get in a read closure: \(closures)")
            #expect(gets.min() == 1, "round trips per Store.retrieve: \(gets)")
            #expect(pairs.min() == 2, "round trips per two gets in a read closure: \(pairs)")
            #expect(try store.read { tx in try tx.retrieveAll(Ticket.self).map(\.id) } == [1, 2])
        }
    }

    /// A document retrieved and parked back in one write: its opening with the read, the put
    /// and `COMMIT` (the read's value answers the park's question whether it is stored).
    @Test func aRetrievedDocumentParkedBackCostsFourStatements() throws {
        try PostgresTestServer.withDriver { driver in
            let store = try Store(driver: driver)
            try store.write { tx in try tx.park(Ticket(id: 1, title: "a", count: 0)) }
            var counts: [Int] = []
            for _ in 0..<3 {
                let before = driver.idleStatementsSent
                try store.write { tx in
                    guard var ticket = try tx.retrieve(Ticket.self, id: 1) else { return }
                    ticket.count += 1
                    try tx.park(ticket)
                }
                counts.append(driver.idleStatementsSent - before)
            }
            #expect(counts.min() ?? 99 <= 4, "statements per update: \(counts)")
            #expect(try store.retrieve(Ticket.self, id: 1)?.count == 3)
            #expect(try store.read { tx in try tx.revision(of: Ticket.self, id: 1) } == 4)
        }
    }

    /// Writers of two hosts inserting the same keys at once: each key is stored by exactly one
    /// of them, the others see its value, and nobody fails.
    @Test func concurrentInsertsOfOneKeyStoreItOnce() throws {
        try PostgresTestServer.withHosts(2) { hosts in
            try hosts[0].write { txn in _ = try txn.keyspace(named: "t", create: true, multiValue: false) }
            let keys = 20, threads = 8
            let winners = Mutex<[Int: Int]>([:])
            let run = concurrently(threads: threads, steps: keys) { index, key in
                let stored = try hosts[index % 2].write { txn in
                    guard let space = try txn.keyspace(named: "t", create: false, multiValue: false) else { return false }
                    return try [UInt8(index)].withUnsafeBytes { v in
                        try [UInt8(key)].withUnsafeBytes { try txn.putIfAbsent(v, forKey: $0, in: space) { _ in } }
                    }
                }
                if stored { winners.withLock { $0[key, default: 0] += 1 } }
            }
            #expect(run.finished)
            #expect(run.failures == [])
            #expect(winners.withLock { $0 } == Dictionary(uniqueKeysWithValues: (0..<keys).map { ($0, 1) }))
        }
    }

    /// After a write that logged changes, the next write reads its change-log stamp with its
    /// first statement: it must be that transaction's own ID, as a statement of its own returns.
    /// A write that logs nothing turns the prefetch off again.
    @Test func aPrefetchedStampIsTheTransactionsOwnID() throws {
        try PostgresTestServer.withDriver { driver in
            try driver.write { txn in
                let space = try #require(try txn.keyspace(named: "t", create: true, multiValue: false))
                try txn.store([0], forKey: [0], in: space)
                _ = try txn.changeLogStamp()
            }
            for _ in 0..<2 {
                try driver.write { txn in
                    let postgres = try #require(txn as? PostgresTransaction)
                    let space = try #require(try txn.keyspace(named: "t", create: false, multiValue: false))
                    _ = try txn.value([0], in: space)
                    let stamp = try #require(try txn.changeLogStamp())
                    #expect(postgres.prefetchedStamp != nil, "the stamp was not read with the first statement")
                    let own = try postgres.session.integers("SELECT txid_current()").first
                    #expect(own.map { UInt64($0) } == stamp)
                    try txn.store([1], forKey: [UInt8(stamp % 200)], in: space)
                }
            }
            try driver.write { txn in
                let space = try #require(try txn.keyspace(named: "t", create: false, multiValue: false))
                try txn.store([2], forKey: [2], in: space)
            }
            try driver.write { txn in
                #expect((txn as? PostgresTransaction)?.prefetchesStamp == false, "a write that logged nothing left the prefetch on")
            }
        }
    }

    /// Another host drops the keyspace after this write read from it and before it puts (or
    /// inserts) into it: the put's statement fails, the attempt is rolled back and the write runs
    /// again, recreating the keyspace. (The keyspace is made by the other host: a write whose
    /// connection last wrote to a keyspace takes its lock with its first statement, see
    /// `WriteHint`, and a drop then waits for that write to end.)
    @Test(arguments: [false, true])
    func aKeyspaceDroppedBeforeAPutIsRetried(insert: Bool) throws {
        try PostgresTestServer.withHosts(2) { hosts in
            let writer = hosts[0], dropper = hosts[1]
            try dropper.write { txn in
                let space = try #require(try txn.keyspace(named: "t", create: true, multiValue: false))
                try txn.store([0], forKey: [0], in: space)
            }
            var attempts = 0
            try writer.write { txn in
                attempts += 1
                guard let space = try txn.keyspace(named: "t", create: true, multiValue: false) else { return }
                _ = try txn.value([0], in: space)
                if attempts == 1 {
                    try dropper.write { other in
                        if let gone = try other.keyspace(named: "t", create: false, multiValue: false) { try other.drop(gone) }
                    }
                }
                if insert {
                    _ = try [UInt8(1)].withUnsafeBytes { v in try [UInt8(1)].withUnsafeBytes { try txn.putIfAbsent(v, forKey: $0, in: space) { _ in } } }
                } else {
                    try txn.store([1], forKey: [1], in: space)
                }
            }
            // Retried at least once (the next attempt may meet the stale handle once more).
            #expect(attempts > 1)
            try dropper.read { txn in
                let space = try #require(try txn.keyspace(named: "t", create: false, multiValue: false))
                #expect(try txn.value([1], in: space) == [1])
                #expect(try txn.value([0], in: space) == nil)
            }
        }
    }

    /// Without key locks (`REPEATABLE READ`, `SERIALIZABLE`) a put's statement does not check
    /// its keyspace: a handle taken from the cache before the snapshot answered must be checked
    /// before the put goes out. Another host drops and makes the keyspace anew; this host's next
    /// put (its first statement) must land in the new keyspace, where a read finds it.
    @Test(arguments: [PostgresConfiguration.WriteIsolation.repeatableRead, .serializable])
    func aPutWithoutKeyLocksGoesToTheKeyspaceThatHasTheNameNow(isolation: PostgresConfiguration.WriteIsolation) throws {
        try PostgresTestServer.withHosts(2, configure: { $0.writeIsolation = isolation }) { hosts in
            let writer = hosts[0], other = hosts[1]
            try remakeKeyspace("t", cachedBy: writer, remadeBy: other)
            try writer.write { txn in
                guard let space = try txn.keyspace(named: "t", create: true, multiValue: false) else { return }
                try txn.store([1], forKey: [1], in: space)
            }
            try other.read { txn in
                let space = try #require(try txn.keyspace(named: "t", create: false, multiValue: false))
                #expect(try txn.value([1], in: space) == [1], "the put went to the dropped keyspace")
            }
        }
    }
}
#endif

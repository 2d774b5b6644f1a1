#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import Testing

/// Watchers woken by `LISTEN`/`NOTIFY` (see `ChangeNotifier`, `ChangeListener`): with a 5 s
/// polling interval, changes of other hosts are reported within a fraction of it; the change log
/// stays the source of truth (rolled-back writes never show; a lost listener connection is
/// reopened); stores on other schemas do not wake each other.
///
/// Serialized: the horizon watchers read up to is the whole server's oldest running writer, so
/// the test that holds one open for 1.5 s would delay the others' reports.
@Suite("Change notices", .serialized, .enabled(if: PostgresTestServer.isAvailable, "DEPOT_POSTGRES_URL is not set"))
struct ChangeNoticeTests {
    /// Polling alone would report each commit about 5 s after the read that reported the one
    /// before; woken, well under that.
    static let interval: Duration = .seconds(5)
    static let promptly: Double = 2.5

    /// A writer store, and a store on another driver (another host) watching with a 5 s interval,
    /// warmed up: writers log once they have seen the watcher's lease (at most a second).
    struct Hosts {
        let writer: Store
        let watching: Store
        let observer = RecordingObserver()
        let watcher: ExternalChangeWatcher

        init(_ drivers: [PostgresDriver], firstID: Int) throws {
            writer = try Store(driver: drivers[0])
            watching = try Store(driver: drivers[1])
            watching.addObserver(observer)
            watcher = try watching.watchExternalChanges(every: ChangeNoticeTests.interval)
            var i = firstID
            let observer = observer, writer = writer
            let warm = try eventually(within: 20) {
                i += 1
                try writer.write { tx in try tx.park(staff(i)) }
                return observer.sets.contains { $0.isExternal && !$0.created(Staff.self).isEmpty }
            }
            #expect(warm, "the watcher reported the warm-up writes")
        }

        func reported(_ id: Int) -> Bool { observer.sets.contains { $0.isExternal && $0.created(Staff.self).contains(id) } }
        var allReported: [Int] { observer.sets.filter(\.isExternal).flatMap { $0.created(Staff.self) } }

        /// Commits `id` and returns how long the watcher took to report it (nil: not within 4.5 s).
        func commitAndTime(_ id: Int) throws -> Double? {
            let start = Date()
            try writer.write { tx in try tx.park(staff(id)) }
            guard eventually(within: 4.5, { reported(id) }) else { return nil }
            return Date().timeIntervalSince(start)
        }
    }

    /// A logged write of a new document sends three statements: its opening (which reads the
    /// stamp), the document's insert with its index entry and its change log entry in one, and
    /// `COMMIT`, in one round trip (the entry's key is written by the server); every such write
    /// is reported once. (A `BEGIN` or a lease check may add one to
    /// some writes: the fewest counts.)
    @Test func aLoggedInsertSendsItsLogEntryWithTheDocument() throws {
        try PostgresTestServer.withHosts(2) { drivers in
            let hosts = try Hosts(drivers, firstID: 0)
            defer { hosts.watcher.stop() }
            var counts: [Int] = [], trips: [Int] = []
            let ids = 2_000..<2_010
            for id in ids {
                let before = drivers[0].idleStatementsSent, tripsBefore = drivers[0].idleRoundTrips
                try hosts.writer.write { tx in try tx.park(Ticket(id: id, title: "t\(id)", count: 1)) }
                counts.append(drivers[0].idleStatementsSent - before)
                trips.append(drivers[0].idleRoundTrips - tripsBefore)
            }
            #expect(counts.min() == 3, "statements per logged insert: \(counts)")
            // The entry's key (the transaction's ID) is written by the server: no wait for it.
            #expect(trips.min() == 1, "round trips per logged insert: \(trips)")
            let observer = hosts.observer
            func reported() -> [Int] { observer.sets.filter(\.isExternal).flatMap { $0.created(Ticket.self) } }
            #expect(eventually(within: 15) { Set(reported()).isSuperset(of: ids) }, "reported: \(reported().sorted())")
            #expect(reported().filter { ids.contains($0) }.count == ids.count, "a write was reported twice")
            #expect(try hosts.watching.read { tx in try ids.allSatisfy { try tx.retrieve(Ticket.self, id: $0)?.title == "t\($0)" } })
        }
    }

    @Test func aCommitOfAnotherHostIsReportedLongBeforeTheInterval() throws {
        try PostgresTestServer.withHosts(2) { drivers in
            let hosts = try Hosts(drivers, firstID: 0)
            defer { hosts.watcher.stop() }
            for id in 1_000..<1_003 {
                let elapsed = try hosts.commitAndTime(id)
                #expect(elapsed != nil, "commit \(id) was reported")
                #expect((elapsed ?? 99) < Self.promptly, "reported after \(elapsed ?? 99) s; the polling interval is 5 s")
            }
            #expect(hosts.allReported.filter { $0 >= 1_000 }.sorted() == [1_000, 1_001, 1_002], "each reported once")
        }
    }

    @Test func aRolledBackWriteWakesNobodyAndIsNeverReported() throws {
        try PostgresTestServer.withHosts(2) { drivers in
            let hosts = try Hosts(drivers, firstID: 0)
            defer { hosts.watcher.stop() }
            // Settled: no warm-up write left to report.
            _ = eventually(within: 1) { false }
            let before = hosts.observer.sets.count
            struct Boom: Error {}
            #expect(throws: Boom.self) {
                try hosts.writer.write { tx in
                    try tx.park(staff(900))
                    throw Boom()
                }
            }
            _ = eventually(within: 1) { false }
            #expect(hosts.observer.sets.count == before, "no change set for a rolled-back write")
            let elapsed = try hosts.commitAndTime(901)
            #expect((elapsed ?? 99) < Self.promptly, "the next commit is reported promptly")
            #expect(!hosts.reported(900))
            #expect(hosts.observer.sets.count == before + 1, "exactly one change set: the committed write's")
        }
    }

    @Test func storesOnTwoSchemasDoNotWakeEachOther() throws {
        try PostgresTestServer.withHosts(2) { driversA in
            try PostgresTestServer.withHosts(2) { driversB in
                let a = try Hosts(driversA, firstID: 0)
                defer { a.watcher.stop() }
                let b = try Hosts(driversB, firstID: 50_000)
                defer { b.watcher.stop() }
                #expect(driversA[0].schema.changeChannel != driversB[0].schema.changeChannel)
                // B's notices while only A writes: none (the first wait reports "listening now").
                let noticesB = try #require(driversB[1].changeNotices())
                defer { noticesB.close() }
                #expect(noticesB.wait(until: Date().addingTimeInterval(5)))
                // B's own warm-up writes may still be announced (a commit's NOTIFY is sent after
                // it, not waited for): drained first, until half a second passes without one.
                #expect(eventually(within: 5) { !noticesB.wait(until: Date().addingTimeInterval(0.5)) }, "B's own notices settle")
                let noticesA = try #require(driversA[1].changeNotices())
                defer { noticesA.close() }
                #expect(noticesA.wait(until: Date().addingTimeInterval(5)))
                for id in 2_000..<2_005 { try a.writer.write { tx in try tx.park(staff(id)) } }
                #expect(noticesA.wait(until: Date().addingTimeInterval(3)), "A's commits wake A's listener")
                #expect(!noticesB.wait(until: Date().addingTimeInterval(1.5)), "A's commits do not wake B's listener")
                #expect((try b.commitAndTime(60_000) ?? 99) < Self.promptly)
                #expect(eventually(within: 4.5) { (2_000..<2_005).allSatisfy(a.reported) })
                // Each watcher reports exactly its own store's changes.
                #expect(!a.allReported.contains { $0 >= 50_000 })
                #expect(!b.allReported.contains { $0 < 50_000 })
                #expect(a.allReported.filter { $0 >= 2_000 }.sorted() == Array(2_000..<2_005))
            }
        }
    }

    /// A commit notified while an older writer (of any host, logging nothing) still runs is not
    /// readable yet (the horizon stops below it); the watcher reads again soon, not at the end
    /// of its interval, once that writer has ended.
    @Test func aCommitBehindAnOlderRunningWriterIsReportedSoonAfterItEnds() throws {
        try PostgresTestServer.withHosts(3) { drivers in
            let hosts = try Hosts(drivers, firstID: 0)
            defer { hosts.watcher.stop() }
            let blocker = drivers[2]
            let done = DispatchSemaphore(value: 0)
            let held = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                _ = try? blocker.write { txn in
                    // A transaction ID of its own, then 1.5 s open.
                    if let space = try txn.keyspace(named: "blocker", create: true, multiValue: false) {
                        try [UInt8](repeating: 1, count: 4).withUnsafeBytes { k in try txn.put(k, forKey: k, in: space) }
                        _ = try [UInt8](repeating: 1, count: 4).withUnsafeBytes { try txn.withValue(forKey: $0, in: space) { _ in true } }
                    }
                    held.signal()
                    Thread.sleep(forTimeInterval: 1.5)
                }
                done.signal()
            }
            #expect(held.wait(timeout: .now() + 10) == .success)
            let elapsed = try hosts.commitAndTime(3_000)
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(elapsed != nil, "reported")
            #expect((elapsed ?? 99) < 1.5 + Self.promptly, "reported after \(elapsed ?? 99) s; the older writer ended after 1.5 s")
        }
    }

    /// Terminates (through `driver`) the backends whose last statement is like `pattern`,
    /// trying for up to 10 s until one was; whether one was.
    static func terminate(queryLike pattern: String, using driver: PostgresDriver) throws -> Bool {
        try eventually(within: 10) {
            let count = try driver.withSession { session in
                session.leaveChained()
                return try session.integers(
                    "SELECT count(pg_terminate_backend(pid))::bigint FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()",
                    .of(pattern))
            }
            return (count.first ?? 0) >= 1
        }
    }

    /// Commits each of `ids` and expects it reported within ``promptly``.
    static func expectPrompt(_ hosts: Hosts, ids: Range<Int>) throws {
        for id in ids {
            let elapsed = try hosts.commitAndTime(id)
            #expect((elapsed ?? 99) < promptly, "commit \(id) reported after \(elapsed ?? 99) s")
        }
    }

    /// Commits in quick succession wake the notifier's thread once per notice, not once per
    /// commit: those that answer while a notice is on its way or within the gap after it only
    /// raise the stamp the next one carries.
    @Test func commitsInQuickSuccessionWakeTheNotifierOncePerNotice() throws {
        try PostgresTestServer.withDriver { driver in
            // A thousand commits in well under a millisecond each: a notice goes out at most
            // every 2 ms, so a hundred wake-ups would need 200 ms of these calls.
            for stamp in 1...1_000 { driver.notifier.committed(stamp: UInt64(stamp)) }
            let wakeUps = driver.notifier.wakeUps
            #expect(wakeUps >= 1)
            #expect(wakeUps <= 100, "\(wakeUps) wake-ups for 1,000 commits")
        }
    }

    /// The writer's notifier connection is terminated by the server: the next commits are
    /// still reported promptly (the notifier sees the loss and opens another at once, rather
    /// than dropping notices until the watcher's next poll).
    @Test func aLostNotifierConnectionIsReplacedAtOnce() throws {
        try PostgresTestServer.withHosts(3) { drivers in
            let hosts = try Hosts(drivers, firstID: 0)
            defer { hosts.watcher.stop() }
            // The notifier connects at the first logged commit.
            #expect((try hosts.commitAndTime(5_000) ?? 99) < Self.promptly)
            #expect(try Self.terminate(queryLike: "SELECT pg_notify(%", using: drivers[2]),
                    "the notifier's backend was found and terminated")
            try Self.expectPrompt(hosts, ids: 5_001..<5_004)
        }
    }

    /// The listener's connection is terminated by the server: the watcher opens another and is
    /// woken again.
    @Test func aLostListenerConnectionIsReopened() throws {
        try PostgresTestServer.withHosts(3) { drivers in
            let hosts = try Hosts(drivers, firstID: 0)
            defer { hosts.watcher.stop() }
            let channel = drivers[1].schema.changeChannel
            // The listener connects at the watcher's first wait: retried until it is there.
            #expect(try Self.terminate(queryLike: "LISTEN \"\(channel)\"%", using: drivers[2]),
                    "the listener's backend was found and terminated")
            try Self.expectPrompt(hosts, ids: 4_000..<4_003)
        }
    }
}
#endif

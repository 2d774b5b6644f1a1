#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import Synchronization
import Testing

/// The default `READ COMMITTED` writes with key locks: what SERIALIZABLE promised still holds
/// where writes depend on what they read.
@Suite("PostgreSQL key locks", .enabled(if: PostgresTestServer.isAvailable, "DEPOT_POSTGRES_URL is not set"))
struct KeyLockTests {
    /// Write skew: each of two writes reads the key the other one writes, both absent, and
    /// writes its own only if the other's is absent. Run one at a time, exactly one key ends up
    /// stored; overlapping (both read before either writes, on two drivers as two hosts would)
    /// they must end the same way: the key locks make one wait (a deadlock PostgreSQL breaks by
    /// cancelling one, which is retried and then sees the other's key).
    @Test func writeSkewIsPrevented() throws {
        try PostgresTestServer.withHosts(2) { hosts in
            let first = hosts[0], second = hosts[1]
            try first.write { txn in _ = try txn.keyspace(named: "skew", create: true, multiValue: false) }
            let readers = Atomic(0)
            let finished = Atomic(0)
            let failures = Mutex<[String]>([])
            func writer(_ driver: PostgresDriver, reads: [UInt8], writes: [UInt8]) -> Thread {
                Thread {
                    var attempt = 0
                    do {
                        try driver.write { txn in
                            attempt += 1
                            guard let space = try txn.keyspace(named: "skew", create: false, multiValue: false) else { return }
                            let other = try txn.value(reads, in: space)
                            if attempt == 1 {
                                // Both have read before either writes (bounded: never a hang).
                                readers.add(1, ordering: .releasing)
                                _ = eventually(within: 5) { readers.load(ordering: .acquiring) >= 2 }
                            }
                            if other == nil { try txn.store([1], forKey: writes, in: space) }
                        }
                    } catch {
                        failures.withLock { $0.append(String(describing: error)) }
                    }
                    finished.add(1, ordering: .releasing)
                }
            }
            writer(first, reads: [0x62], writes: [0x61]).start()
            writer(second, reads: [0x61], writes: [0x62]).start()
            #expect(eventually(within: 60) { finished.load(ordering: .acquiring) == 2 })
            #expect(failures.withLock { $0 } == [])
            let stored = try first.read { txn in
                try txn.keyspace(named: "skew", create: false, multiValue: false).map { space in
                    [try txn.value([0x61], in: space), try txn.value([0x62], in: space)].compactMap { $0 }.count
                }
            }
            #expect(stored == 1, "both writes committed on what the other had not yet written")
        }
    }

    /// A delete whose answer the write knew (the value it read under the key's lock) is sent
    /// without waiting; when the row was gone after all (another host cleared the keyspace,
    /// which takes no key lock), the delete fails on the server, `COMMIT` rolls back and the
    /// write runs again with the true answer: a committed write never acted on a wrong one.
    @Test func aHeldDeleteThatFindsNoRowRunsTheWriteAgain() throws {
        try PostgresTestServer.withHosts(2) { hosts in
            let first = hosts[0], second = hosts[1]
            // Made by the other host: the first one's connection has no write hint for the
            // keyspace, so its read takes the key's lock only (as on a host that never wrote there).
            try second.write { txn in
                guard let values = try txn.keyspace(named: "values", create: true, multiValue: false) else { return }
                try txn.store([1], forKey: [1], in: values)
                try txn.store([2], forKey: [2], in: values)
            }
            let attempts = Atomic(0)
            var answers: [Bool] = []
            try first.write { txn in
                let attempt = attempts.add(1, ordering: .relaxed).newValue
                guard let values = try txn.keyspace(named: "values", create: false, multiValue: false) else { return }
                _ = try txn.value([1], in: values)
                // Another host empties the keyspace meanwhile (bounded by its call timeout).
                if attempt == 1 { try Self.clearValues(on: second) }
                answers.append(try txn.remove([1], in: values))
                // What each attempt writes besides: only the committed attempt's may be there.
                try txn.store([3], forKey: [UInt8(10 + attempt)], in: values)
            }
            #expect(attempts.load(ordering: .relaxed) == 2, "the write ran again: \(answers)")
            #expect(answers == [true, false], "the committed attempt acted on the true answer: \(answers)")
            try first.read { txn in
                guard let values = try txn.keyspace(named: "values", create: false, multiValue: false) else { return }
                #expect(try txn.value([1], in: values) == nil && txn.value([2], in: values) == nil)
                #expect(try txn.value([11], in: values) == nil, "the attempt that acted on a wrong answer did not commit")
                #expect(try txn.value([12], in: values) == [3])
            }
        }
    }

    /// Empties the keyspace "values" from `host` (which takes no key lock).
    private static func clearValues(on host: PostgresDriver) throws {
        try host.write { other in
            if let space = try other.keyspace(named: "values", create: false, multiValue: false) { try other.clear(space) }
        }
    }

    /// A held delete that fails on the server inside a savepoint the closure leaves with an
    /// error: the savepoint's `ROLLBACK TO SAVEPOINT` is never skipped by that failure (held
    /// statements share the next statement's `Sync`, but never a `ROLLBACK`'s), so the write
    /// goes on and commits once, with what it did after the savepoint.
    @Test func aSavepointUndoesAHeldStatementThatFailed() throws {
        struct LeftSavepoint: Error {}
        try PostgresTestServer.withHosts(2) { hosts in
            let first = hosts[0], second = hosts[1]
            try second.write { txn in
                guard let values = try txn.keyspace(named: "values", create: true, multiValue: false) else { return }
                try txn.store([1], forKey: [1], in: values)
            }
            let attempts = Atomic(0)
            try first.write { txn in
                let attempt = attempts.add(1, ordering: .relaxed).newValue
                guard let values = try txn.keyspace(named: "values", create: false, multiValue: false) else { return }
                _ = try txn.value([1], in: values)
                if attempt == 1 { try Self.clearValues(on: second) }
                do {
                    try txn.savepoint {
                        // Held: its answer is known (the value read under the key's lock), and
                        // the row is gone, so it fails on the server.
                        _ = try txn.remove([1], in: values)
                        throw LeftSavepoint()
                    }
                } catch is LeftSavepoint {}
                try txn.store([3], forKey: [20], in: values)
            }
            #expect(attempts.load(ordering: .relaxed) == 1, "the savepoint undid the failure: the write ran once")
            try first.read { txn in
                guard let values = try txn.keyspace(named: "values", create: false, multiValue: false) else { return }
                #expect(try txn.value([20], in: values) == [3])
            }
        }
    }

    /// A delete that waits for its key's lock deletes what the lock's holder committed: its
    /// statement reads after the lock was granted (a value, and a multi-value pair). Two
    /// drivers, as two hosts.
    @Test func aDeleteWaitingForItsKeyDeletesWhatTheHolderCommitted() throws {
        try PostgresTestServer.withHosts(2) { hosts in
            let first = hosts[0], second = hosts[1]
            try first.write { txn in
                _ = try txn.keyspace(named: "values", create: true, multiValue: false)
                _ = try txn.keyspace(named: "pairs", create: true, multiValue: true)
            }
            let holding = Atomic(false)
            let committed = Atomic(0)
            let waiterSeen = Atomic(false)
            Thread {
                _ = try? first.write { txn in
                    guard let values = try txn.keyspace(named: "values", create: false, multiValue: false),
                          let pairs = try txn.keyspace(named: "pairs", create: false, multiValue: true) else { return }
                    try txn.store([1], forKey: [1], in: values)
                    try [UInt8]([9]).withUnsafeBytes { v in try [UInt8]([2]).withUnsafeBytes { try txn.put(v, forKey: $0, in: pairs) } }
                    // A read waits for the puts (and so their key locks) first.
                    _ = try txn.value([3], in: values)
                    holding.store(true, ordering: .releasing)
                    // Until the other write waits for a lock this one holds (bounded).
                    let seen = eventually(within: 10) {
                        let waiting = (try? first.withSession { session -> Int64 in
                            session.leaveChained()
                            return try session.integers("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").first ?? 0
                        }) ?? 0
                        return waiting > 0
                    }
                    waiterSeen.store(seen, ordering: .releasing)
                }
                committed.add(1, ordering: .releasing)
            }.start()
            let held = eventually(within: 10) { holding.load(ordering: .acquiring) }
            #expect(held)
            var deleted: [Bool] = []
            try second.write { txn in
                deleted = []
                guard let values = try txn.keyspace(named: "values", create: false, multiValue: false),
                      let pairs = try txn.keyspace(named: "pairs", create: false, multiValue: true) else { return }
                deleted.append(try [UInt8]([1]).withUnsafeBytes { try txn.delete(forKey: $0, in: values) })
                deleted.append(try [UInt8]([9]).withUnsafeBytes { v in try [UInt8]([2]).withUnsafeBytes { try txn.delete(forKey: $0, value: v, in: pairs) } })
            }
            let ended = eventually(within: 10) { committed.load(ordering: .acquiring) == 1 }
            #expect(ended)
            let waited = waiterSeen.load(ordering: .acquiring)
            #expect(waited, "the delete never waited for the key's lock")
            #expect(deleted == [true, true], "a delete missed a row committed while it waited for its lock")
            let left = try first.read { txn -> Int in
                guard let values = try txn.keyspace(named: "values", create: false, multiValue: false),
                      let pairs = try txn.keyspace(named: "pairs", create: false, multiValue: true) else { return -1 }
                var count = try txn.value([1], in: values) == nil ? 0 : 1
                try txn.scan(pairs, lower: nil, upper: nil, prefix: nil, reverse: false) { _, _ in
                    count += 1
                    return true
                }
                return count
            }
            #expect(left == 0)
        }
    }

    /// A delete of a document with an index entry: its key's locks and the delete in two
    /// statements per row (not a statement per lock and check), and the first read after its
    /// locks taken in one: 8 statements in all.
    @Test func aDocumentDeleteSendsTwoStatementsPerRow() throws {
        try PostgresTestServer.withDriver { driver in
            let store = try Store(driver: driver)
            var counts: [Int] = []
            for id in 1...4 {
                try store.write { tx in try tx.park(Ticket(id: id, title: "t\(id)", count: 1)) }
                let before = driver.idleStatementsSent
                let deleted = try store.write { tx in try tx.delete(Ticket.self, id: id) }
                counts.append(driver.idleStatementsSent - before)
                #expect(deleted)
            }
            #expect(counts.min() ?? 99 <= 8, "statements per delete: \(counts)")
            #expect(try store.read { tx in try tx.fetch(FetchRequest<Ticket>().matching(\.title, .equalTo("t2"))).isEmpty })
            #expect(try store.read { tx in try (1...4).allSatisfy { try tx.retrieve(Ticket.self, id: $0) == nil } })
        }
    }

    /// A scan in a write sees no phantom: one write counts the entries under a prefix and stores
    /// the count, while another host inserts under that prefix; the stored count always matches
    /// what was there when the counting write committed, because the inserting write waits for
    /// the keyspace lock the scan holds (or the scan waits for it).
    @Test func scansInWritesSeeNoPhantoms() throws {
        try PostgresTestServer.withDriver { driver in
            let other = try PostgresTestServer.driver(schema: driver.configuration.schema)
            defer { other.close() }
            try driver.write { txn in _ = try txn.keyspace(named: "rows", create: true, multiValue: false) }
            let done = Atomic(0)
            Thread {
                for i in 0..<20 {
                    _ = try? other.write { txn in
                        if let space = try txn.keyspace(named: "rows", create: false, multiValue: false) { try txn.store([1], forKey: [0x70, UInt8(i)], in: space) }
                    }
                }
                done.add(1, ordering: .releasing)
            }.start()
            for _ in 0..<10 {
                try driver.write { txn in
                    guard let space = try txn.keyspace(named: "rows", create: false, multiValue: false) else { return }
                    var count = 0
                    try txn.scan(space, lower: nil, upper: nil, prefix: [0x70], reverse: false) { _, _ in
                        count += 1
                        return true
                    }
                    usleep(20_000)
                    var again = 0
                    try txn.scan(space, lower: nil, upper: nil, prefix: [0x70], reverse: false) { _, _ in
                        again += 1
                        return true
                    }
                    #expect(again == count, "a scan saw a row committed by another write during its transaction")
                }
            }
            #expect(eventually(within: 60) { done.load(ordering: .acquiring) == 1 })
        }
    }
}
#endif

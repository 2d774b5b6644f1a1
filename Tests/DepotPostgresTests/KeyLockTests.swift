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

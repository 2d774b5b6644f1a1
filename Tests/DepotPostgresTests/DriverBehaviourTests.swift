#if Postgres
import Depot
import DepotTestSupport
@testable import DepotPostgres
import Foundation
import Synchronization
import Testing

/// The driver's own promises, checked on a real server: byte order, paged and reverse scans,
/// savepoints, retries on serialization failures and concurrent writers.
@Suite("PostgreSQL driver", .enabled(if: PostgresTestServer.isAvailable, "DEPOT_POSTGRES_URL is not set"))
struct DriverBehaviourTests {
    static func hex(_ text: String) -> [UInt8] {
        stride(from: 0, to: text.count, by: 2).compactMap { i in
            let start = text.index(text.startIndex, offsetBy: i)
            return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)
        }
    }

    func keys(_ txn: any StorageTransaction, _ space: Keyspace, reverse: Bool = false, lower: [UInt8]? = nil,
              upper: [UInt8]? = nil, prefix: [UInt8]? = nil, limit: Int = .max) throws -> [[UInt8]] {
        var seen: [[UInt8]] = []
        try txn.scan(space, lower: lower, upper: upper, prefix: prefix, reverse: reverse) { key, _ in
            seen.append([UInt8](key))
            return seen.count < limit
        }
        return seen
    }

    @Test func keysSortAsUnsignedBytes() throws {
        try PostgresTestServer.withDriver { driver in
            let order = ["00ff", "0100", "7f", "80", "ff"].map(Self.hex)
            try driver.write { txn in
                guard let space = try txn.keyspace(named: "bytes", create: true, multiValue: false) else { throw PostgresDriverError.transactionEnded }
                for key in order.reversed() { try key.withUnsafeBytes { k in try key.withUnsafeBytes { try txn.put($0, forKey: k, in: space) } } }
            }
            try driver.read { txn in
                let space = try #require(try txn.keyspace(named: "bytes", create: false, multiValue: false))
                #expect(try keys(txn, space) == order)
                #expect(try keys(txn, space, reverse: true) == order.reversed())
                #expect(try keys(txn, space, lower: Self.hex("0100"), upper: Self.hex("80")) == [Self.hex("0100"), Self.hex("7f")])
                #expect(try txn.count(space) == 5)
                #expect(try txn.keyspace(named: "absent", create: true, multiValue: false) == nil)
            }
        }
    }

    /// More entries than several pages: full, early-stopped, reverse and prefix scans, in a
    /// single- and a multi-value keyspace.
    @Test func pagedEarlyStoppingAndReverseScans() throws {
        try PostgresTestServer.withDriver(configure: { $0.firstScanPage = 4 }) { driver in
            let all = (0..<150).map { [UInt8(0x10 + $0 / 100), UInt8($0 % 100)] }
            try driver.write { txn in
                guard let single = try txn.keyspace(named: "single", create: true, multiValue: false),
                      let multi = try txn.keyspace(named: "multi", create: true, multiValue: true) else { throw PostgresDriverError.transactionEnded }
                for key in all {
                    try key.withUnsafeBytes { k in
                        try key.withUnsafeBytes { try txn.put($0, forKey: k, in: single) }
                        for value in [[UInt8(2)], [UInt8(1)], [UInt8(3)]] { try value.withUnsafeBytes { try txn.put($0, forKey: k, in: multi) } }
                    }
                }
            }
            try driver.read { txn in
                let single = try #require(try txn.keyspace(named: "single", create: false, multiValue: false))
                let multi = try #require(try txn.keyspace(named: "multi", create: false, multiValue: true))
                #expect(try keys(txn, single) == all)
                #expect(try keys(txn, single, reverse: true) == all.reversed())
                #expect(try keys(txn, single, limit: 3) == Array(all.prefix(3)))
                #expect(try keys(txn, single, reverse: true, limit: 7) == Array(all.reversed().prefix(7)))
                #expect(try keys(txn, single, prefix: [0x11]) == all.filter { $0[0] == 0x11 })
                #expect(try keys(txn, single, reverse: true, prefix: [0x10]) == all.filter { $0[0] == 0x10 }.reversed())
                var pairs: [[UInt8]] = []
                try txn.scan(multi, lower: nil, upper: nil, prefix: nil, reverse: false) { key, value in
                    pairs.append([UInt8](key) + [UInt8](value))
                    return true
                }
                #expect(pairs == all.flatMap { key in [1, 2, 3].map { key + [UInt8($0)] } })
                var reversed: [[UInt8]] = []
                try txn.scan(multi, lower: nil, upper: nil, prefix: nil, reverse: true) { key, value in
                    reversed.append([UInt8](key) + [UInt8](value))
                    return true
                }
                #expect(reversed == pairs.reversed())
                #expect(try txn.count(multi) == 450)
                let first = try all[0].withUnsafeBytes { try txn.withValue(forKey: $0, in: multi) { [UInt8]($0) } }
                #expect(first == [1])
            }
            try driver.write { txn in
                let multi = try #require(try txn.keyspace(named: "multi", create: false, multiValue: true))
                let removed = try all[0].withUnsafeBytes { k in try [UInt8(1)].withUnsafeBytes { try txn.delete(forKey: k, value: $0, in: multi) } }
                #expect(removed)
                #expect(try txn.count(multi) == 449)
            }
        }
    }

    @Test func savepointRollsBackAlone() throws {
        struct Boom: Error {}
        try PostgresTestServer.withDriver { driver in
            let depths: (Int, Int) = try driver.write { txn in
                guard let space = try txn.keyspace(named: "s", create: true, multiValue: false) else { throw PostgresDriverError.transactionEnded }
                try txn.store([1], forKey: [1], in: space)
                var inner = -1
                var thrown = false
                do {
                    try txn.savepoint {
                        inner = txn.nestingDepth
                        try txn.store([2], forKey: [2], in: space)
                        _ = try txn.remove([1], in: space)
                        throw Boom()
                    }
                } catch is Boom {
                    thrown = true
                }
                #expect(thrown)
                try txn.savepoint { try txn.store([3], forKey: [3], in: space) }
                return (inner, txn.nestingDepth)
            }
            #expect(depths.0 == 1 && depths.1 == 0)
            try driver.read { txn in
                let space = try #require(try txn.keyspace(named: "s", create: false, multiValue: false))
                #expect(try keys(txn, space) == [[1], [3]])
            }
        }
    }

    /// Under SERIALIZABLE, a write reads a counter, another connection commits a change to it,
    /// the write then updates it: PostgreSQL reports a serialization failure and the closure
    /// runs again. (Under the default key locks the other write would wait instead: see
    /// `writeSkewIsPrevented`.)
    @Test func serializationFailureIsRetried() throws {
        let schema = PostgresTestServer.uniqueSchema()
        let serializable: (inout PostgresConfiguration) -> Void = { $0.writeIsolation = .serializable }
        let first = try PostgresTestServer.driver(schema: schema, configure: serializable)
        let second = try PostgresTestServer.driver(schema: schema, configure: serializable)
        defer {
            try? first.dropSchema()
            first.close()
            second.close()
        }
        try first.write { txn in
            guard let space = try txn.keyspace(named: "c", create: true, multiValue: false) else { throw PostgresDriverError.transactionEnded }
            try txn.store([0], forKey: Array("n".utf8), in: space)
        }
        let runs = Atomic(0)
        let committed = Atomic(0)
        let final: UInt8 = try first.write { txn in
            let run = runs.add(1, ordering: .relaxed).newValue
            guard let space = try txn.keyspace(named: "c", create: false, multiValue: false) else { throw PostgresDriverError.transactionEnded }
            let value = try txn.value(Array("n".utf8), in: space)?.first ?? 0
            if run == 1 {
                // Another connection commits meanwhile (on its own thread).
                let other = Thread {
                    _ = try? second.write { txn in
                        if let space = try txn.keyspace(named: "c", create: false, multiValue: false) { try txn.store([10], forKey: Array("n".utf8), in: space) }
                    }
                    committed.store(1, ordering: .releasing)
                }
                other.start()
                #expect(eventually { committed.load(ordering: .acquiring) == 1 })
            }
            try txn.store([value + 1], forKey: Array("n".utf8), in: space)
            return value + 1
        }
        #expect(runs.load(ordering: .relaxed) == 2)
        #expect(final == 11)
    }

    /// Several threads increment one counter at once (overlapping: four write slots): every
    /// increment survives, and after the first collisions the driver stops deadlocking on it.
    @Test func concurrentWritersAllCommit() throws {
        try PostgresTestServer.withDriver(configure: { $0.maximumConcurrentWrites = 4 }) { driver in
            let threads = 4, each = 8
            let done = Atomic(0)
            let failures = Mutex<[String]>([])
            for _ in 0..<threads {
                Thread {
                    for _ in 0..<each {
                        do {
                            try driver.write { txn in
                                guard let space = try txn.keyspace(named: "c", create: true, multiValue: false) else { return }
                                let value = try txn.value([0], in: space).map { Int($0[0]) * 256 + Int($0[1]) } ?? 0
                                try txn.store([UInt8((value + 1) / 256), UInt8((value + 1) % 256)], forKey: [0], in: space)
                            }
                        } catch {
                            failures.withLock { $0.append(String(describing: error)) }
                        }
                    }
                    done.add(1, ordering: .releasing)
                }.start()
            }
            #expect(eventually(within: 60) { done.load(ordering: .acquiring) == threads })
            #expect(failures.withLock { $0 } == [])
            let total = try driver.read { txn in
                try txn.keyspace(named: "c", create: false, multiValue: false).flatMap { try txn.value([0], in: $0) }.map { Int($0[0]) * 256 + Int($0[1]) }
            }
            #expect(total == threads * each)
            // The counter is read and then written by every write: once the driver has seen
            // that, writes read it exclusively and queue instead of deadlocking (40P01) and
            // retrying every time.
            #expect(driver.writeRetries < threads * each / 2, "\(driver.writeRetries) retries")
        }
    }

    /// Threads of one driver storing documents with neighbouring IDs (the writes that cancel
    /// each other on page-level predicate locks under SERIALIZABLE): with the default key
    /// locks they overlap (no write gate) and, touching different keys, never fail each other,
    /// so every write closure runs exactly once.
    @Test func writersOfDifferentDocumentsNeverRetry() throws {
        try PostgresTestServer.withDriver { driver in
            let store = try Store(driver: driver)
            // The collection's first write records its schema (a key every first writer would
            // read and write): done once before the writers start.
            try store.write { tx in try tx.park(staff(1000)) }
            let threads = 8, each = 5
            let runs = Atomic(0)
            let done = Atomic(0)
            let failures = Mutex<[String]>([])
            for t in 0..<threads {
                Thread {
                    for j in 0..<each {
                        do {
                            try store.write { tx in
                                runs.add(1, ordering: .relaxed)
                                try tx.park(staff(t * each + j))
                            }
                        } catch {
                            failures.withLock { $0.append(String(describing: error)) }
                        }
                    }
                    done.add(1, ordering: .releasing)
                }.start()
            }
            #expect(eventually(within: 120) { done.load(ordering: .acquiring) == threads })
            #expect(failures.withLock { $0 } == [])
            #expect(runs.load(ordering: .relaxed) == threads * each, "a write was retried")
            #expect(try store.read { tx in try tx.fetch(FetchRequest<Staff>()) }.count == threads * each + 1)
        }
    }

    /// More concurrent callers on Swift's cooperative pool than it has threads: the driver's
    /// work never needs that pool, so blocking its threads does not stall the driver.
    @Test func callsFromManyAsyncTasksAtOnce() async throws {
        let schema = PostgresTestServer.uniqueSchema()
        let driver = try PostgresTestServer.driver(schema: schema)
        defer {
            try? driver.dropSchema()
            driver.close()
        }
        let tasks = 3 * max(2, ProcessInfo.processInfo.activeProcessorCount)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in 0..<tasks {
                group.addTask {
                    try driver.write { txn in
                        guard let space = try txn.keyspace(named: "k", create: true, multiValue: false) else { return }
                        try txn.store([UInt8(t)], forKey: [UInt8(t)], in: space)
                    }
                }
            }
            try await group.waitForAll()
        }
        let count = try driver.read { txn in try txn.keyspace(named: "k", create: false, multiValue: false).map { try txn.count($0) } }
        #expect(count == tasks)
    }

    /// A store's async writes on this driver (no group commit of its own) run on the shared
    /// blocking queue: many more at once than the pool has connections, each blocked waiting for
    /// one, all finish.
    @Test func asyncStoreWritesBeyondThePoolAllFinish() async throws {
        let schema = PostgresTestServer.uniqueSchema()
        let driver = try PostgresTestServer.driver(schema: schema) { $0.maximumConnections = 3 }
        defer {
            try? driver.dropSchema()
            driver.close()
        }
        let store = try Store(driver: driver)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<120 {
                group.addTask { _ = try await store.write { tx in try tx.park(staff(i)) } }
            }
            try await group.waitForAll()
        }
        #expect(try store.count(Staff.self) == 120)
    }

    /// A store's write lets go of its transaction state when it returns, sync or async (the
    /// driver kept every write's transaction and context until 2026-12-06).
    @Test func aStoreWritesContextIsLetGoWhenItReturns() async throws {
        let schema = PostgresTestServer.uniqueSchema()
        let driver = try PostgresTestServer.driver(schema: schema)
        defer {
            try? driver.dropSchema()
            driver.close()
        }
        let store = try Store(driver: driver)
        let inWrite = WeakProbe(), inAsyncWrite = WeakProbe()
        // (A synchronous function: in an async one, `store.write` is the async write.)
        func writeSynchronously() throws {
            try store.write { tx in
                try tx.park(staff(1))
                inWrite.hold(tx.context)
            }
        }
        try writeSynchronously()
        try await store.write { tx in
            try tx.park(staff(2))
            inAsyncWrite.hold(tx.context)
        }
        #expect(try store.count(Staff.self) == 2)
        #expect(inWrite.isReleased, "a write's context outlived it")
        #expect(inAsyncWrite.isReleased, "an async write's context outlived it")
    }

    @Test func afterCommitRunsOnceAfterCommitAndNestedWritesAreRefused() throws {
        try PostgresTestServer.withDriver { driver in
            let calls = Atomic(0)
            try driver.write { txn in
                txn.afterCommit { calls.add(1, ordering: .relaxed) }
                #expect(calls.load(ordering: .relaxed) == 0)
            }
            #expect(calls.load(ordering: .relaxed) == 1)
            #expect(throws: PostgresDriverError.nestedWrite) { try driver.write { _ in try driver.write { _ in } } }
            try driver.write { txn in _ = try txn.keyspace(named: "k", create: true, multiValue: false) }
            // Wrapped as the LMDB driver's errors are: code in a transaction closure catches
            // `DepotError` only, with the driver's error underneath.
            let refused = #expect(throws: DepotError.self) {
                try driver.read { txn in
                    if let space = try txn.keyspace(named: "k", create: false, multiValue: false) { try txn.clear(space) }
                }
            }
            #expect(refused?.underlyingError as? PostgresDriverError == .readOnlyTransaction)
        }
    }
}

/// Array conveniences over the buffer-based protocol (the root package's are internal).
extension StorageTransaction {
    func value(_ key: [UInt8], in space: Keyspace) throws -> [UInt8]? {
        try key.withUnsafeBytes { try withValue(forKey: $0, in: space) { [UInt8]($0) } }
    }
    func store(_ value: [UInt8], forKey key: [UInt8], in space: Keyspace) throws {
        try value.withUnsafeBytes { v in try key.withUnsafeBytes { try put(v, forKey: $0, in: space) } }
    }
    func remove(_ key: [UInt8], in space: Keyspace) throws -> Bool {
        try key.withUnsafeBytes { try delete(forKey: $0, in: space) }
    }
}
#endif

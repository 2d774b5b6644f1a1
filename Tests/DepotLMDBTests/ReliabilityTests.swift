import Foundation
import Synchronization
import Testing
import DepotTestSupport
@testable import DepotLMDB

#if canImport(Glibc)
import Glibc
#endif

@Suite("Reader table: dead processes and long-lived readers")
struct ReaderReclaimTests {
    /// Starts `depot hold-reader` on `path` and returns it once its snapshot is open.
    func holdReader(_ path: String) throws -> (ChildProcess, Int) {
        let exe = try #require(depotExecutable(), "the depot executable must be built")
        let child = try ChildProcess(exe, ["hold-reader", "--path", path, "--seconds", "120"])
        let line = try #require(child.readLine(), "hold-reader printed nothing: \(child.finish().err)")
        let snapshot = try #require(Int(line.dropFirst("reading ".count)), "unexpected line '\(line)'")
        return (child, snapshot)
    }

    @Test func slotOfAKilledProcessIsReclaimed() throws {
        let folder = TemporaryFolder()
        var options = EnvironmentOptions()
        options.maxReaders = 4
        options.readTransactionPoolSize = 0 // ended reads give their slot back at once
        let env = try Environment.open(path: folder.path, options: options)
        let db = try env.openDatabase("r", key: StringCodec.self, value: StringCodec.self)
        try env.write { try $0.put("v", forKey: "k", in: db) }
        #expect(try env.info().maxReaders == 4)

        // 1. A reader in another process is killed: its slot stays taken until a reader check.
        var (child, snapshot) = try holdReader(folder.path)
        let pid = Int(child.pid)
        #expect(try env.readerList().contains { $0.processID == pid && $0.transactionID == snapshot })
        child.killNow()
        #expect(child.finish().killed)
        #expect(try env.readerList().contains { $0.processID == pid }, "LMDB does not notice a dead process by itself")
        #expect(try env.readerCheck() == 1)
        #expect(try !env.readerList().contains { $0.processID == pid })
        var open = try (0..<4).map { _ in try env.beginTransaction(readOnly: true) }
        #expect(try open.allSatisfy { try $0.get("k", in: db) == "v" })
        for txn in open { try txn.commit() }

        // 2. Without an explicit check: the fourth reader finds the table full, Depot runs the
        //    reader check itself, reclaims the dead slot and the read goes on.
        (child, snapshot) = try holdReader(folder.path)
        child.killNow()
        #expect(child.finish().killed)
        open = try (0..<4).map { _ in try env.beginTransaction(readOnly: true) }
        #expect(open.count == 4)
        // 3. A fifth live reader: a typed error, no hang; and recovery once one is released.
        #expect(throws: LMDBError.readersFull) { _ = try env.beginTransaction(readOnly: true) }
        try open.removeLast().commit()
        #expect(try env.read { try $0.get("k", in: db) } == "v")
        for txn in open { try txn.commit() }
    }

    @Test func longLivedReaderShowsAgeAndPinnedPages() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let db = try env.openDatabase("r", key: BigEndian<UInt32>.self, value: BytesCodec.self)
        let value = [UInt8](repeating: 1, count: 3000)
        try env.write { txn in for i in 0..<50 as Range<UInt32> { try txn.put(value, forKey: i, in: db) } }
        let reader = try env.beginTransaction(readOnly: true)
        func rewrite(_ rounds: Int) throws {
            for r in 0..<rounds {
                try env.write { txn in for i in 0..<50 as Range<UInt32> { try txn.put([UInt8](repeating: UInt8(r), count: 3000), forKey: i, in: db) } }
            }
        }
        try rewrite(10)
        let first = try #require(try env.readersWithPinnedPages().first { $0.transactionID == reader.id })
        #expect(first.age == 10)
        let pinnedAfter10 = try #require(first.pinnedPages)
        #expect(pinnedAfter10 >= 9 * 50, "each rewrite frees 50 overflow pages; the reader pins them")
        try rewrite(10)
        let second = try #require(try env.readersWithPinnedPages().first { $0.transactionID == reader.id })
        #expect(second.age == 20)
        #expect(try #require(second.pinnedPages) > pinnedAfter10)
        try reader.commit()
        // Once released, its pages are reused: more rewrites do not grow the file.
        try rewrite(2)
        let lastPage = try env.info().lastPageNumber
        try rewrite(10)
        #expect(try env.info().lastPageNumber <= lastPage + 2)
        #expect(try env.readersWithPinnedPages().allSatisfy { $0.transactionID == nil || $0.pinnedPages == 0 })
    }

    @Test func depotStatShowsAnotherProcessReaderAndItsPinnedPages() throws {
        let exe = try #require(depotExecutable())
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let db = try env.openDatabase("r", key: BigEndian<UInt32>.self, value: BytesCodec.self)
        try env.write { txn in for i in 0..<20 as Range<UInt32> { try txn.put([UInt8](repeating: 0, count: 5000), forKey: i, in: db) } }
        let (child, snapshot) = try holdReader(folder.path)
        for r in 1...5 {
            try env.write { txn in for i in 0..<20 as Range<UInt32> { try txn.put([UInt8](repeating: UInt8(r), count: 5000), forKey: i, in: db) } }
        }
        let stat = try runProcess(exe, ["stat", "--path", folder.path])
        child.killNow()
        _ = child.finish()
        #expect(stat.status == 0, "\(stat.err)")
        let line = try #require(stat.out.split(separator: "\n").first { $0.contains("pid \(child.pid)") }, "\(stat.out)")
        #expect(line.contains("snapshot \(snapshot) age 5 commits"))
        let pinned = line.split(separator: " ").firstIndex(of: "pinning").map { Int(line.split(separator: " ")[$0 + 1]) ?? 0 } ?? 0
        #expect(pinned >= 4 * 20 * 2, "\(line)") // 4 rewrites × 20 values × 2 overflow pages each
    }
}

@Suite("Concurrency: writers and readers")
struct ConcurrencyTests {
    /// 4 writer threads keep pairs of keys equal (both written in one transaction) while 32
    /// reader threads check, snapshot by snapshot, that every pair is equal.
    @Test func pairsAreEqualInEverySnapshot() throws {
        let folder = TemporaryFolder()
        var options = EnvironmentOptions()
        options.unsafeDurability = [.noSync] // this test is about isolation, not durability: skip fsync
        let env = try Environment.open(path: folder.path, options: options)
        let db = try env.openDatabase("pairs", key: StringCodec.self, value: BigEndian<UInt64>.self)
        let pairs = 16
        try env.write { txn in
            for i in 0..<pairs { try txn.put(0, forKey: "a\(i)", in: db); try txn.put(0, forKey: "b\(i)", in: db) }
        }
        let writersDone = Atomic<Int>(0)
        let snapshots = Atomic<Int>(0)
        let mismatches = Atomic<Int>(0)
        let errors = Mutex<[String]>([])
        let transactionsPerWriter = 300
        var bodies: [@Sendable () -> Void] = []
        for w in 0..<4 {
            bodies.append {
                var rng = UInt64(w + 1) &* 0x9E37_79B9_7F4A_7C15
                for n in 0..<transactionsPerWriter {
                    rng = rng &* 6364136223846793005 &+ 1442695040888963407
                    let i = Int(rng >> 33) % pairs
                    let value = UInt64(w) << 32 | UInt64(n)
                    do {
                        try env.write { txn in
                            try txn.put(value, forKey: "a\(i)", in: db)
                            try txn.put(value, forKey: "b\(i)", in: db)
                        }
                    } catch {
                        errors.withLock { $0.append("writer \(w): \(error)") }
                    }
                }
                writersDone.add(1, ordering: .sequentiallyConsistent)
            }
        }
        for r in 0..<32 {
            bodies.append {
                // Bounded: until the writers finish, and at most 2,000 snapshots per reader; at
                // least one, even when this thread starts after the writers are done (a loaded
                // machine can start threads late).
                var rounds = 0
                while (rounds == 0 || writersDone.load(ordering: .sequentiallyConsistent) < 4) && rounds < 2_000 {
                    rounds += 1
                    do {
                        try env.read { txn in
                            for i in 0..<pairs where try txn.get("a\(i)", in: db) != txn.get("b\(i)", in: db) {
                                mismatches.add(1, ordering: .relaxed)
                            }
                        }
                        snapshots.add(1, ordering: .relaxed)
                    } catch {
                        errors.withLock { $0.append("reader \(r): \(error)") }
                        return
                    }
                }
            }
        }
        runOnThreads(bodies)
        #expect(errors.withLock { $0 } == [])
        #expect(mismatches.load(ordering: .relaxed) == 0, "a snapshot saw a pair half-updated")
        #expect(snapshots.load(ordering: .relaxed) > 0)
        let final = try env.read { txn in try (0..<pairs).map { (try txn.get("a\($0)", in: db), try txn.get("b\($0)", in: db)) } }
        #expect(final.allSatisfy { $0.0 == $0.1 })
        #expect(try env.info().lastTransactionID >= 4 * transactionsPerWriter)
        print("concurrency: 4 writers × \(transactionsPerWriter) transactions, 32 readers, \(snapshots.load(ordering: .relaxed)) snapshots checked")
    }
}

/// Runs every body on a thread of its own and returns when all have finished.
func runOnThreads(_ bodies: [@Sendable () -> Void]) {
    let group = DispatchGroup()
    for body in bodies {
        group.enter()
        let thread = Thread {
            body()
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.wait()
}

import CDepotAtomic
import Foundation
import Synchronization
import Testing
import DepotTestSupport
@testable import DepotLMDB

/// The published copies of the database-handle cache (`Environment.DatabaseCacheSnapshot`):
/// creating and dropping databases again and again must not keep every copy ever published,
/// and readers looking databases up meanwhile must never meet a freed one.
@Suite("Database cache snapshots are reclaimed")
struct DatabaseSnapshotReclaimTests {
    /// Options for churning tests: many databases, no fsync (these tests are about memory).
    static var options: EnvironmentOptions {
        var options = EnvironmentOptions(maxDatabases: 64)
        options.unsafeDurability = [.noSync]
        return options
    }

    /// 2,000 creations and drops publish 4,000 copies of the cache: at most a few stay alive,
    /// and the version that identifies the handles rises at every change (never repeats).
    @Test func createAndDropChurnKeepsFewSnapshots() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path, options: Self.options)
        let stable = try env.openDatabase("stable", key: StringCodec.self, value: StringCodec.self)
        try env.write { txn in try txn.put("v", forKey: "k", in: stable) }
        var lastVersion = try env.read { $0.databaseHandlesVersion }
        var largest = 0
        for i in 0..<2_000 {
            let db = try env.openDatabase("temp\(i % 7)", key: StringCodec.self, value: StringCodec.self)
            let created = try env.read { $0.databaseHandlesVersion }
            #expect(created > lastVersion)
            try env.write { txn in
                try txn.put("\(i)", forKey: "k", in: db)
                try txn.drop(db)
            }
            let dropped = try env.read { $0.databaseHandlesVersion }
            #expect(dropped > created)
            lastVersion = dropped
            largest = max(largest, env.retainedDatabaseSnapshotCount)
        }
        #expect(largest <= 4, "largest number of retained snapshots: \(largest)")
        #expect(env.retainedDatabaseSnapshotCount <= 2)
        #expect(try env.read { try $0.get("k", in: stable) } == "v")
    }

    /// A look-up in progress (registered on its stripe) keeps the copy it may be reading: the
    /// next publication leaves it retired, and the one after the look-up ended frees it.
    @Test func aLookUpInProgressKeepsTheCopyItMayRead() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path, options: Self.options)
        _ = try env.openDatabase("first", key: StringCodec.self, value: StringCodec.self)
        #expect(env.retainedDatabaseSnapshotCount == 1)
        let stripe = env.gate.enterLookup()
        let raw = try #require(cdepot_atomic_load_pointer_seq_cst(env.publishedDatabases))
        _ = try env.openDatabase("second", key: StringCodec.self, value: StringCodec.self)
        #expect(env.retainedDatabaseSnapshotCount == 2)
        // Still alive: the look-up could be reading it.
        let first = Unmanaged<Environment.DatabaseCacheSnapshot>.fromOpaque(raw)._withUnsafeGuaranteedRef { $0.records["first"] }
        #expect(first != nil)
        env.gate.exitLookup(stripe)
        _ = try env.openDatabase("third", key: StringCodec.self, value: StringCodec.self)
        #expect(env.retainedDatabaseSnapshotCount == 1)
        #expect(env.publishedDatabase("first") != nil && env.publishedDatabase("third") != nil)
    }

    /// Readers on several threads look databases up without a lock (in their transactions and
    /// through `Environment.openDatabase`) while a writer creates, fills and drops others: every
    /// look-up finds the right handle (each database holds its own name), the handles' version
    /// never goes back, and the copies published meanwhile are reclaimed. (The readers do not
    /// open the databases being dropped: the point here is the published cache, not drops.)
    @Test func readersLookUpDatabasesWhileAWriterCreatesAndDrops() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path, options: Self.options)
        let names = (0..<8).map { "kept\($0)" }
        for name in names {
            let db = try env.openDatabase(name, key: StringCodec.self, value: StringCodec.self)
            try env.write { txn in try txn.put(name, forKey: "name", in: db) }
        }
        let stop = Atomic<Bool>(false)
        let failures = Mutex<[String]>([])
        let checked = Atomic<Int>(0)
        let group = DispatchGroup()
        for reader in 0..<3 {
            group.enter()
            Thread {
                defer { group.leave() }
                var lastVersion = 0
                var round = reader
                while !stop.load(ordering: .acquiring) {
                    round += 1
                    let name = names[round % names.count], other = names[(round * 5 + 3) % names.count]
                    do {
                        let db = try env.openDatabase(name, key: StringCodec.self, value: StringCodec.self, create: false)
                        try env.read { txn in
                            let version = txn.databaseHandlesVersion
                            if version < lastVersion { failures.withLock { $0.append("version \(version) after \(lastVersion)") } }
                            lastVersion = version
                            let found = try txn.get("name", in: db)
                            if found != name { failures.withLock { $0.append("\(name) read \(found ?? "nothing")") } }
                            let second = try txn.openDatabase(other, key: StringCodec.self, value: StringCodec.self, create: false)
                            let foundOther = try txn.get("name", in: second)
                            if foundOther != other { failures.withLock { $0.append("\(other) read \(foundOther ?? "nothing")") } }
                            if txn.isCurrentDatabase(named: other, dbi: second.dbi) { checked.add(1, ordering: .relaxed) }
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                        return
                    }
                }
            }.start()
        }
        for i in 0..<2_000 {
            let db = try env.openDatabase("temp\(i % 5)", key: StringCodec.self, value: StringCodec.self)
            try env.write { txn in
                try txn.put("\(i)", forKey: "k", in: db)
                try txn.drop(db)
            }
        }
        stop.store(true, ordering: .releasing)
        group.wait()
        #expect(failures.withLock { $0 } == [])
        #expect(checked.load(ordering: .relaxed) > 0)
        #expect(env.retainedDatabaseSnapshotCount <= 4, "retained: \(env.retainedDatabaseSnapshotCount)")
        #expect(env.databaseHandlesVersion >= 4_000)
    }
}

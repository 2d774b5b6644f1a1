import Foundation
import Testing
import DepotTestSupport
@testable import DepotLMDB

@Suite("Map growth and readers")
struct MapAndReaderTests {
    @Test func growsFrom64KiBThrough50MiBWithoutErrors() throws {
        let folder = TemporaryFolder()
        var options = EnvironmentOptions()
        options.mapSize = 64 * 1024
        let env = try Environment.open(path: folder.path, options: options)
        let db = try env.openDatabase("blobs", key: BigEndian<UInt32>.self, value: BytesCodec.self)
        let value = [UInt8](repeating: 7, count: 8000)
        var written = 0
        var key: UInt32 = 0
        while written < 52 << 20 {
            let first = key
            // The closure may run again after the map grew, so it must not change outside state.
            try env.write { txn throws in
                for k in first..<first + 50 { try txn.put(value, forKey: k, in: db) }
            }
            key += 50
            written += 50 * value.count
        }
        #expect(try env.info().mapSize >= 52 << 20)
        let count = try env.read { try $0.count(db) }
        #expect(count == Int(key))
        let sample = try env.read { try $0.get(key - 1, in: db) }
        #expect(sample == value)
    }

    @Test func oneHugeTransactionGrowsAndReruns() throws {
        let folder = TemporaryFolder()
        var options = EnvironmentOptions()
        options.mapSize = 64 * 1024
        let env = try Environment.open(path: folder.path, options: options)
        let db = try env.openDatabase("one", key: BigEndian<UInt32>.self, value: BytesCodec.self)
        var runs = 0
        try env.write { txn throws in
            runs += 1
            for i in 0..<2000 as Range<UInt32> { try txn.put([UInt8](repeating: 1, count: 1000), forKey: i, in: db) }
        }
        #expect(runs > 1, "the closure is re-run after the map grew")
        #expect(try env.read { try $0.count(db) } == 2000)
    }

    @Test func explicitTransactionsGetMapFull() throws {
        let folder = TemporaryFolder()
        var options = EnvironmentOptions()
        options.mapSize = 64 * 1024
        let env = try Environment.open(path: folder.path, options: options)
        let db = try env.openDatabase("x", key: BigEndian<UInt32>.self, value: BytesCodec.self)
        let txn = try env.beginTransaction()
        #expect(throws: LMDBError.mapFull) {
            for i in 0..<1000 as Range<UInt32> { try txn.put([UInt8](repeating: 1, count: 1000), forKey: i, in: db) }
        }
        txn.abort()
    }

    @Test func maxMapSizeIsRespected() throws {
        let folder = TemporaryFolder()
        var options = EnvironmentOptions()
        options.mapSize = 64 * 1024
        options.maxMapSize = 256 * 1024
        let env = try Environment.open(path: folder.path, options: options)
        let db = try env.openDatabase("x", key: BigEndian<UInt32>.self, value: BytesCodec.self)
        let error = #expect(throws: LMDBError.mapFull) {
            try env.write { txn throws in
                for i in 0..<1000 as Range<UInt32> { try txn.put([UInt8](repeating: 1, count: 1000), forKey: i, in: db) }
            }
        }
        #expect(error?.description.contains("maxMapSize") == true)
    }

    /// A `mapSize` above `maxMapSize` opened the map at `mapSize`: the cap did not hold.
    @Test func maxMapSizeBoundsTheInitialMap() throws {
        let folder = TemporaryFolder()
        var options = EnvironmentOptions()
        options.mapSize = 64 << 20
        options.maxMapSize = 256 * 1024
        let env = try Environment.open(path: folder.path, options: options)
        #expect(try env.info().mapSize == 256 * 1024)
        let db = try env.openDatabase("x", key: BigEndian<UInt32>.self, value: BytesCodec.self)
        #expect(throws: LMDBError.mapFull) {
            try env.write { txn throws in
                for i in 0..<1000 as Range<UInt32> { try txn.put([UInt8](repeating: 1, count: 1000), forKey: i, in: db) }
            }
        }
    }

    @Test func adoptsMapGrownByAnotherProcess() throws {
        let exe = try #require(depotExecutable(), "the depot executable must be built")
        let folder = TemporaryFolder()
        var options = EnvironmentOptions()
        options.mapSize = 256 * 1024
        let env = try Environment.open(path: folder.path, options: options)
        let db = try env.openDatabase("mine", key: StringCodec.self, value: StringCodec.self)
        try env.write { try $0.put("before", forKey: "k", in: db) }
        let before = try env.info().mapSize
        // Another process writes 4 MiB: it grows the map beyond ours.
        let result = try runProcess(exe, ["fill", "--path", folder.path, "--db", "theirs", "--count", "1000", "--value-size", "4000", "--map-size", "\(256 * 1024)"])
        #expect(result.status == 0, "\(result.err)")
        // Both a read and a write must adopt the new size without an error reaching us.
        let theirs = try env.openDatabase("theirs", key: StringCodec.self, value: BytesCodec.self, create: false)
        let count = try env.read { try $0.count(theirs) }
        #expect(count == 1000)
        try env.write { try $0.put("after", forKey: "k", in: db) }
        #expect(try env.info().mapSize > before)
        #expect(try env.read { try $0.get("k", in: db) } == "after")
    }

    @Test func thousandReadsFromManyTasksLeaveNoReaderSlots() async throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let db = try env.openDatabase("r", key: StringCodec.self, value: StringCodec.self)
        try await env.write { try $0.put("v", forKey: "k", in: db) }
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<1000 {
                group.addTask {
                    await Task.yield()
                    return try env.read { txn in try txn.get("k", in: db) == "v" ? 1 : 0 }
                }
            }
            var total = 0
            for try await n in group { total += n }
            #expect(total == 1000)
        }
        // Only the pool of reset, reusable transactions may keep slots; none holds a snapshot.
        let slots = try env.readerList()
        #expect(slots.count <= env.options.readTransactionPoolSize)
        #expect(slots.allSatisfy { $0.transactionID == nil })
    }

    @Test func readersFullIsATypedErrorAndRecovers() throws {
        let folder = TemporaryFolder()
        var options = EnvironmentOptions()
        options.maxReaders = 4
        let env = try Environment.open(path: folder.path, options: options)
        _ = try env.openDatabase("r")
        var open: [Transaction] = []
        for _ in 0..<4 { open.append(try env.beginTransaction(readOnly: true)) }
        let error = #expect(throws: LMDBError.readersFull) { _ = try env.beginTransaction(readOnly: true) }
        #expect(error?.description.contains("maxReaders") == true)
        for txn in open { try txn.commit() }
        open.removeAll()
        #expect(try env.read { _ in 42 } == 42)
    }

    @Test func longLivedReaderIsVisible() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let db = try env.openDatabase("r", key: StringCodec.self, value: StringCodec.self)
        let reader = try env.beginTransaction(readOnly: true)
        for i in 0..<5 { try env.write { try $0.put("\(i)", forKey: "k", in: db) } }
        let slot = try env.readerList().first { $0.transactionID != nil }
        #expect(slot?.processID == Int(getpid()))
        #expect(slot?.age == 5)
        try reader.commit()
    }
}

import Foundation
import Synchronization
import Testing
import DepotTestSupport
@testable import DepotLMDB

/// Databases created while readers run: a reader whose snapshot holds a new database can open
/// it (LMDB publishes a handle only after the commit has written its meta page, so a read
/// transaction begun between the two would see the database without a usable handle).
@Suite("Databases created under readers")
struct DatabaseCreationTests {
    /// Each write creates a database and records its number in a database opened before; the
    /// readers, spinning, open the database their snapshot records (so some begin while the
    /// creating write commits).
    @Test func aReaderOpensEveryDatabaseItsSnapshotHolds() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path, options: EnvironmentOptions(maxDatabases: 512))
        let meta = try env.openDatabase("meta", key: StringCodec.self, value: StringCodec.self)
        let stop = Atomic<Bool>(false)
        let failures = Mutex<[String]>([])
        let opened = Atomic<Int>(0)
        let group = DispatchGroup()
        for _ in 0..<3 {
            group.enter()
            Thread {
                defer { group.leave() }
                while !stop.load(ordering: .acquiring) {
                    do {
                        try env.read { txn in
                            guard let latest = try txn.get("latest", in: meta) else { return }
                            let db = try txn.openDatabase("d\(latest)", key: StringCodec.self, value: StringCodec.self, create: false)
                            if try txn.get("k", in: db) != latest { failures.withLock { $0.append("d\(latest): wrong value") } }
                            opened.add(1, ordering: .relaxed)
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                        return
                    }
                }
            }.start()
        }
        for i in 0..<300 {
            try env.write { txn in
                let db = try txn.openDatabase("d\(i)", key: StringCodec.self, value: StringCodec.self)
                try txn.put("\(i)", forKey: "k", in: db)
                try txn.put("\(i)", forKey: "latest", in: meta)
            }
        }
        stop.store(true, ordering: .releasing)
        group.wait()
        #expect(failures.withLock { $0 } == [])
        #expect(opened.load(ordering: .relaxed) > 0)
    }
}

/// `openDatabase` promised `incompatible` for flags other than the stored ones, and returned the
/// stored database instead: asked for as dupSort, a plain database overwrote the values meant
/// to be added.
@Suite("Databases opened with other flags")
struct DatabaseFlagMismatchTests {
    @Test func flagsOtherThanTheStoredOnesAreIncompatible() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        _ = try env.openDatabase("plain", key: StringCodec.self, value: StringCodec.self)
        _ = try env.openDatabase("dups", key: StringCodec.self, value: StringCodec.self, flags: .dupSort)
        for (name, flags) in [("plain", DatabaseFlags.dupSort), ("dups", .integerKey), ("dups", [.dupSort, .dupFixed])] {
            let error = #expect(throws: LMDBError.self) { _ = try env.openDatabase(name, key: StringCodec.self, value: StringCodec.self, flags: flags) }
            #expect(error?.code == LMDBError.incompatible.code, "\(name) as \(flags.rawValue): \(String(describing: error))")
        }
        // The stored flags, or none asked for: the database as it is.
        #expect(try env.openDatabase("dups", key: StringCodec.self, value: StringCodec.self, flags: .dupSort).flags == .dupSort)
        #expect(try env.openDatabase("dups", key: StringCodec.self, value: StringCodec.self).flags == .dupSort)
        try env.close()
        // A fresh environment (nothing cached) checks the same.
        let again = try Environment.open(path: folder.path)
        #expect(throws: LMDBError.self) { _ = try again.openDatabase("plain", key: StringCodec.self, value: StringCodec.self, flags: .dupSort, create: false) }
        try again.close()
    }
}

/// `env.openDatabase("")` returned the main database (the cache's key for it) and a name with a
/// NUL character opened the database named by its part before the NUL.
@Suite("Database names")
struct DatabaseNameTests {
    @Test func emptyNamesAndNamesWithNULAreRefused() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let main = try env.openDatabase(nil, key: StringCodec.self, value: StringCodec.self)
        _ = try env.openDatabase("a", key: StringCodec.self, value: StringCodec.self)
        try env.write { txn in try txn.put("main's", forKey: "k", in: main) }
        for name in ["", "a\u{0}b"] {
            let direct = #expect(throws: LMDBError.self) { _ = try env.openDatabase(name, key: StringCodec.self, value: StringCodec.self) }
            #expect(direct?.code == LMDBError.invalidArgument.code, "'\(name.debugDescription)': \(String(describing: direct))")
            let inWrite = #expect(throws: LMDBError.self) {
                try env.write { txn in _ = try txn.openDatabase(name, key: StringCodec.self, value: StringCodec.self) }
            }
            #expect(inWrite?.code == LMDBError.invalidArgument.code)
            #expect(throws: LMDBError.self) { _ = try env.openDatabase(name, create: false) }
        }
        #expect(try env.read { txn in try txn.get("k", in: main) } == "main's")
    }
}

/// Keys and values of sizes LMDB cannot hold in `integerKey`, `integerDup` and `dupFixed`
/// databases were taken, then read back cut, padded with bytes from beyond them, or not found.
@Suite("Fixed-size keys and values")
struct FixedSizeEntryTests {
    @Test func dupFixedValuesOfAnotherSizeAreRefused() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let fixed = try env.openDatabase("fx", key: StringCodec.self, value: BytesCodec.self, flags: [.dupSort, .dupFixed])
        try env.write { txn in
            try txn.put([4, 4, 4, 4], forKey: "k", in: fixed)
            try txn.put([5, 5, 5, 5], forKey: "k", in: fixed)
            try txn.put([1, 2], forKey: "other", in: fixed) // another key: its own size
        }
        for size in [2, 8, 1, 3] {
            let error = #expect(throws: LMDBError.self) {
                try env.write { txn in try txn.put([UInt8](repeating: UInt8(size), count: size), forKey: "k", in: fixed) }
            }
            #expect(error?.code == LMDBError.badValueSize.code, "\(size) bytes: \(String(describing: error))")
            #expect(throws: LMDBError.self) {
                try env.write { txn in try txn.withCursor(fixed) { c in try c.put([UInt8](repeating: 9, count: size), forKey: "k") } }
            }
        }
        #expect(try env.read { txn in try txn.entries(in: fixed).map(\.value) } == [[4, 4, 4, 4], [5, 5, 5, 5], [1, 2]])
    }

    @Test func integerKeysAndValuesAreFourOrEightBytes() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let keys = try env.openDatabase("ik", key: BytesCodec.self, value: StringCodec.self, flags: .integerKey)
        try env.write { txn in try txn.put("four", forKey: [1, 0, 0, 0], in: keys) }
        for size in [1, 2, 3, 5, 16] {
            let put = #expect(throws: LMDBError.self) { try env.write { txn in try txn.put("x", forKey: [UInt8](repeating: 1, count: size), in: keys) } }
            #expect(put?.code == LMDBError.badValueSize.code, "\(size)-byte key")
            #expect(throws: LMDBError.self) { _ = try env.read { txn in try txn.get([UInt8](repeating: 1, count: size), in: keys) } }
        }
        #expect(try env.read { txn in try txn.get([1, 0, 0, 0], in: keys) } == "four")
        let dups = try env.openDatabase("id", key: StringCodec.self, value: BytesCodec.self, flags: [.dupSort, .integerDup])
        #expect(throws: LMDBError.self) { try env.write { txn in try txn.put([1, 2, 3], forKey: "k", in: dups) } }
        try env.write { txn in try txn.put([1, 0, 0, 0, 0, 0, 0, 0], forKey: "k", in: dups) }
    }
}

import Foundation
import Testing
import DepotTestSupport
@testable import DepotLMDB

@Suite("Environment")
struct EnvironmentTests {
    @Test func opensWithPrivatePermissionsAndSafeFlags() throws {
        let folder = TemporaryFolder()
        let old = umask(0o022)
        defer { umask(old) }
        let env = try Environment.open(path: folder.sub("env"))
        try env.write { txn throws in
            let db = try txn.openDatabase("x", key: StringCodec.self, value: StringCodec.self)
            try txn.put("1", forKey: "a", in: db)
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: folder.sub("env/data.mdb"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let lock = try FileManager.default.attributesOfItem(atPath: folder.sub("env/lock.mdb"))
        #expect((lock[.posixPermissions] as? Int) == 0o600)
        let dir = try FileManager.default.attributesOfItem(atPath: folder.sub("env"))
        #expect((dir[.posixPermissions] as? Int) == 0o700)
        let flags = env.options.environmentFlags
        #expect(flags & 0x200000 != 0, "MDB_NOTLS must always be set")
        for unsafe: UInt32 in [0x10000, 0x40000, 0x80000, 0x100000] { // NOSYNC, NOMETASYNC, WRITEMAP, MAPASYNC
            #expect(flags & unsafe == 0)
        }
        #expect(env.maxKeySize == 511)
        #expect(Environment.libraryVersion.hasPrefix("LMDB 0.9"))
    }

    @Test func samePathTwiceGivesTheSameEnvironment() throws {
        let folder = TemporaryFolder()
        let a = try Environment.open(path: folder.sub("env"))
        let b = try Environment.open(path: folder.sub("env") + "/./")
        #expect(a === b)
        try FileManager.default.createSymbolicLink(atPath: folder.sub("link"), withDestinationPath: folder.sub("env"))
        let c = try Environment.open(path: folder.sub("link"))
        #expect(a === c)
        #expect(throws: LMDBError.incompatible) {
            _ = try Environment.open(path: folder.sub("link"), options: EnvironmentOptions(readOnly: true))
        }
    }

    @Test func reopenAfterReleaseSeesCommittedData() throws {
        let folder = TemporaryFolder()
        do {
            let env = try Environment.open(path: folder.path)
            let db = try env.openDatabase("d", key: StringCodec.self, value: StringCodec.self)
            try env.write { try $0.put("v", forKey: "k", in: db) }
        }
        let env = try Environment.open(path: folder.path)
        let db = try env.openDatabase("d", key: StringCodec.self, value: StringCodec.self, create: false)
        #expect(try env.read { try $0.get("k", in: db) } == "v")
    }

    @Test func closeWithLiveTransactionIsRefusedNotACrash() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let txn = try env.beginTransaction(readOnly: true)
        #expect(throws: LMDBError.busy) { try env.close() }
        txn.abort()
        try env.read { txn throws in
            #expect(throws: LMDBError.busy) { try env.close() }
            _ = txn
        }
        try env.close()
        #expect(env.isClosed)
        let error = #expect(throws: LMDBError.self) { try env.read { _ in 1 } }
        #expect(error?.description.contains("closed") == true)
        // The folder can be opened again once closed.
        let again = try Environment.open(path: folder.path)
        #expect(again !== env)
    }

    @Test func statInfoSyncCopy() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.sub("env"))
        let db = try env.openDatabase("numbers", key: BigEndian<UInt32>.self, value: StringCodec.self)
        try env.write { txn throws in
            for i in 0..<1000 as Range<UInt32> { try txn.put("value \(i)", forKey: i, in: db) }
        }
        #expect(try env.read { try $0.stat(db) }.entries == 1000)
        let info = try env.info()
        #expect(info.lastTransactionID >= 2)
        #expect(info.mapSize >= 64 << 20)
        try env.sync()
        try env.copy(to: folder.sub("copy"), compact: true)
        #expect(throws: LMDBError.self) { try env.copy(to: folder.sub("copy")) }
        let copy = try Environment.open(path: folder.sub("copy"))
        let copied = try copy.openDatabase("numbers", key: BigEndian<UInt32>.self, value: StringCodec.self, create: false)
        #expect(try copy.read { try $0.get(999, in: copied) } == "value 999")
        #expect(try env.databaseNames() == ["numbers"])
        #expect(try env.readerCheck() == 0)
    }

    @Test func readOnlyEnvironmentRefusesWrites() throws {
        let folder = TemporaryFolder()
        do {
            let env = try Environment.open(path: folder.path)
            _ = try env.openDatabase("d")
        }
        let env = try Environment.open(path: folder.path, options: EnvironmentOptions(readOnly: true))
        #expect(throws: LMDBError.permissionDenied) { try env.write { _ in } }
        #expect(throws: LMDBError.notFound) { _ = try env.openDatabase("missing") }
        _ = try env.openDatabase("d")
    }

    @Test func errorsArePatternMatchableAndReadable() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let db = try env.openDatabase("users", key: StringCodec.self, value: StringCodec.self)
        try env.write { try $0.put("a", forKey: "k", in: db) }
        do {
            try env.write { try $0.put("b", forKey: "k", in: db, flags: .noOverwrite) }
            Issue.record("expected keyExists")
        } catch LMDBError.keyExists {
            // matched by code
        }
        let error = #expect(throws: LMDBError.self) {
            try env.write { try $0.put("b", forKey: "k", in: db, flags: .noOverwrite) }
        }
        #expect(error?.database == "users")
        #expect(error?.description.contains("MDB_KEYEXIST") == true)
        #expect(error?.description.contains("users") == true)
    }
}

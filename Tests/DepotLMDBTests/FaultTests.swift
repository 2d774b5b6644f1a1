@testable import DepotLMDB
import DepotTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A synchronous write, outside the async test body (where `write {}` means the async one).
private func putSynchronously(_ env: Environment, _ db: Database<StringCodec, StringCodec>) throws {
    try env.write { try $0.put("v", forKey: "k", in: db) }
}

/// Issue #16: closed environments, options on reopening, MDB_PANIC recovery and a full disk.
@Suite("Faults: closed, reopened, panicked, disk full")
struct FaultTests {
    @Test func everyEntryPointOfAClosedEnvironmentThrowsClosed() async throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let db = try env.openDatabase("d", key: StringCodec.self, value: StringCodec.self)
        try putSynchronously(env, db)
        try await env.write { txn in try txn.put("w", forKey: "k2", in: db) }
        try env.close()
        try env.close() // closing twice does nothing
        let attempts: [(String, () throws -> Void)] = [
            ("info", { _ = try env.info() }),
            ("readerList", { _ = try env.readerList() }),
            ("readerCheck", { _ = try env.readerCheck() }),
            ("readersWithPinnedPages", { _ = try env.readersWithPinnedPages() }),
            ("freeList", { _ = try env.freeList() }),
            ("stat", { _ = try env.stat() }),
            ("sync", { try env.sync() }),
            ("copy", { try env.copy(to: folder.path + "-copy") }),
            ("read", { _ = try env.read { try $0.get("k", in: db) } }),
            ("write", { try putSynchronously(env, db) }),
            ("begin", { _ = try env.beginTransaction() }),
            ("begin read", { _ = try env.beginTransaction(readOnly: true) }),
            ("open database", { _ = try env.openDatabase("other") }),
            ("open existing database", { _ = try env.openDatabase("d", create: false) }),
            ("database names", { _ = try env.databaseNames() }),
        ]
        for (what, attempt) in attempts {
            let error = #expect(throws: LMDBError.closed, "\(what)") { try attempt() }
            #expect(error.map { "\($0)" }?.contains("closed") == true, "\(what)")
        }
        await #expect(throws: LMDBError.closed) { try await env.write { txn in try txn.put("v", forKey: "k", in: db) } }
        #expect(!FileManager.default.fileExists(atPath: folder.path + "-copy/data.mdb"))
    }

    @Test func reopeningWithOtherOptionsIsAClearError() throws {
        let folder = TemporaryFolder()
        var options = EnvironmentOptions()
        options.maxReaders = 50
        let env = try Environment.open(path: folder.path, options: options)
        #expect(try Environment.open(path: folder.path, options: options) === env, "same options: the same handle")
        let error = #expect(throws: LMDBError.incompatible) { _ = try Environment.open(path: folder.path) }
        #expect(error?.description.contains("maxReaders: 126 requested, 50 in use") == true, "\(String(describing: error))")
        #expect(try env.info().maxReaders == 50, "the open environment is unchanged")
        // localizedDescription (and an NSError's) shows the message too, not "could not be completed".
        let ns = try #require(error as NSError?)
        #expect(ns.localizedDescription.contains("maxReaders: 126 requested, 50 in use"), "\(ns.localizedDescription)")
        #expect(ns.domain == LMDBError.errorDomain && ns.code == Int(LMDBError.incompatible.code))
    }

    @Test func aFailedMetaPageWriteIsReportedAndTheEnvironmentRecovers() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let first = try env.openDatabase("first", key: StringCodec.self, value: StringCodec.self)
        let second = try env.openDatabase("second", key: StringCodec.self, value: StringCodec.self)
        try env.write { try $0.put("1", forKey: "before", in: first) }
        // The fault: the next commit fails as LMDB's does when pwrite of the meta page fails.
        env.simulateMetaWriteFailureOnNextCommit()
        var committed = false
        let error = #expect(throws: LMDBError.panic) {
            try env.write { txn in
                try txn.put("lost", forKey: "failed", in: first)
                txn.afterCommit { committed = true }
            }
        }
        #expect(error?.description.contains("meta page") == true)
        #expect(!committed, "the failed commit's after-commit handlers never run")
        #expect(env.gate.isPanicked)
        // The next write reopens the environment and goes on; old database handles stay valid.
        try env.write { txn in
            try txn.put("3", forKey: "after", in: first)
            try txn.put("x", forKey: "other", in: second)
        }
        #expect(env.panicRecoveries == 1, "the MDB_env was closed and a new one opened (its address may be reused)")
        #expect(!env.gate.isPanicked)
        try env.read { txn throws in
            #expect(try txn.get("before", in: first) == "1")
            #expect(try txn.get("failed", in: first) == nil, "the failed commit stays failed")
            #expect(try txn.get("after", in: first) == "3")
            #expect(try txn.get("other", in: second) == "x")
        }
        // A process opening the folder afresh sees the same.
        try env.close()
        let again = try Environment.open(path: folder.path)
        let reopened = try again.openDatabase("first", key: StringCodec.self, value: StringCodec.self, create: false)
        #expect(try again.read { try $0.get("after", in: reopened) } == "3")
    }

    /// Recovery when a dropped database left a gap in the handle numbers: LMDB gives the
    /// databases above it lower numbers. The environment recovers (it used to close for good),
    /// every database reads its own records by name, and a `Database` value whose number
    /// changed fails with `badDatabase` instead of reading its neighbour.
    @Test func recoveryAfterADropLeftAGap() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let first = try env.openDatabase("first", key: StringCodec.self, value: StringCodec.self)
        let middle = try env.openDatabase("middle", key: StringCodec.self, value: StringCodec.self)
        let last = try env.openDatabase("last", key: StringCodec.self, value: StringCodec.self)
        try env.write { txn in
            try txn.put("first's", forKey: "k", in: first)
            try txn.put("last's", forKey: "k", in: last)
            try txn.drop(middle)
        }
        env.simulateMetaWriteFailureOnNextCommit()
        #expect(throws: LMDBError.panic) { try env.write { try $0.put("lost", forKey: "k", in: first) } }
        try env.write { try $0.put("first's again", forKey: "k", in: first) }
        #expect(env.panicRecoveries == 1)
        #expect(try env.read { try $0.get("k", in: first) } == "first's again", "its number did not change")
        let moved = try env.openDatabase("last", key: StringCodec.self, value: StringCodec.self, create: false)
        #expect(moved.dbi < last.dbi, "LMDB gave it the lower, free number")
        #expect(try env.read { try $0.get("k", in: moved) } == "last's")
        #expect(throws: LMDBError.badDatabase) { _ = try env.read { try $0.get("k", in: last) } }
        // A database created now takes the old number: the old handle still fails.
        let newcomer = try env.openDatabase("newcomer", key: StringCodec.self, value: StringCodec.self)
        try env.write { try $0.put("newcomer's", forKey: "k", in: newcomer) }
        #expect(throws: LMDBError.badDatabase) { _ = try env.read { try $0.get("k", in: last) } }
        #expect(try env.read { try $0.get("k", in: newcomer) } == "newcomer's")
    }

    @Test func shortWriteOnAFullDiskIsClassifiedAsNoSpace() {
        #expect(LMDBError.classifyWriteFailure(code: EIO, freeBytes: 0) == ENOSPC)
        #expect(LMDBError.classifyWriteFailure(code: EIO, freeBytes: 4096) == ENOSPC)
        #expect(LMDBError.classifyWriteFailure(code: EIO, freeBytes: 10 << 30) == EIO, "a real I/O error on a disk with room")
        #expect(LMDBError.classifyWriteFailure(code: EIO, freeBytes: nil) == EIO, "free space unknown")
        #expect(LMDBError.classifyWriteFailure(code: ENOSPC, freeBytes: 10 << 30) == ENOSPC)
        #expect(LMDBError.classifyWriteFailure(code: EACCES, freeBytes: 0) == EACCES)
        let folder = TemporaryFolder()
        try? FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        #expect(LMDBError.freeBytes(inFolder: folder.path) != nil)
    }

    // Needs a real full disk: a 4 MiB tmpfs, which only root with CAP_SYS_ADMIN can mount (the
    // mapping alone is covered by shortWriteOnAFullDiskIsClassifiedAsNoSpace everywhere).
    @Test(.enabled(if: FaultInjection.canMountTmpfs, "mounting a 4 MiB tmpfs needs root and CAP_SYS_ADMIN"))
    func aFullDiskIsNoSpace() throws {
        let folder = TemporaryFolder("depot-fulldisk")
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        let mount = try #require(which("mount")), umount = try #require(which("umount"))
        let mounted = try runProcess(mount, ["-t", "tmpfs", "-o", "size=4m", "tmpfs", folder.path])
        try #require(mounted.status == 0, "mount: \(mounted.err)")
        defer { _ = try? runProcess(umount, ["-l", folder.path]) }
        let env = try Environment.open(path: folder.sub("env"))
        let db = try env.openDatabase("blobs", key: BigEndian<UInt32>.self, value: BytesCodec.self)
        let payload = [UInt8](repeating: 0x5A, count: 64 << 10)
        var written: UInt32 = 0
        var failure: (any Error)?
        while written < 200 { // 200 × 64 KiB = 12.5 MiB: far more than the disk holds
            do {
                try env.write { txn in
                    for i in 0..<4 as Range<UInt32> { try txn.put(payload, forKey: written * 4 + i, in: db) }
                }
                written += 1
            } catch {
                failure = error
                break
            }
        }
        let error = try #require(failure as? LMDBError, "the disk never filled up")
        #expect(error == LMDBError.noSpace, "\(error)")
        #expect(error.description.contains("is full"), "\(error)")
        print("FaultTests.aFullDiskIsNoSpace: \(written) transactions of 256 KiB committed on a 4 MiB tmpfs, then: \(error)")
        // Everything committed before is intact, and the environment still reads.
        #expect(try env.read { try $0.count(db) } == Int(written) * 4)
        try env.close()
    }

    /// A copy that fails part-way (here the test hook: the copy is written, then fails as on a
    /// full disk) leaves no partial data.mdb, which made every retry fail with "already exists";
    /// the folder goes too when the copy created it. The message speaks of a copy, not a commit.
    @Test func aFailedCopyRemovesItsPartialFileAndSaysSo() throws {
        let folder = TemporaryFolder("depot-copyfail")
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        let env = try Environment.open(path: folder.sub("source"))
        let db = try env.openDatabase("d", key: StringCodec.self, value: StringCodec.self)
        try putSynchronously(env, db)

        let fresh = folder.sub("fresh")
        env.databaseLock.withLock { env.simulatedCopyFailure = ENOSPC }
        let full = #expect(throws: LMDBError.self) { try env.copy(to: fresh) }
        #expect(full?.code == ENOSPC)
        let text = full?.description ?? ""
        // The simulated failure leaves the disk with room: the message says that too.
        #expect(text.contains("the disk holding '\(fresh)' is full") || text.contains("'\(fresh)' refused the write as full although"), "\(text)")
        #expect(!text.contains("free space unknown"), "the free space of the folder's file system, though the folder is gone: \(text)")
        #expect(text.contains("the incomplete copy and its folder were removed: free some space and copy again"), "\(text)")
        #expect(!text.contains("transaction"), "\(text)")
        #expect(!FileManager.default.fileExists(atPath: fresh), "the folder the copy created is gone")

        let existing = folder.sub("existing")
        try FileManager.default.createDirectory(atPath: existing, withIntermediateDirectories: true)
        env.databaseLock.withLock { env.simulatedCopyFailure = EACCES }
        let denied = #expect(throws: LMDBError.self) { try env.copy(to: existing) }
        #expect(denied?.code == EACCES)
        #expect(denied?.description.contains("the incomplete copy was removed") == true, "\(String(describing: denied))")
        #expect(FileManager.default.fileExists(atPath: existing), "a folder that was there stays")
        #expect(!FileManager.default.fileExists(atPath: existing + "/data.mdb"), "no partial copy is left")

        // A retry succeeds and the copy reads.
        try env.copy(to: existing)
        let copy = try Environment.open(path: existing)
        let copied = try copy.openDatabase("d", key: StringCodec.self, value: StringCodec.self, create: false)
        #expect(try copy.read { try $0.get("k", in: copied) } == "v")
    }
}

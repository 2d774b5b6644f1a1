import Foundation
import Synchronization
import Testing
import DepotTestSupport
@testable import DepotLMDB

/// Dropping databases. LMDB forgets a dropped name in the whole environment at once (an abort
/// does not bring it back), and a reader that uses the database for the first time afterwards
/// looks it up by that name: every reader must still read its snapshot's contents, an aborted
/// drop must leave the database as it was, and no handle may end up reading another database.
@Suite("Dropping databases")
struct DropTests {
    struct Boom: Error {}

    /// An environment with room for a few databases and no fsync.
    static func environment(_ folder: TemporaryFolder) throws -> Environment {
        var options = EnvironmentOptions(maxDatabases: 8)
        options.unsafeDurability = [.noSync]
        return try Environment.open(path: folder.path, options: options)
    }

    /// A value behind an `NSLock`. (These values are read while other threads write them:
    /// ThreadSanitizer follows a pthread mutex, not the futex inside `Synchronization.Mutex`.)
    /// `@unchecked Sendable`: the value is only reached with the lock held.
    final class Locked<Value: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Value
        init(_ value: Value) { self.value = value }
        func withLock<R>(_ body: (inout Value) -> R) -> R {
            lock.lock()
            defer { lock.unlock() }
            return body(&value)
        }
    }

    /// What the reader thread saw, and when the writer finished.
    final class Progress: Sendable {
        let readerBegan = Atomic<Bool>(false)
        let dropStarted = Atomic<Bool>(false)
        let writerFinished = Atomic<Bool>(false)
        let seen = Locked<[String?]>([])
        let failure = Locked<String?>(nil)
    }

    /// Opens (creates) the database `name` and stores `value` under "k" in it.
    static func stored(_ value: String, in name: String, _ env: Environment) throws -> Database<StringCodec, StringCodec> {
        let db = try env.openDatabase(name, key: StringCodec.self, value: StringCodec.self)
        try env.write { try $0.put(value, forKey: "k", in: db) }
        return db
    }

    /// Polls `condition` every millisecond until it holds or `seconds` pass.
    static func poll(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(1_000)
        }
        return condition()
    }

    @Test func aReaderBegunBeforeADropReadsItsSnapshot() throws {
        let folder = TemporaryFolder()
        let env = try Self.environment(folder)
        let doomed = try Self.stored("old", in: "doomed", env)
        let other = try Self.stored("someone else's", in: "other", env)
        let progress = Progress()
        let reader = Thread {
            do {
                let txn = try env.beginTransaction(readOnly: true)
                defer { txn.abort() }
                progress.readerBegan.store(true, ordering: .sequentiallyConsistent)
                // Give the drop (and the database that may take its handle over) time to commit;
                // a drop that waits for this reader never does, and the poll gives up.
                _ = Self.poll(seconds: 0.3) { progress.writerFinished.load(ordering: .sequentiallyConsistent) }
                let first = try txn.get("k", in: doomed)
                let again = try txn.get("k", in: doomed)
                progress.seen.withLock { $0 = [first, again] }
            } catch {
                progress.failure.withLock { $0 = "\(error)" }
            }
        }
        reader.start()
        #expect(Self.poll(seconds: 10) { progress.readerBegan.load(ordering: .sequentiallyConsistent) })
        try env.write { txn in try txn.drop(doomed) }
        // A new database may take the dropped one's handle.
        let newcomer = try env.openDatabase("newcomer", key: StringCodec.self, value: StringCodec.self)
        try env.write { txn in try txn.put("newcomer's", forKey: "k", in: newcomer) }
        progress.writerFinished.store(true, ordering: .sequentiallyConsistent)
        #expect(Self.poll(seconds: 10) { progress.seen.withLock { !$0.isEmpty } || progress.failure.withLock { $0 != nil } })
        #expect(progress.failure.withLock { $0 } == nil)
        #expect(progress.seen.withLock { $0 } == ["old", "old"])
        // Afterwards the database is gone, and the newcomer reads its own value.
        #expect(throws: LMDBError.notFound) {
            _ = try env.openDatabase("doomed", key: StringCodec.self, value: StringCodec.self, create: false)
        }
        #expect(try env.read { try $0.get("k", in: newcomer) } == "newcomer's")
        #expect(try env.read { try $0.get("k", in: other) } == "someone else's")
    }

    /// A reader that began before the drop reads its snapshot; one that begins while the drop
    /// waits for it waits for the commit, then finds the database gone and reads the others.
    @Test func readersBegunDuringTheDropSeeItGone() throws {
        let folder = TemporaryFolder()
        let env = try Self.environment(folder)
        let doomed = try Self.stored("old", in: "doomed", env)
        let kept = try Self.stored("kept", in: "kept", env)
        let progress = Progress()
        let early = Thread {
            do {
                let txn = try env.beginTransaction(readOnly: true)
                progress.readerBegan.store(true, ordering: .sequentiallyConsistent)
                // Hold the snapshot open while the drop starts (a drop that waits for this
                // reader never finishes meanwhile, and the poll gives up).
                _ = Self.poll(seconds: 0.3) { progress.writerFinished.load(ordering: .sequentiallyConsistent) }
                let value = try txn.get("k", in: doomed)
                txn.abort()
                progress.seen.withLock { $0.append(value) }
            } catch {
                progress.failure.withLock { $0 = "\(error)" }
            }
        }
        early.start()
        #expect(Self.poll(seconds: 10) { progress.readerBegan.load(ordering: .sequentiallyConsistent) })
        let late = Thread {
            // Begins while the drop waits for the early reader (or after it).
            _ = Self.poll(seconds: 10) { progress.dropStarted.load(ordering: .sequentiallyConsistent) }
            _ = Self.poll(seconds: 0.1) { progress.writerFinished.load(ordering: .sequentiallyConsistent) }
            do {
                let value = try env.read { txn -> String? in
                    let gone = (try? txn.openDatabase("doomed", key: StringCodec.self, value: StringCodec.self, create: false)) == nil
                    return gone ? try txn.get("k", in: kept) : "doomed still there"
                }
                progress.seen.withLock { $0.append(value) }
            } catch {
                progress.failure.withLock { $0 = "\(error)" }
            }
        }
        late.start()
        progress.dropStarted.store(true, ordering: .sequentiallyConsistent)
        try env.write { txn in try txn.drop(doomed) }
        progress.writerFinished.store(true, ordering: .sequentiallyConsistent)
        #expect(Self.poll(seconds: 10) { progress.seen.withLock { $0.count == 2 } || progress.failure.withLock { $0 != nil } })
        #expect(progress.failure.withLock { $0 } == nil)
        #expect(progress.seen.withLock { $0.sorted { ($0 ?? "") < ($1 ?? "") } } == ["kept", "old"])
        #expect(try env.databaseNames().contains("doomed") == false)
    }

    /// A drop in a transaction that aborts leaves the database, its contents and its handle as
    /// they were; a database created afterwards does not take the handle over.
    @Test func anAbortedDropLeavesTheDatabase() throws {
        let folder = TemporaryFolder()
        let env = try Self.environment(folder)
        let a = try Self.stored("a's", in: "a", env)
        #expect(throws: Boom.self) { try env.write { txn in try txn.drop(a); throw Boom() } }
        #expect(try env.read { try $0.get("k", in: a) } == "a's")
        let b = try Self.stored("b's", in: "b", env)
        #expect(b.dbi != a.dbi)
        #expect(try env.read { try $0.get("k", in: a) } == "a's")
        #expect(try env.databaseNames().sorted() == ["a", "b"])
        // And dropped for real afterwards.
        try env.write { txn in try txn.drop(a) }
        #expect(throws: LMDBError.notFound) { _ = try env.openDatabase("a", create: false) }
        #expect(try env.read { try $0.get("k", in: b) } == "b's")
    }

    /// Inside the dropping transaction the database is gone at once: empty, not found without
    /// `create`, and created again (empty, same handle) with the same flags, which keeps it.
    @Test func theDroppingTransactionSeesItGone() throws {
        let folder = TemporaryFolder()
        let env = try Self.environment(folder)
        let a = try Self.stored("old", in: "a", env)
        try env.write { txn in
            try txn.drop(a)
            #expect(try txn.get("k", in: a) == nil)
            #expect(throws: LMDBError.notFound) { _ = try txn.openDatabase("a", key: StringCodec.self, value: StringCodec.self, create: false) }
            let again = try txn.openDatabase("a", key: StringCodec.self, value: StringCodec.self)
            #expect(again.dbi == a.dbi)
            #expect(try txn.get("k", in: again) == nil)
            try txn.put("new", forKey: "k", in: again)
        }
        let a2 = try env.openDatabase("a", key: StringCodec.self, value: StringCodec.self, create: false)
        #expect(try env.read { try $0.get("k", in: a2) } == "new")
    }

    /// Created again with other flags in the dropping transaction: the old database goes at
    /// once and a new one takes the name; committed, the new one stays; aborted, the old one
    /// comes back whole and readable by name.
    @Test func recreatedWithOtherFlags() throws {
        for commit in [false, true] {
            let folder = TemporaryFolder()
            let env = try Self.environment(folder)
            let a = try Self.stored("old", in: "a", env)
            let other = try Self.stored("other's", in: "other", env)
            let outcome = Result<Void, any Error> {
                try env.write { txn in
                    try txn.drop(a)
                    let multi = try txn.openDatabase("a", key: StringCodec.self, value: StringCodec.self, flags: .dupSort)
                    #expect(multi.flags.contains(.dupSort))
                    try txn.put("one", forKey: "k", in: multi)
                    try txn.put("two", forKey: "k", in: multi)
                    if !commit { throw Boom() }
                }
            }
            #expect(((try? outcome.get()) != nil) == commit)
            let reopened = try env.openDatabase("a", key: StringCodec.self, value: StringCodec.self, create: false)
            #expect(reopened.flags.contains(.dupSort) == commit)
            #expect(try env.read { try $0.get("k", in: reopened) } == (commit ? "one" : "old"))
            #expect(try env.read { try $0.get("k", in: other) } == "other's")
        }
    }

    /// A drop in a child transaction that fails is undone with it; one in a child that
    /// succeeds happens when the parent commits.
    @Test func dropsInChildTransactions() throws {
        let folder = TemporaryFolder()
        let env = try Self.environment(folder)
        let a = try Self.stored("a's", in: "a", env)
        let b = try Self.stored("b's", in: "b", env)
        try env.write { txn in
            #expect(throws: Boom.self) {
                try txn.nested { child in
                    try child.drop(a)
                    // Other flags: deleted at once inside the child.
                    _ = try child.openDatabase("a", key: StringCodec.self, value: StringCodec.self, flags: .dupSort)
                    throw Boom()
                }
            }
            #expect(try txn.get("k", in: try txn.openDatabase("a", key: StringCodec.self, value: StringCodec.self, create: false)) == "a's")
            try txn.nested { child in try child.drop(b) }
            #expect(throws: LMDBError.notFound) { _ = try txn.openDatabase("b", key: StringCodec.self, value: StringCodec.self, create: false) }
        }
        let a2 = try env.openDatabase("a", key: StringCodec.self, value: StringCodec.self, create: false)
        #expect(try env.read { try $0.get("k", in: a2) } == "a's")
        #expect(throws: LMDBError.notFound) { _ = try env.openDatabase("b", create: false) }
        #expect(try env.databaseNames() == ["a"])
    }

    /// A drop whose parent transaction had dropped it already, deleted inside a child that then
    /// fails: the parent still drops it at commit.
    @Test func aParentsDropSurvivesAFailedChild() throws {
        let folder = TemporaryFolder()
        let env = try Self.environment(folder)
        let a = try Self.stored("a's", in: "a", env)
        try env.write { txn in
            try txn.drop(a)
            #expect(throws: Boom.self) {
                try txn.nested { child in
                    _ = try child.openDatabase("a", key: StringCodec.self, value: StringCodec.self, flags: .dupSort)
                    throw Boom()
                }
            }
        }
        #expect(throws: LMDBError.notFound) { _ = try env.openDatabase("a", create: false) }
        #expect(try env.databaseNames().isEmpty)
    }

    /// A handle kept past its database's drop fails with `badDatabase` naming the cause, even
    /// once a new database has taken its number: it never reads the newcomer.
    @Test func aHandleKeptPastItsDropFailsClearly() throws {
        let folder = TemporaryFolder()
        let env = try Self.environment(folder)
        let a = try Self.stored("a's", in: "a", env)
        try env.write { txn in try txn.drop(a) }
        let b = try Self.stored("b's", in: "b", env)
        #expect(b.dbi == a.dbi, "LMDB gives the freed number to the next database")
        let read = #expect(throws: LMDBError.badDatabase) { _ = try env.read { try $0.get("k", in: a) } }
        #expect(read?.description.contains("dropped") == true)
        #expect(throws: LMDBError.badDatabase) { try env.write { try $0.put("x", forKey: "k", in: a) } }
        #expect(throws: LMDBError.badDatabase) { try env.read { txn in try txn.forEach(in: a) { _, _ in true } } }
        #expect(throws: LMDBError.badDatabase) { _ = try env.read { try $0.count(a) } }
        #expect(try env.read { try $0.get("k", in: b) } == "b's")
    }

    /// Opens another database, which LMDB gives the number of the closed handle `kept`; `kept`
    /// must then fail with `badDatabase`, not read that database.
    static func expectFailsOnceItsNumberIsReused(_ kept: Database<StringCodec, StringCodec>?, _ env: Environment) throws {
        let other = try stored("other's", in: "other", env)
        let closed = try #require(kept)
        #expect(other.dbi == closed.dbi, "LMDB gives the freed number to the next database")
        #expect(throws: LMDBError.badDatabase) { _ = try env.read { try $0.get("k", in: closed) } }
    }

    /// A handle opened in a write that does not commit names no database afterwards (LMDB
    /// closes it): it fails clearly instead of reading the database that takes its number.
    @Test func aHandleFromAnAbortedWriteFailsClearly() throws {
        let folder = TemporaryFolder()
        let env = try Self.environment(folder)
        var kept: Database<StringCodec, StringCodec>?
        #expect(throws: Boom.self) {
            try env.write { txn in
                let temp = try txn.openDatabase("temp", key: StringCodec.self, value: StringCodec.self)
                try txn.put("temp's", forKey: "k", in: temp)
                kept = temp
                throw Boom()
            }
        }
        try Self.expectFailsOnceItsNumberIsReused(kept, env)
    }

    /// A handle opened inside a read (LMDB closes it at the end of the read, and the
    /// environment opens the database again for everyone) stays valid when it gets its number
    /// back, as it does with no free number below it.
    @Test func aHandleOpenedInAReadStaysValid() throws {
        let folder = TemporaryFolder()
        do {
            let env = try Self.environment(folder)
            _ = try Self.stored("v", in: "late", env)
        }
        let env = try Self.environment(folder)
        let late = try env.read { txn in try txn.openDatabase("late", key: StringCodec.self, value: StringCodec.self, create: false) }
        #expect(try env.read { try $0.get("k", in: late) } == "v")
        try env.write { try $0.put("w", forKey: "k", in: late) }
        #expect(try env.read { try $0.get("k", in: late) } == "w")
    }

    /// A handle opened in a child transaction that fails names no database afterwards (LMDB
    /// closes it with the child): it fails clearly once another database takes its number.
    @Test func aHandleFromAFailedChildFailsClearly() throws {
        let folder = TemporaryFolder()
        let env = try Self.environment(folder)
        var kept: Database<StringCodec, StringCodec>?
        try env.write { txn in
            #expect(throws: Boom.self) {
                try txn.nested { child in
                    let temp = try child.openDatabase("temp", key: StringCodec.self, value: StringCodec.self)
                    try child.put("temp's", forKey: "k", in: temp)
                    kept = temp
                    throw Boom()
                }
            }
        }
        try Self.expectFailsOnceItsNumberIsReused(kept, env)
        #expect(throws: LMDBError.notFound) { _ = try env.openDatabase("temp", create: false) }
    }
}

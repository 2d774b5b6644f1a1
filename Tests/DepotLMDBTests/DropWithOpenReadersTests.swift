import Foundation
import Synchronization
import Testing
import DepotTestSupport
@testable import DepotLMDB

/// Dropping a database while read transactions that began earlier are still open: LMDB forgets
/// the dropped name in the whole environment at once, and a reader that uses the database for
/// the first time afterwards looks it up by that name. Each reader must still read its
/// snapshot's contents, never nothing and never another database that took the handle over.
@Suite("Drops and earlier readers")
struct DropWithOpenReadersTests {
    /// What the reader thread saw, and when the writer finished.
    final class Progress: Sendable {
        let readerBegan = Atomic<Bool>(false)
        let writerFinished = Atomic<Bool>(false)
        let seen = Mutex<[String?]>([])
        let failure = Mutex<String?>(nil)
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
        var options = EnvironmentOptions(maxDatabases: 8)
        options.unsafeDurability = [.noSync]
        let env = try Environment.open(path: folder.path, options: options)
        let doomed = try env.openDatabase("doomed", key: StringCodec.self, value: StringCodec.self)
        let other = try env.openDatabase("other", key: StringCodec.self, value: StringCodec.self)
        try env.write { txn in
            try txn.put("old", forKey: "k", in: doomed)
            try txn.put("someone else's", forKey: "k", in: other)
        }
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

    /// Readers that begin while the drop waits wait for it, then see the database gone; a
    /// scoped read on other threads goes on after the drop without error.
    @Test func readersBegunDuringTheDropSeeItGone() throws {
        let folder = TemporaryFolder()
        var options = EnvironmentOptions(maxDatabases: 8)
        options.unsafeDurability = [.noSync]
        let env = try Environment.open(path: folder.path, options: options)
        let doomed = try env.openDatabase("doomed", key: StringCodec.self, value: StringCodec.self)
        let kept = try env.openDatabase("kept", key: StringCodec.self, value: StringCodec.self)
        try env.write { txn in
            try txn.put("old", forKey: "k", in: doomed)
            try txn.put("kept", forKey: "k", in: kept)
        }
        let progress = Progress()
        let early = Thread {
            do {
                let txn = try env.beginTransaction(readOnly: true)
                progress.readerBegan.store(true, ordering: .sequentiallyConsistent)
                usleep(50_000) // hold the snapshot open while the drop starts
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
            // Begins while the drop waits for the early reader, or after it.
            usleep(10_000)
            do {
                let value = try env.read { try $0.get("k", in: kept) }
                progress.seen.withLock { $0.append(value) }
            } catch {
                progress.failure.withLock { $0 = "\(error)" }
            }
        }
        late.start()
        try env.write { txn in try txn.drop(doomed) }
        #expect(Self.poll(seconds: 10) { progress.seen.withLock { $0.count == 2 } || progress.failure.withLock { $0 != nil } })
        #expect(progress.failure.withLock { $0 } == nil)
        #expect(progress.seen.withLock { $0.sorted { ($0 ?? "") < ($1 ?? "") } } == ["kept", "old"])
        #expect(try env.databaseNames().contains("doomed") == false)
    }
}

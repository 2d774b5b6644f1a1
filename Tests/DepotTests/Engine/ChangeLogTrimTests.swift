import DepotLMDB
import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

/// The cross-process change log is trimmed by the watchers, never by the writers: a writer only
/// appends (on a server, a writer that scanned the log would lock it against every other writer).
@Suite("Change log trimming")
struct ChangeLogTrimTests {
    private func entryCount(_ store: Store) throws -> Int {
        try store.driver.read { txn in
            guard let log = try txn.keyspace(named: ChangeLog.keyspace, create: false) else { return 0 }
            return try txn.count(log)
        }
    }

    @Test func writersAppendAndWatchersTrimWhatIsPastRetention() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let change: [(ChangeRecorder.Key, ChangeRecorder.State)] = [
            (.init(alias: "default", collection: "Note", key: Array("n1".utf8)), .init(existedBefore: false, existsNow: true, idKind: .string)),
        ]
        // An entry from long ago, then three fresh appends.
        try store.driver.write { txn in
            let log = try #require(try txn.keyspace(named: ChangeLog.keyspace, create: true))
            let stale = ChangeLog.Entry(writer: "old", time: Date().timeIntervalSince1970 - 10 * ChangeLog.retention, parts: [])
            try BigEndian<UInt64>.withBytes(of: 0) { k in try txn.put(try BinaryEncoder().encode(stale), forKey: [UInt8](k), in: log) }
        }
        for _ in 0..<3 {
            try store.driver.write { txn in try ChangeLog.append(change, writer: "w", txn: txn) }
        }
        #expect(try entryCount(store) == 4, "appending trims nothing")
        // A watcher's trim removes what is past retention, and only that.
        #expect(try store.driver.write { try ChangeLog.trim($0) } == 1)
        #expect(try entryCount(store) == 3)
        #expect(try store.driver.write { try ChangeLog.trim($0, now: Date().timeIntervalSince1970 + 2 * ChangeLog.retention) } == 3)
        #expect(try entryCount(store) == 0)
    }

    @Test func aWatcherTrimsWhenItRenewsItsLease() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        try store.driver.write { txn in
            let log = try #require(try txn.keyspace(named: ChangeLog.keyspace, create: true))
            let stale = ChangeLog.Entry(writer: "old", time: Date().timeIntervalSince1970 - 10 * ChangeLog.retention, parts: [])
            try BigEndian<UInt64>.withBytes(of: 0) { k in try txn.put(try BinaryEncoder().encode(stale), forKey: [UInt8](k), in: log) }
        }
        #expect(try entryCount(store) == 1)
        let watcher = try store.watchExternalChanges()
        defer { watcher.stop() }
        let deadline = Date().addingTimeInterval(120)
        while try entryCount(store) > 0 && Date() < deadline { usleep(20_000) }
        #expect(try entryCount(store) == 0, "the watcher's lease renewal trimmed the stale entry")
    }
}

import DepotLMDB
import DepotTestSupport
import Foundation
import Testing

@testable import Depot
@testable import DepotCore
@testable import DepotEngine

/// Counters and versions the store keeps in its meta records, damaged to their largest values
/// (as a corrupt or hostile file may hold them): every use is a typed error, never a trap.
@Suite("Damaged meta counters")
struct DamagedCounterTests {
    /// Writes `value` (8 bytes, big-endian) under `key` in the store's meta keyspace.
    private func setMeta(_ store: Store, _ key: [UInt8], to value: UInt64) throws {
        try store.driver.write { txn in
            let meta = try #require(try txn.keyspace(named: StoreLayout.metaDatabase, create: true))
            try BigEndian<UInt64>.withBytes(of: value) { v in try key.withUnsafeBytes { try txn.put(v, forKey: $0, in: meta) } }
        }
    }

    /// A collection's stored type version beyond `Int`: its reads and writes fail as a damaged
    /// record naming the collection.
    @Test func aTypeVersionOutOfRangeIsADamagedRecord() throws {
        let folder = TemporaryFolder()
        do {
            let store = try Store(path: folder.path)
            try store.write { tx in try tx.park(FZUnit(id: "a", label: "x")) }
            try setMeta(store, Array(StoreLayout.typeVersionKey(alias: "default", collection: FZUnit.collection).utf8), to: 1 << 63)
        }
        let reopened = try Store(path: folder.path)
        do {
            _ = try reopened.read { tx in try tx.retrieve(FZUnit.self, id: "a") }
            try reopened.write { tx in try tx.park(FZUnit(id: "b", label: "y")) }
            Issue.record("a type version of 2^63 was used")
        } catch let error as DepotError {
            #expect(error.code == .corruptRecord, "\(error)")
            #expect(error.message.contains(FZUnit.collection), "\(error.message)")
        }
    }

    /// The change log's counter at its largest value while a watcher makes writes log: the
    /// write fails (`exhausted`) and commits nothing.
    @Test func anExhaustedChangeLogCounterFailsTheWrite() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        try store.write { tx in try tx.park(FZUnit(id: "a", label: "x")) }
        try setMeta(store, StoreLayout.changeLogCounterKey, to: .max)
        let watcher = try store.watchExternalChanges()
        defer { watcher.stop() }
        do {
            try store.write { tx in try tx.park(FZUnit(id: "b", label: "y")) }
            Issue.record("a write logged past the counter's last value")
        } catch let error as DepotError {
            #expect(error.code == .exhausted, "\(error)")
        }
        #expect(try store.read { tx in try tx.retrieve(FZUnit.self, id: "b") } == nil)
    }

    /// A change log entry stamped with the largest key (another writer's, moved there): a
    /// watcher reports it once and reads no further (no stamp follows it), never trapping on
    /// the next one.
    @Test func aWatcherReportsAnEntryWithTheLastStampOnce() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let observer = RecordingObserver()
        store.addObserver(observer)
        let watcher = try store.watchExternalChanges(every: .milliseconds(2))
        defer { watcher.stop() }
        try store.write { tx in try tx.park(FZUnit(id: "a", label: "x")) }
        try store.driver.write { txn in
            let log = try #require(try txn.keyspace(named: ChangeLog.keyspace, create: false))
            var last: (key: [UInt8], value: [UInt8])?
            try txn.scan(log, lower: nil, upper: nil, prefix: nil, reverse: true) { key, value in
                last = ([UInt8](key), [UInt8](value))
                return false
            }
            let (key, value) = try #require(last)
            var entry = try BinaryDecoder().decode(ChangeLog.Entry.self, from: value)
            entry.writer = "another process"
            _ = try key.withUnsafeBytes { try txn.delete(forKey: $0, in: log) }
            try BigEndian<UInt64>.withBytes(of: .max) { k in try txn.put(try BinaryEncoder().encode(entry), forKey: [UInt8](k), in: log) }
        }
        func reports() -> Int { observer.sets.filter(\.isExternal).filter { $0.created(FZUnit.self) == ["a"] }.count }
        #expect(Self.poll(until: Date().addingTimeInterval(10)) { reports() >= 1 })
        // A later commit wakes the watcher again: it reads nothing more.
        try store.write { tx in try tx.park(FZUnit(id: "b", label: "y")) }
        _ = Self.poll(until: Date().addingTimeInterval(0.3)) { reports() > 1 }
        #expect(reports() == 1)
    }

    /// Whether `condition` held before `deadline` (checked every millisecond).
    static func poll(until deadline: Date, _ condition: () -> Bool) -> Bool {
        while Date() < deadline {
            if condition() { return true }
            usleep(1_000)
        }
        return condition()
    }
}

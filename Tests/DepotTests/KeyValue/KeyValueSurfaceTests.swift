import Foundation
import Testing
import DepotTestSupport
@testable import Depot
@testable import DepotCore
import DepotLMDB

/// Collects eviction notices from any thread.
private final class EvictionLog: @unchecked Sendable {
    // @unchecked Sendable: `items` is only touched with `lock` held.
    private let lock = NSLock()
    private var items: [KeyValueEviction] = []
    var all: [KeyValueEviction] { lock.withLock { items } }
    func append(_ eviction: KeyValueEviction) { lock.withLock { items.append(eviction) } }
}

@Suite("Kits: the key/value cache's GBStorage surface")
struct KeyValueSurfaceTests {
    let folder = TemporaryFolder()
    let store: Store
    init() throws { store = try Store(path: folder.path) }

    private func kvKeys(_ part: ChangeSet.CollectionChanges?, _ path: KeyPath<ChangeSet.CollectionChanges, [DocumentValue]>) -> [String] {
        (part?[keyPath: path] ?? []).compactMap { if case .string(let key) = $0 { return key } else { return nil } }.sorted()
    }

    @Test func clearCacheDropsUnsavedValuesToo() throws {
        let kv = store.keyValue()
        kv["saved"] = "on disk"
        try kv.save()
        kv["unsaved"] = "memory only"
        kv["saved"] = "changed, not saved"
        #expect(kv.hasUnsavedChanges)
        kv.clearCache()
        #expect(!kv.hasUnsavedChanges)
        #expect(kv.cachedKeys.isEmpty)
        #expect((kv["unsaved"] as String?) == nil, "the cache was the only copy")
        #expect((kv["saved"] as String?) == "on disk", "read from disk again")

        kv["one"] = "memory only"
        kv.clearCache(forKey: "one")
        #expect((kv["one"] as String?) == nil)
        #expect(!kv.hasUnsavedChanges)
        kv.removeAll()
        #expect(kv.statistics.entries == 0)
        #expect((kv["saved"] as String?) == "on disk", "removeAll() leaves disk alone")
    }

    @Test func isCachedAndCachedKeys() throws {
        let writer = store.keyValue()
        writer["disk"] = 1
        try writer.save()
        let kv = store.keyValue()
        #expect(!kv.isCached("disk"))
        _ = kv["disk"] as Int?
        #expect(kv.isCached("disk"))
        kv["b"] = 2
        kv["a"] = 3
        kv["gone"] = Int?.none
        #expect(!kv.isCached("gone"), "a pending deletion holds no value")
        #expect(!kv.isCached("never"))
        #expect(kv.cachedKeys == ["a", "b", "disk"])
    }

    @Test func removeAllPermanentlyEmptiesTheNamespaceOnly() throws {
        let kv = store.keyValue()
        let other = store.keyValue()
        let elsewhere = try store.alias("B").keyValue()
        kv["a"] = 1
        kv["b"] = 2
        try kv.save()
        elsewhere["a"] = 10
        try elsewhere.save()
        #expect((other["a"] as Int?) == 1)
        let observer = RecordingObserver()
        store.addObserver(observer)
        kv["c"] = 3 // unsaved: dropped too
        try kv.removeAllPermanently()
        #expect(kv.cachedKeys.isEmpty && !kv.hasUnsavedChanges)
        #expect((kv["a"] as Int?) == nil && (kv["c"] as Int?) == nil)
        #expect((other["a"] as Int?) == nil, "another cache of the alias dropped its saved copy")
        #expect((store.keyValue()["b"] as Int?) == nil)
        #expect((elsewhere["a"] as Int?) == 10)
        #expect((try store.alias("B").keyValue()["a"] as Int?) == 10, "other aliases keep their entries")
        let part = observer.sets.last?.changes(in: "$kv")
        #expect(kvKeys(part, \.deleted) == ["a", "b"])
        try kv.removeAllPermanently() // nothing left: no error
    }

    @Test func clearAliasRemovesKeyValueEntriesOnDisk() throws {
        let aliasB = try store.alias("B")
        let kv = aliasB.keyValue()
        kv["x"] = "one"
        kv["y"] = "two"
        try kv.save()
        try aliasB.write { tx in try tx.park(sampleEmployee("e")) }
        let main = store.keyValue()
        main["x"] = "kept"
        try main.save()

        #expect(try store.clearAlias("B") == 3, "one document and two entries")
        #expect((kv["x"] as String?) == nil, "the alias's cache dropped its saved copy")
        #expect((try store.alias("B").keyValue()["y"] as String?) == nil)
        #expect(try aliasB.count(Employee.self) == 0)
        #expect((store.keyValue()["x"] as String?) == "kept")
    }

    @Test(.timeLimit(.minutes(5))) func evictionsAreReportedByCallbackAndStream() async throws {
        let kv = store.keyValue(maxEntries: 2, maxBytes: 1 << 20)
        let log = EvictionLog()
        kv.onEviction = { log.append($0) }
        let stream = kv.evictions() // buffers from here on: read after the evictions, no reader task
        for key in ["a", "b", "c"] { kv[key] = key }
        try kv.save()                           // saved: "a" goes for room
        kv["d"] = "unsaved"
        kv.clearCache(forKey: "d")              // an unsaved value is lost
        try kv.deletePermanently("c")
        #expect(log.all.map(\.key) == ["a", "b", "d", "c"]) // "b" goes for room when "d" comes
        #expect(log.all.map(\.reason) == [.capacity, .capacity, .cleared, .removed])
        #expect(log.all.map(\.discardedUnsavedChange) == [false, false, true, false])
        #expect(!log.all.map(\.description).joined().contains("unsaved\""), "notices carry keys, not values")

        var streamed: [KeyValueEviction] = []
        var iterator = stream.makeAsyncIterator()
        while streamed.count < 4, let eviction = await iterator.next() { streamed.append(eviction) }
        #expect(streamed == log.all)
    }

    @Test func changeSetsTellCreatedFromUpdated() throws {
        let observer = RecordingObserver()
        store.addObserver(observer)
        let kv = store.keyValue()
        kv["new"] = 1
        try kv.save()
        kv["new"] = 2
        kv["other"] = 1
        try kv.save()
        try kv.deletePermanently("new")
        let parts = observer.sets.map { $0.changes(in: "$kv") }
        #expect(parts.count == 3)
        #expect(kvKeys(parts[0], \.created) == ["new"] && kvKeys(parts[0], \.updated).isEmpty)
        #expect(kvKeys(parts[1], \.created) == ["other"] && kvKeys(parts[1], \.updated) == ["new"])
        #expect(kvKeys(parts[2], \.deleted) == ["new"] && kvKeys(parts[2], \.created).isEmpty)
    }
}

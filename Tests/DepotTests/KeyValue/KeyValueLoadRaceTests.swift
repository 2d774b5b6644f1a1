import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

/// A value loaded from disk never replaces what the cache learnt while it loaded (GBStorage:
/// the cache holds a value until it is saved; a read loads only a key the cache lacks).
@Suite("Kits: key/value loads racing sets")
struct KeyValueLoadRaceTests {
    /// Sets `key` to `value` on another thread while a load of `key` is between disk and cache.
    private func setDuringLoad(_ kv: KeyValueStore, key: String, value: Int?) {
        kv.lock.withLock {
            kv.afterLoadForTesting = { @Sendable in
                let setter = Thread { kv.set(value, forKey: key) }
                setter.start()
                // The set takes the cache's lock, which the load does not hold here: wait for it.
                _ = DepotTestSupport.poll(seconds: 60) { kv.lock.withLock { kv.dirtyKeys.contains(KeyValueCacheKey(key)) } }
            }
        }
    }

    /// A store whose `key` holds `value` on disk, and a new cache of it that holds nothing yet.
    private func seeded(_ folder: TemporaryFolder, _ key: String, _ value: Int) throws -> (Store, KeyValueStore) {
        let store = try Store(path: folder.path)
        let seed = store.keyValue()
        seed.set(value, forKey: key)
        try seed.save()
        return (store, store.keyValue())
    }

    @Test func aReadMissDoesNotReplaceAValueSetWhileItLoaded() throws {
        let folder = TemporaryFolder()
        let (store, kv) = try seeded(folder, "count", 1)
        setDuringLoad(kv, key: "count", value: 42)
        let read: Int? = kv["count"]
        #expect(read == 1) // the read came first: it sees the saved value
        kv.lock.withLock { kv.afterLoadForTesting = nil }
        #expect(kv["count"] as Int? == 42)
        #expect(kv.hasUnsavedChanges)
        try kv.save()
        #expect(store.keyValue()["count"] as Int? == 42)
    }

    @Test func aPreloadDoesNotReplaceAValueSetWhileItLoaded() async throws {
        let folder = TemporaryFolder()
        let (_, kv) = try seeded(folder, "name", 7)
        setDuringLoad(kv, key: "name", value: 8)
        try await kv.preload("name")
        kv.lock.withLock { kv.afterLoadForTesting = nil }
        #expect(kv["name"] as Int? == 8)
        #expect(kv.hasUnsavedChanges)
    }

    @Test func aReadMissDoesNotBringBackAValueDeletedWhileItLoaded() throws {
        let folder = TemporaryFolder()
        let (store, kv) = try seeded(folder, "gone", 3)
        setDuringLoad(kv, key: "gone", value: nil)
        _ = kv["gone"] as Int?
        kv.lock.withLock { kv.afterLoadForTesting = nil }
        #expect(kv["gone"] as Int? == nil)
        try kv.save()
        #expect(store.keyValue()["gone"] as Int? == nil)
    }

    @Test func aLoadWithNothingChangedMeanwhileIsCached() throws {
        let folder = TemporaryFolder()
        let (_, kv) = try seeded(folder, "k", 5)
        #expect(kv["k"] as Int? == 5)
        #expect(kv["k"] as Int? == 5)
        #expect(kv.statistics.misses == 1 && kv.statistics.hits == 1)
    }
}

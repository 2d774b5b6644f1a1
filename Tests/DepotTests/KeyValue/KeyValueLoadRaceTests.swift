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

    @Test func aReadMissDoesNotReplaceAValueSetWhileItLoaded() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let seed = store.keyValue()
        seed["count"] = 1
        try seed.save()
        let kv = store.keyValue()
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
        let store = try Store(path: folder.path)
        let seed = store.keyValue()
        seed["name"] = 7
        try seed.save()
        let kv = store.keyValue()
        setDuringLoad(kv, key: "name", value: 8)
        try await kv.preload("name")
        kv.lock.withLock { kv.afterLoadForTesting = nil }
        #expect(kv["name"] as Int? == 8)
        #expect(kv.hasUnsavedChanges)
    }

    @Test func aReadMissDoesNotBringBackAValueDeletedWhileItLoaded() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let seed = store.keyValue()
        seed["gone"] = 3
        try seed.save()
        let kv = store.keyValue()
        setDuringLoad(kv, key: "gone", value: nil)
        _ = kv["gone"] as Int?
        kv.lock.withLock { kv.afterLoadForTesting = nil }
        #expect(kv["gone"] as Int? == nil)
        try kv.save()
        #expect(store.keyValue()["gone"] as Int? == nil)
    }

    @Test func aLoadWithNothingChangedMeanwhileIsCached() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let seed = store.keyValue()
        seed["k"] = 5
        try seed.save()
        let kv = store.keyValue()
        #expect(kv["k"] as Int? == 5)
        #expect(kv["k"] as Int? == 5)
        #expect(kv.statistics.misses == 1 && kv.statistics.hits == 1)
    }
}

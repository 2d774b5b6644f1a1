import DepotTestSupport
import Testing
@testable import Depot
@testable import DepotCore

@Suite("Key/value cache: eviction order")
struct KeyValueLRUTests {
    /// The heap against a scan for the oldest current entry (what eviction did before), over
    /// random uses, drops, unsaved marks and rebuilds.
    @Test func theHeapEvictsWhatAScanWould() {
        var rng = SystemRandomNumberGenerator()
        var lru = KeyValueLRU()
        var model: [KeyValueCacheKey: (use: UInt64, saved: Bool)] = [:]
        var clock: UInt64 = 0
        for step in 0..<20_000 {
            let key = KeyValueCacheKey("k\(Int.random(in: 0..<200, using: &rng))")
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<5: // used (saved)
                clock += 1
                model[key] = (clock, true)
                lru.push(clock, key)
            case 5: // changed, unsaved
                clock += 1
                model[key] = (clock, false)
            case 6: // dropped
                model[key] = nil
            case 7: // rebuilt from the live entries
                lru.rebuild(model.compactMap { $0.value.saved ? ($0.value.use, $0.key) : nil })
            default: // evict one
                let expected = model.filter { $0.value.saved }.min { $0.value.use < $1.value.use }?.key
                let got = lru.popOldest { use, key in model[key].map { $0.saved && $0.use == use } ?? false }
                #expect(got == expected, "step \(step)")
                if let got { model[got] = nil }
            }
        }
    }

    /// Many unsaved values, then one save: each set and the save cost O(log n), and the save
    /// evicts the oldest saved entries first, down to the bound.
    @Test func unsavedValuesThenSaveEvictsOldestFirst() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let kv = store.keyValue(maxEntries: 10, maxBytes: 1 << 20)
        for i in 0..<5_000 { kv["k\(i)"] = i }
        #expect(kv.statistics.entries == 5_000, "unsaved values are never evicted")
        #expect(kv.hasUnsavedChanges)
        _ = kv["k3"] as Int? // used again: the newest
        try kv.save()
        #expect(!kv.hasUnsavedChanges)
        #expect(kv.statistics.entries == 10)
        let hits = kv.statistics.hits
        #expect((kv["k3"] as Int?) == 3)
        #expect((kv["k4999"] as Int?) == 4999)
        #expect(kv.statistics.hits == hits + 2, "the most recently used stayed cached")
        #expect((kv["k0"] as Int?) == 0)
        #expect(kv.statistics.hits == hits + 2, "the oldest went first")
    }

    /// The cache's bookkeeping (bytes, unsaved keys, the bound) after every step of a random
    /// workload of reads, sets, deletes, saves and clears.
    @Test func bookkeepingHoldsUnderARandomWorkload() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let kv = store.keyValue(maxEntries: 8, maxBytes: 1 << 20)
        var rng = SystemRandomNumberGenerator()
        for step in 0..<3_000 {
            let key = "k\(Int.random(in: 0..<30, using: &rng))"
            switch Int.random(in: 0..<10, using: &rng) {
            case 0...3: _ = kv[key] as Int?
            case 4...5: kv[key] = step
            case 6: kv[key] = Int?.none
            case 7: try kv.save()
            case 8: kv.clearCache(forKey: key)
            default: if step % 50 == 0 { kv.clearCache() } else { try kv.save(key) }
            }
            kv.lock.withLock {
                #expect(kv.cache.values.reduce(0) { $0 + ($1.bytes?.count ?? 0) } == kv.bytesCached, "step \(step)")
                #expect(Set(kv.cache.filter { $0.value.dirty }.keys) == kv.dirtyKeys, "step \(step)")
                let saved = kv.cache.filter { !$0.value.dirty }.count
                #expect(kv.cache.count <= kv.maxEntries || saved == 0, "step \(step): \(kv.cache.count) entries, \(saved) saved")
            }
        }
    }
}

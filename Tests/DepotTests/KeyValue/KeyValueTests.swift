import Foundation
import Testing
import DepotTestSupport
@testable import Depot
@testable import DepotCore
import DepotLMDB

@Suite("Kits: cached key/value facade")
struct KeyValueTests {
    @Test func setIsMemoryOnlyUntilSaved() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let kv = store.keyValue()
        kv["name"] = "Ada"
        kv["count"] = 3
        let fresh = store.keyValue()
        #expect((fresh["name"] as String?) == nil, "not on disk before save")
        try kv.save("name")
        #expect((store.keyValue()["name"] as String?) == "Ada")
        #expect((store.keyValue()["count"] as Int?) == nil, "save(key) writes only that key")
        #expect(kv.hasUnsavedChanges)
        try kv.save()
        #expect(!kv.hasUnsavedChanges)
        #expect((store.keyValue()["count"] as Int?) == 3)
        // Wrong type: nil through the subscript, a clear error through value(forKey:as:).
        #expect((kv["count"] as String?) == nil)
        #expect(throws: DepotError.self) { _ = try store.keyValue().value(forKey: "count", as: String.self) }
        try kv.deletePermanently("name")
        #expect((store.keyValue()["name"] as String?) == nil)
        #expect((kv["name"] as String?) == nil)
        // Another alias keeps its own values.
        #expect((try store.alias("other").keyValue()["count"] as Int?) == nil)
    }

    @Test func cacheIsBoundedLRUAndCountsHits() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let writer = store.keyValue()
        for i in 0..<10 { writer["k\(i)"] = String(repeating: "x", count: 100 * (i + 1)) }
        try writer.save()
        let kv = store.keyValue(maxEntries: 3, maxBytes: 10_000)
        for i in 0..<5 { _ = kv["k\(i)"] as String? }
        var stats = kv.statistics
        #expect(stats.misses == 5 && stats.hits == 0)
        #expect(stats.entries == 3, "bounded by entries")
        _ = kv["k4"] as String?          // most recent: a hit
        _ = kv["k0"] as String?          // evicted long ago: a miss
        stats = kv.statistics
        #expect(stats.hits == 1 && stats.misses == 6)
        let small = store.keyValue(maxEntries: 100, maxBytes: 1_500)
        for i in 5..<10 { _ = small["k\(i)"] as String? }
        #expect(small.statistics.bytes <= 1_500, "bounded by bytes")
        // Unsaved values are never evicted.
        let dirty = store.keyValue(maxEntries: 2, maxBytes: 100)
        for i in 0..<5 { dirty["d\(i)"] = "value \(i)" }
        #expect(dirty.statistics.entries == 5)
        try dirty.save()
        #expect(dirty.statistics.entries <= 2)
        dirty.clearCache()
        #expect(dirty.statistics.entries == 0)
        #expect((dirty["d4"] as String?) == "value 4")
        dirty.clearCache(forKey: "d4")
        #expect(dirty.statistics.entries == 0)
    }

    @Test func preloadLoadsInTheBackground() async throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let writer = store.keyValue()
        writer["big"] = Array(0..<50_000)
        try writer.save()
        let kv = store.keyValue()
        try await kv.preload("big", as: [Int].self)
        #expect(kv.statistics.entries == 1 && kv.statistics.misses == 1)
        let big: [Int]? = kv["big"]
        #expect(big?.count == 50_000)
        #expect(kv.statistics.hits == 1)
        let raw = store.keyValue()
        try await raw.preload("big")
        #expect((raw["big"] as [Int]?)?.last == 49_999)
        #expect(raw.statistics.hits == 1)
        // A value of bytes preloaded raw reads back as the stored bytes, not as its encoding.
        writer["blob"] = [UInt8]([1, 2, 3])
        try writer.save()
        let bytes = store.keyValue()
        try await bytes.preload("blob")
        #expect((bytes["blob"] as [UInt8]?) == [1, 2, 3])
    }
}

/// Keys are stored by their UTF-8 bytes; the cache must tell apart two keys Swift's `String`
/// calls equal (canonically equivalent spellings), or one reads the other's value.
@Suite("Kits: key/value keys by bytes")
struct KeyValueKeyBytesTests {
    static let precomposed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    @Test(arguments: DriverKind.allCases)
    func canonicallyEquivalentKeysAreTwoEntries(_ kind: DriverKind) throws {
        #expect(Self.precomposed == Self.decomposed, "the premise: String calls them equal")
        let folder = TemporaryFolder()
        let store = try kind.makeStore(folder)
        let kv = store.keyValue()
        kv[Self.precomposed] = 1
        kv[Self.decomposed] = 2
        #expect((kv[Self.precomposed] as Int?) == 1, "unsaved, in memory")
        #expect((kv[Self.decomposed] as Int?) == 2)
        try kv.save()
        #expect(try kv.keys().count == 2)
        #expect((kv[Self.precomposed] as Int?) == 1, "saved, from the cache")
        #expect((kv[Self.decomposed] as Int?) == 2)
        let fresh = store.keyValue()
        #expect((fresh[Self.precomposed] as Int?) == 1, "from disk")
        #expect((fresh[Self.decomposed] as Int?) == 2)
        #expect(fresh.isCached(Self.decomposed))
        fresh.clearCache(forKey: Self.precomposed)
        #expect(!fresh.isCached(Self.precomposed) && fresh.isCached(Self.decomposed), "one dropped, the other kept")
        kv[Self.decomposed] = Int?.none
        try kv.save()
        #expect(try store.keyValue().keys().map { Array($0.utf8) } == [Array(Self.precomposed.utf8)], "the other spelling is left")
        #expect((store.keyValue()[Self.precomposed] as Int?) == 1)
    }

    @Test func unsavedKeysListedByBytes() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let kv = store.keyValue()
        kv[Self.precomposed] = 1
        kv[Self.decomposed] = 2
        let keys = try kv.keys()
        #expect(keys.count == 2)
        #expect(Set(keys.map { Array($0.utf8) }) == [Array(Self.precomposed.utf8), Array(Self.decomposed.utf8)])
    }
}

import DepotTestSupport
import Foundation
import Testing

@testable import Depot
@testable import DepotCore

/// A value of a class type: it can change in place after it was handed to a kit.
final class ICProfile: Codable, @unchecked Sendable {
    var name: String
    var visits: Int
    init(name: String, visits: Int) { self.name = name; self.visits = visits }
}

/// Issue 30 item 4: the key/value kit and `Persistent` save a value as it is at the save, also
/// when it is an object changed in place after it was set, loaded or saved.
@Suite("Values changed in place are saved as they are")
struct InPlaceChangeTests {
    let folder = TemporaryFolder()
    let store: Store
    init() throws { store = try Store(path: folder.path) }

    /// The value on disk, read by a fresh facade (no shared cache).
    private func onDisk(_ key: String) throws -> Int? {
        let fresh = try Store(path: folder.path).keyValue()
        fresh.clearCache()
        return try fresh.value(forKey: key, as: ICProfile.self)?.visits
    }

    @Test func aKeyValueObjectChangedAfterSetIsSavedAsItIs() throws {
        let kv = store.keyValue()
        let profile = ICProfile(name: "a", visits: 1)
        kv.set(profile, forKey: "p")
        profile.visits = 2
        try kv.save()
        #expect(try onDisk("p") == 2, "the save writes the object as it is now")
        #expect(!kv.hasUnsavedChanges)
    }

    @Test func aKeyValueObjectHandedOutByTheCacheIsSavedWhenChanged() throws {
        let kv = store.keyValue()
        kv.set(ICProfile(name: "a", visits: 1), forKey: "p")
        try kv.save()
        let cached = try #require(try kv.value(forKey: "p", as: ICProfile.self))
        #expect(!kv.hasUnsavedChanges)
        cached.visits = 5
        #expect(kv.hasUnsavedChanges, "a change in place counts")
        try kv.save()
        #expect(try onDisk("p") == 5)
        #expect(!kv.hasUnsavedChanges)
        cached.visits = 6
        try kv.save("p")
        #expect(try onDisk("p") == 6, "save(key) too")
        // A value loaded from disk (a cache miss) is the cache's too.
        let other = store.keyValue()
        let loaded = try #require(try other.value(forKey: "p", as: ICProfile.self))
        loaded.visits = 7
        try other.save()
        #expect(try onDisk("p") == 7)
    }

    @Test func aKeyValueStructIsACopy() throws {
        let kv = store.keyValue()
        var number = 1
        kv.set(number, forKey: "n")
        number = 2
        try kv.save()
        #expect(try kv.value(forKey: "n", as: Int.self) == 1)
        #expect(!kv.hasUnsavedChanges, "nothing to compare for values that are copies")
    }

    @Test func aPersistentObjectChangedInPlaceIsFlushed() throws {
        let persistent = try Persistent<ICProfile>(key: "profile", store: store)
        persistent.reset(ICProfile(name: "a", visits: 1))
        try persistent.save()
        #expect(!persistent.hasUnsavedChanges)
        persistent.value?.visits = 3 // changes the object; the property is not set
        #expect(persistent.hasUnsavedChanges, "a change in place counts")
        try persistent.flush()
        #expect(!persistent.hasUnsavedChanges)
        let reread = try Persistent<ICProfile>(key: "profile", store: try Store(path: folder.path))
        #expect(reread.value?.visits == 3)
    }

    @Test func aPersistentObjectChangedInPlaceIsSavedOnRelease() throws {
        do {
            let persistent = try Persistent<ICProfile>(key: "profile", store: store)
            persistent.reset(ICProfile(name: "a", visits: 1))
            try persistent.save()
            persistent.value?.visits = 9
        }
        let reread = try Persistent<ICProfile>(key: "profile", store: try Store(path: folder.path))
        #expect(reread.value?.visits == 9)
    }
}

import Foundation
import Testing
import DepotTestSupport
@testable import Depot
@testable import DepotCore
import DepotLMDB

struct KitPerson: Document, Equatable {
    static var collection: String { "Person" }
    var id: String
    var firstname: String
    var age: Int
}

struct Settings: Codable, Sendable, Equatable {
    var volume: Int
    var name: String
}

@Suite("Kits: dynamic objects")
struct DynamicObjectTests {
    @Test(arguments: DriverKind.allCases)
    func dynamicMembersStoreAndConvert(_ kind: DriverKind) throws {
        let folder = TemporaryFolder()
        let store = try kind.makeStore(folder)
        var person = DynamicObject(entity: "Person", id: "p1")
        person.firstname = "Wess"
        person.age = 38
        #expect(person.firstname == .string("Wess"))
        try store.write { tx in try tx.park(person) }
        let back = try #require(try store.read { try $0.retrieve(dynamic: "Person", id: "p1") })
        #expect(back == person)
        // Dynamic → typed, and typed → dynamic.
        let typed = try back.decode(as: KitPerson.self)
        #expect(typed == KitPerson(id: "p1", firstname: "Wess", age: 38))
        #expect(try store.retrieve(KitPerson.self, id: "p1") == typed)
        let fromTyped = try DynamicObject(KitPerson(id: "p2", firstname: "Ada", age: 36))
        #expect(fromTyped.entity == "Person" && fromTyped.age == .int(36))
        try store.write { tx in try tx.park(fromTyped) }
        #expect(try store.read { try $0.retrieveAll(dynamic: "Person") }.map(\.id) == [.string("p1"), .string("p2")])
        var unidentified = DynamicObject(entity: "Note")
        unidentified.text = "no id"
        try store.write { tx in
            try tx.park(unidentified)
            #expect(try tx.delete(person))
        }
        #expect(try store.read { try $0.retrieveAll(dynamic: "Note") }.first?.text == .string("no id"))
        #expect(try store.read { try $0.retrieve(dynamic: "Person", id: "p1") } == nil)
        person.removed = nil
        #expect(person.fields.map(\.key) == ["id", "firstname", "age"])
    }
}

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

@Suite("Kits: persistent single object")
struct PersistentTests {
    @Test func loadResetMutateSaveSynchronize() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        do {
            let settings = try Persistent<Settings>(key: "settings", store: store)
            #expect(settings.value == nil)
            settings.reset(Settings(volume: 1, name: "a"))
            settings.value?.volume = 7
            try settings.save()
            settings.value?.name = "saved on deinit"
        }
        let again = try Persistent<Settings>(key: "settings", store: store)
        #expect(again.value == Settings(volume: 7, name: "saved on deinit"))
        // Another handle in this process writes: the first one is told and updated.
        final class Box: @unchecked Sendable { var seen: [Settings?] = [] }
        let box = Box()
        again.onExternalChange = { box.seen.append($0) }
        let other = try Persistent<Settings>(key: "settings", store: try Store(path: folder.path))
        other.value = Settings(volume: 9, name: "other")
        try other.save()
        #expect(box.seen == [Settings(volume: 9, name: "other")])
        #expect(again.value?.volume == 9)
        // Its own saves are not reported as external.
        again.value?.volume = 10
        try again.save()
        #expect(box.seen.count == 1)
        try again.synchronize()
        #expect(again.value?.volume == 10)
    }

    @Test func fileRepositoryNoticesAnotherWriter() async throws {
        let folder = TemporaryFolder()
        let repository = try FileRepository(folder: URL(fileURLWithPath: folder.path), interval: 0.02)
        let object = try Persistent<Settings>(key: "prefs", repository: repository)
        object.reset(Settings(volume: 1, name: "mine"))
        try object.flush()
        var changes = object.externalChanges.makeAsyncIterator()
        // Someone else replaces the file.
        try await Task.sleep(for: .milliseconds(50))
        try repository.save(try BinaryEncoder().encode(Settings(volume: 2, name: "theirs")), forKey: "prefs")
        let seen = await changes.next()
        #expect(seen == Settings(volume: 2, name: "theirs"))
        #expect(object.value?.name == "theirs")
    }
}

@Suite("Kits: persistent objects share one watcher")
struct SharedWatcherTests {
    /// Many observed keys of one store share one external-change watcher (one thread, one
    /// lease), which stops when the last observation goes.
    @Test func observationsOfOneStoreShareAWatcher() async throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let repository = StoreRepository(store: store)
        let other = StoreRepository(store: try store.alias("B"))
        let second = try Store(path: folder.path)
        weak let shared: ExternalChangeWatcher?
        do {
            var tokens = try (0..<20).map { i in try repository.observe("k\(i)") {} }
            tokens.append(try other.observe("x") {})
            let watchers = tokens.compactMap { ($0 as? StoreRepository.ObservationToken)?.watcher }
            #expect(watchers.count == 21)
            #expect(Set(watchers.map(ObjectIdentifier.init)).count == 1, "one watcher for the store")
            shared = watchers.first
            let handle = try StoreRepository(store: second).observe("k0") {}
            #expect((handle as? StoreRepository.ObservationToken)?.watcher === watchers.first, "another handle on the same files shares it")
        }
        #expect(await eventually { shared == nil }, "the last observation gone, the watcher stopped and went")
        let again = try repository.observe("k0") {}
        #expect((again as? StoreRepository.ObservationToken)?.watcher != nil, "a new observation starts a new one")
    }

    /// Starting a shared watcher takes a lease (a write): it must not hold the table's lock
    /// meanwhile, or a writer releasing an observation of another store waits for it forever.
    @Test func startingAWatcherDoesNotBlockAWriterReleasingAnother() throws {
        let first = TemporaryFolder(), second = TemporaryFolder()
        let store1 = try Store(path: first.path), store2 = try Store(path: second.path)
        let held = LockedBox<Persistent<Int>?>(try Persistent<Int>(key: "b", store: store2))
        let inWrite = DispatchSemaphore(value: 0), writerDone = DispatchSemaphore(value: 0)
        Thread {
            try? store1.write { _ in
                inWrite.signal()
                Thread.sleep(forTimeInterval: 0.3) // the other thread is starting store1's watcher
                held.set(nil)                      // releases store2's observation
            }
            writerDone.signal()
        }.start()
        inWrite.wait()
        let created = DispatchSemaphore(value: 0)
        Thread {
            _ = try? Persistent<Int>(key: "a", store: store1)
            created.signal()
        }.start()
        #expect(writerDone.wait(timeout: .now() + 20) == .success, "the writer finished")
        #expect(created.wait(timeout: .now() + 20) == .success, "the persistent object was created")
    }
}

import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

// Ports of the test cases (or, where a library ships none, the README behaviour) of three of the
// libraries Depot promises to stand in for (DLData's are in DLDataPortTests.swift):
// - PersistentObject:    mattcomi/PersistentObject (PersistentObjectTests/PersistentObjectTests.swift)
// - GBStorageController: lmirosevic/GBStorage (its only test is an STFail placeholder: README ported)
// - Cargo:               wess/Cargo.objc (no tests: README and CargoObject.h ported)

// MARK: - PersistentObject

/// PersistentObject's test type is an NSObject subclass; a final class keeps reference identity.
final class KPPerson: Codable, Sendable, Equatable, CustomStringConvertible {
    let name: String
    let age: Int
    init(name: String, age: Int) { self.name = name; self.age = age }
    static func == (lhs: KPPerson, rhs: KPPerson) -> Bool { lhs.name == rhs.name && lhs.age == rhs.age }
    var description: String { "(\(name), \(age))" }
}

/// A repository that records what Persistent asks of it (PersistentObject's mock repository).
final class KPRecordingRepository: PersistentRepository, @unchecked Sendable {
    // @unchecked Sendable: every property is guarded by `lock`.
    private let lock = NSLock()
    private var _loads = 0, _saves = 0
    private var stored: [UInt8]?
    private var handler: (@Sendable () -> Void)?
    var loads: Int { lock.withLock { _loads } }
    var saves: Int { lock.withLock { _saves } }

    func load(_ key: String) throws -> [UInt8]? { lock.withLock { _loads += 1; return stored } }
    func save(_ bytes: [UInt8]?, forKey key: String) throws { lock.withLock { _saves += 1; stored = bytes } }
    func observe(_ key: String, _ handler: @escaping @Sendable () -> Void) throws -> AnyObject? {
        lock.withLock { self.handler = handler }
        return NSObject()
    }

    /// Someone else writes `value` and the repository reports it.
    func changeExternally(to value: KPPerson) throws {
        let bytes = try BinaryEncoder().encode(value)
        let handler = lock.withLock { stored = bytes; return self.handler }
        handler?()
    }
}

@Suite("Kits port: PersistentObject")
struct KitsPortPersistentObjectTests {
    // mattcomi/PersistentObject PersistentObjectTests.testBasic
    @Test func testBasic() throws {
        let folder = TemporaryFolder("kits-port")
        let store = try Store(path: folder.path)
        let person = try Persistent<KPPerson>(key: "person", store: store)
        #expect(person.value == nil, "fresh slate")
        person.reset(KPPerson(name: "Justin Theroux", age: 44))
        #expect(person.value != nil)
        #expect(try Persistent<KPPerson>(key: "person", store: store).value == nil, "not saved yet")
        try person.save()
        let another = try Persistent<KPPerson>(key: "person", store: store)
        let loaded = try #require(another.value)
        #expect(person.value == loaded, "equal…")
        #expect(person.value !== loaded, "…but not the same instance")
        another.reset(nil)
        #expect(try Persistent<KPPerson>(key: "person", store: store).value != nil, "reset to nil is unsaved")
        try another.save()
        #expect(try Persistent<KPPerson>(key: "person", store: store).value == nil)
    }

    // mattcomi/PersistentObject PersistentObjectTests.testFile
    @Test func testFile() throws {
        let folder = TemporaryFolder("kits-port")
        let url = URL(fileURLWithPath: folder.sub("Documents"))
        let person = try Persistent<KPPerson>(key: "test.data", repository: try FileRepository(folder: url))
        #expect(person.value == nil)
        person.reset(KPPerson(name: "Liv Tyler", age: 38))
        #expect(person.value != nil)
        try person.save()
        let another = try Persistent<KPPerson>(key: "test.data", repository: try FileRepository(folder: url))
        #expect(another.value == person.value)
        #expect(another.value != nil)
    }

    // mattcomi/PersistentObject PersistentObjectTests.testSynchronizeOnDeinit
    @Test func testSynchronizeOnDeinit() throws {
        let folder = TemporaryFolder("kits-port")
        let store = try Store(path: folder.path)
        var person: Persistent<KPPerson>? = try Persistent<KPPerson>(key: "person", store: store)
        #expect(person?.value == nil, "clean slate")
        person?.reset(KPPerson(name: "Carrie Coon", age: 35))
        #expect(person?.value != nil)
        #expect(try Persistent<KPPerson>(key: "person", store: store).value == nil, "not saved yet")
        person = nil // saved on deinit
        let another = try Persistent<KPPerson>(key: "person", store: store)
        let loaded = try #require(another.value)
        #expect(loaded.name == "Carrie Coon")
        #expect(loaded.age == 35)
    }

    // mattcomi/PersistentObject PersistentObjectTests.testRepository (testMockStrategy in older versions)
    @Test func testRepository() throws {
        let repository = KPRecordingRepository()
        final class Seen: @unchecked Sendable {
            let lock = NSLock()
            var names: [String?] = []
        }
        let seen = Seen()
        let person = try Persistent<KPPerson>(key: "person", repository: repository)
        person.onExternalChange = { new in seen.lock.withLock { seen.names.append(new?.name) } }
        #expect(repository.loads == 1, "unarchived at init")
        #expect(repository.saves == 0, "not archived at init")
        try person.save()
        #expect(repository.saves == 1, "archived by save")
        #expect(repository.loads == 1, "save does not synchronize")
        // PersistentObject's repository has its own synchronize(); Depot's synchronize() saves
        // pending changes and reads the repository again.
        try person.synchronize()
        #expect(repository.loads == 2, "synchronize went to the repository")
        let external = KPPerson(name: "Patti Levin", age: 60)
        try repository.changeExternally(to: external)
        #expect(person.value == external)
        #expect(seen.lock.withLock { seen.names } == ["Patti Levin"], "the owner was told")
    }
}

// MARK: - GBStorageController (README behaviour; the repository's only test is a placeholder)

@Suite("Kits port: GBStorageController")
struct KitsPortGBStorageTests {
    // lmirosevic/GBStorage README "Storing": set saves in memory only; save syncs to disk
    @Test func readmeStoringIsInMemoryUntilSave() throws {
        let folder = TemporaryFolder("kits-port")
        let store = try Store(path: folder.path)
        let storage = store.keyValue()
        storage["name"] = "Luka"
        #expect((storage["name"] as String?) == "Luka", "readable from memory at once")
        #expect((store.keyValue()["name"] as String?) == nil, "not on disk yet")
        try storage.save()
        #expect((store.keyValue()["name"] as String?) == "Luka")
        let reopened = try Store(path: folder.path)
        #expect((reopened.keyValue()["name"] as String?) == "Luka")
    }

    // lmirosevic/GBStorage README "Reading": checks the cache first, else reads from disk
    @Test func readmeReadingChecksCacheThenDisk() throws {
        let folder = TemporaryFolder("kits-port")
        let store = try Store(path: folder.path)
        let writer = store.keyValue()
        writer["name"] = "Luka"
        try writer.save()
        let storage = store.keyValue()
        #expect((storage["name"] as String?) == "Luka")
        #expect(storage.statistics.misses == 1 && storage.statistics.hits == 0, "first read from disk")
        #expect(storage.isCached("name"))
        #expect((storage["name"] as String?) == "Luka")
        #expect(storage.statistics.hits == 1 && storage.statistics.misses == 1, "second read from the cache")
    }

    // lmirosevic/GBStorage README "Specific sync": save(key) syncs one key to disk
    @Test func readmeSpecificSyncSavesOneKey() throws {
        let folder = TemporaryFolder("kits-port")
        let store = try Store(path: folder.path)
        let storage = store.keyValue()
        storage["name"] = "Luka"
        storage["city"] = "London"
        try storage.save("name")
        #expect((store.keyValue()["name"] as String?) == "Luka")
        #expect((store.keyValue()["city"] as String?) == nil, "other keys stay in memory")
        #expect(storage.hasUnsavedChanges)
    }

    // lmirosevic/GBStorage README "Preloading cache": preload loads a key into memory in the background
    @Test func readmePreloadingCache() async throws {
        let folder = TemporaryFolder("kits-port")
        let store = try Store(path: folder.path)
        let writer = store.keyValue()
        writer["bigObject"] = Array(repeating: "payload", count: 20_000)
        try writer.save()
        let storage = store.keyValue()
        #expect(!storage.isCached("bigObject"))
        try await storage.preload("bigObject")
        #expect(storage.isCached("bigObject"))
        let big: [String]? = storage["bigObject"]
        #expect(big?.count == 20_000)
        #expect(storage.statistics.hits == 1, "served from memory")
    }

    // lmirosevic/GBStorage README "Clear cache": clearCache / clearCacheForKey evict memory, keep disk
    @Test func readmeClearCacheKeepsFilesOnDisk() throws {
        let folder = TemporaryFolder("kits-port")
        let store = try Store(path: folder.path)
        let storage = store.keyValue()
        storage["name"] = "Luka"
        storage["city"] = "London"
        try storage.save()
        storage.clearCache(forKey: "name")
        #expect(!storage.isCached("name"))
        #expect(storage.isCached("city"), "only that key evicted")
        storage.clearCache()
        #expect(storage.cachedKeys.isEmpty, "entire cache evicted")
        #expect((storage["name"] as String?) == "Luka", "still on disk")
        #expect((storage["city"] as String?) == "London", "still on disk")
        // The in-memory cache is the only copy of an unsaved value (GBStorage's mechanics).
        storage["draft"] = "unsaved"
        storage.clearCache()
        #expect((storage["draft"] as String?) == nil)
    }

    // lmirosevic/GBStorage README "Deleting": deletePermanently removes from disk and cache
    @Test func readmeDeletePermanently() throws {
        let folder = TemporaryFolder("kits-port")
        let store = try Store(path: folder.path)
        let storage = store.keyValue()
        storage["bigObject"] = [1, 2, 3]
        try storage.save()
        #expect(storage.isCached("bigObject"))
        try storage.deletePermanently("bigObject")
        #expect(!storage.isCached("bigObject"))
        #expect((storage["bigObject"] as [Int]?) == nil)
        #expect((try Store(path: folder.path).keyValue()["bigObject"] as [Int]?) == nil)
    }
}

// MARK: - Cargo (README and CargoObject.h behaviour; the repository has no tests)

/// Cargo's "MyStorageEngine": a dictionary standing in for NSUserDefaults, counting calls.
final class KPDictionaryEngine: SimpleStorageBackend, @unchecked Sendable {
    // @unchecked Sendable: every property is guarded by `lock`.
    private let lock = NSLock()
    private var values: [String: Data] = [:]
    private var _saves = 0, _deletes = 0
    var saves: Int { lock.withLock { _saves } }
    var deletes: Int { lock.withLock { _deletes } }
    var storedKeys: [String] { lock.withLock { Array(values.keys) } }

    func save(_ data: Data, forKey key: String) throws { lock.withLock { _saves += 1; values[key] = data } }
    func load(forKey key: String) throws -> Data? { lock.withLock { values[key] } }
    func delete(forKey key: String) throws { lock.withLock { _deletes += 1; values[key] = nil } }
    func keys() throws -> [String] { lock.withLock { Array(values.keys) } }
}

@Suite("Kits port: Cargo")
struct KitsPortCargoTests {
    // wess/Cargo.objc README "Storage Driver": a custom driver saves, fetches and deletes documents
    @Test func readmeCustomStorageDriver() throws {
        let engine = KPDictionaryEngine()
        do {
            let store = try Store(driver: SimpleBackendDriver(backend: engine))
            var object = DynamicObject(entity: "MyObject", id: "me")
            object.firstname = "Wess"
            object.lastname = "Cope"
            try store.write { tx in try tx.park(object) }
        }
        #expect(engine.saves > 0, "saved through the driver")
        #expect(engine.storedKeys.allSatisfy { $0.hasPrefix("depot.") })
        // Another store over the same engine fetches what was saved.
        let store = try Store(driver: SimpleBackendDriver(backend: engine))
        let back = try #require(try store.read { try $0.retrieve(dynamic: "MyObject", id: "me") })
        #expect(back.firstname == "Wess" && back.lastname == "Cope")
        let deletesBefore = engine.deletes
        try store.write { tx throws in #expect(try tx.delete(back)) }
        #expect(engine.deletes > deletesBefore, "deleted through the driver")
        #expect(try store.read { try $0.retrieve(dynamic: "MyObject", id: "me") } == nil)
    }

    // wess/Cargo.objc README "CargoObject" (and CargoExample's app delegate): dynamic properties saved and fetched
    @Test func readmeCargoObjectDynamicProperties() throws {
        let store = try Store(driver: SimpleBackendDriver(backend: KPDictionaryEngine()))
        var model = DynamicObject(entity: "CETestModel")
        model.firstname = "wess"
        model.lastname = "cope"
        #expect(model.firstname == "wess")
        try store.write { tx in try tx.park(model) }
        let all = try store.read { try $0.retrieveAll(dynamic: "CETestModel") }
        #expect(all.count == 1)
        #expect(all.first?.firstname == "wess" && all.first?.lastname == "cope")
        #expect(all.first?.missing == nil, "an unset property reads nil")
    }

    // wess/Cargo.objc README "Notes": fetch returns all results and delete removes them
    @Test func readmeFetchReturnsAllAndDeleteRemovesThem() throws {
        let store = try Store(driver: SimpleBackendDriver(backend: KPDictionaryEngine()))
        let objects = (1...3).map { DynamicObject(entity: "MyObject", id: .int(Int64($0)), fields: [("firstname", .string("n\($0)"))]) }
        try store.write { tx in for o in objects { try tx.park(o) } }
        let all = try store.read { try $0.retrieveAll(dynamic: "MyObject") }
        #expect(all.count == 3)
        try store.write { tx throws in for o in all { #expect(try tx.delete(o)) } }
        #expect(try store.read { try $0.retrieveAll(dynamic: "MyObject") }.isEmpty)
    }

    // wess/Cargo.objc CargoObject.h revertToLast: go back to the previous save
    @Test func headerRevertToLast() throws {
        let store = try Store(driver: SimpleBackendDriver(backend: KPDictionaryEngine()))
        let history = store.enableUndo()
        var object = DynamicObject(entity: "MyObject", id: "me")
        object.firstname = "first"
        try store.write { tx in try tx.park(object) }
        object.firstname = "second"
        try store.write { tx in try tx.park(object) }
        #expect(try history.undo())
        #expect(try store.read { try $0.retrieve(dynamic: "MyObject", id: "me") }?.firstname == "first")
    }
}

import Depot
import DepotTestSupport
import Foundation
import Testing

/// Reads the key/value cache the moment a change notice arrives.
final class ReadingObserver: StoreObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var readOnNotice: [String?] = []
    let kv: KeyValueStore
    let key: String
    init(kv: KeyValueStore, key: String) { self.kv = kv; self.key = key }
    var values: [String?] { lock.withLock { readOnNotice } }
    func store(_ store: Store, didCommit changes: ChangeSet) {
        guard changes.isExternal else { return }
        let value: String? = kv[key]
        lock.withLock { readOnNotice.append(value) }
    }
}

@Suite("Key/value cache coherence across processes")
struct CacheCoherenceTests {
    @Test func cachedValueIsReplacedWhenAnotherProcessWritesTheKey() throws {
        let exe = try #require(depotExecutable())
        let folder = TemporaryFolder("depot-coherence")
        let store = try Store(path: folder.path)
        let kv = store.keyValue()
        kv["k"] = "old"
        kv["untouched"] = "same"
        try kv.save()
        #expect(kv["k"] == "old")
        let hitsBefore = kv.statistics.hits
        #expect(kv["k"] == "old" && kv.statistics.hits > hitsBefore, "served from the cache")
        let settings = try Persistent<String>(key: "p", store: store)
        settings.reset("old")
        try settings.save()
        // An observer registered before anything else reads on the notice itself.
        let observer = ReadingObserver(kv: kv, key: "k")
        store.addObserver(observer)
        let watcher = try store.watchExternalChanges(every: .milliseconds(20))
        defer { watcher.stop() }

        let written = try runProcess(exe, ["kv", "set", "--path", folder.path, "k", #""new""#])
        #expect(written.status == 0, "\(written.err)")
        #expect(waitUntil { !observer.values.isEmpty }, "the change notice arrived")
        #expect(observer.values.first == "new", "a read made on the notice returns the new value")
        #expect(kv["k"] == "new", "and so does every read after it")
        #expect(kv["untouched"] == "same")

        // Persistent: the value is replaced when the notice arrives.
        let persisted = try runProcess(exe, ["kv", "set", "--path", folder.path, "p", #""new""#])
        #expect(persisted.status == 0, "\(persisted.err)")
        #expect(waitUntil { settings.value == "new" })
    }

    @Test func anotherCacheOfThisProcessSeesASave() throws {
        let folder = TemporaryFolder("depot-coherence-local")
        let store = try Store(path: folder.path)
        let first = store.keyValue(), second = store.keyValue()
        first["k"] = 1
        try first.save()
        #expect(second["k"] == 1)
        first["k"] = 2
        try first.save()
        #expect(second["k"] == 2, "the other cache dropped its copy at the save")
        second["k"] = 3 // unsaved here: a save elsewhere does not drop it
        first["k"] = 4
        try first.save()
        #expect(second["k"] == 3)
    }
}

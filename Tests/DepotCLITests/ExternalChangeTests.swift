import Depot
import DepotLMDB
import DepotTestSupport
import Foundation
import Testing

struct KVSettings: Codable, Sendable, Equatable {
    var volume: Int
    var name: String
}

final class ExternalObserver: StoreObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var received: [ChangeSet] = []
    var sets: [ChangeSet] { lock.withLock { received } }
    func store(_ store: Store, didCommit changes: ChangeSet) { lock.withLock { received.append(changes) } }
}

func waitUntil(seconds: Double = 10, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        usleep(10_000)
    }
    return try condition()
}

@Suite("External changes from other processes")
struct ExternalChangeTests {
    @Test func watcherReportsExactlyWhatAnotherProcessChanged() throws {
        let exe = try #require(depotExecutable())
        let folder = TemporaryFolder("depot-watch")
        let store = try Store(path: folder.sub("store"))
        let observer = ExternalObserver()
        store.addObserver(observer)
        // A commit of this process before watching: never reported as external.
        try store.write { tx in try tx.park(DynamicObject(entity: "Company", id: "mine")) }
        let watcher = try store.watchExternalChanges(every: .milliseconds(20))
        defer { watcher.stop() }
        // Another process seeds a small tree.
        let tree = URL(fileURLWithPath: folder.sub("tree"))
        let (root, _, _) = try SeedFixture.generate(in: tree, companies: 2, employeesPerCompany: 3, employeesPerFile: 3)
        let seeded = try runProcess(exe, ["seed", "--path", folder.sub("store"), root.path])
        #expect(seeded.status == 0, "\(seeded.err)")
        #expect(waitUntil { observer.sets.contains { $0.isExternal } })
        let external = observer.sets.filter(\.isExternal)
        #expect(external.count == 1, "one commit, one change set")
        let change = try #require(external.first)
        #expect(change.changes(in: "Company")?.created == [.string("C0"), .string("C1")])
        #expect(change.changes(in: "Employee")?.created == ["C0-E0", "C0-E1", "C0-E2", "C1-E0", "C1-E1", "C1-E2"].map { DocumentValue.string($0) })
        #expect(change.collections.count == 2)
        // A change of this process is delivered once, as an in-process change set only.
        try store.write { tx in try tx.park(DynamicObject(entity: "Company", id: "mine2")) }
        usleep(150_000)
        #expect(observer.sets.filter(\.isExternal).count == 1)
        // The other process updates and deletes through depot kv and query-visible writes.
        let kvSet = try runProcess(exe, ["kv", "set", "--path", folder.sub("store"), "flag", "true"])
        #expect(kvSet.status == 0, "\(kvSet.err)")
        #expect(waitUntil { observer.sets.filter(\.isExternal).count == 2 })
        #expect(observer.sets.filter(\.isExternal).last?.changes(in: "$kv")?.created == [.string("flag")], "a new key is created")
        let kvUpdate = try runProcess(exe, ["kv", "set", "--path", folder.sub("store"), "flag", "false"])
        #expect(kvUpdate.status == 0, "\(kvUpdate.err)")
        #expect(waitUntil { observer.sets.filter(\.isExternal).count == 3 })
        #expect(observer.sets.filter(\.isExternal).last?.changes(in: "$kv")?.updated == [.string("flag")], "an existing key is updated")
    }

    @Test func nobodyWatchingMeansNoLog() throws {
        let exe = try #require(depotExecutable())
        let folder = TemporaryFolder("depot-nowatch")
        _ = try runProcess(exe, ["kv", "set", "--path", folder.path, "a", "1"])
        let env = try Environment.open(path: folder.path)
        #expect(throws: LMDBError.notFound) { _ = try env.openDatabase("depot.changes", create: false) }
    }

    @Test func persistentObjectSeesAnotherProcessWriteItsKey() throws {
        let exe = try #require(depotExecutable())
        let folder = TemporaryFolder("depot-persistent")
        let store = try Store(path: folder.path)
        let settings = try Persistent<KVSettings>(key: "settings", store: store)
        settings.reset(KVSettings(volume: 1, name: "here"))
        try settings.save()
        final class Box: @unchecked Sendable {
            let lock = NSLock()
            var values: [KVSettings?] = []
        }
        let box = Box()
        settings.onExternalChange = { value in box.lock.withLock { box.values.append(value) } }
        let written = try runProcess(exe, ["kv", "set", "--path", folder.path, "settings", #"{"volume": 11, "name": "there"}"#])
        #expect(written.status == 0, "\(written.err)")
        #expect(waitUntil { box.lock.withLock { !box.values.isEmpty } })
        #expect(box.lock.withLock { box.values } == [KVSettings(volume: 11, name: "there")])
        #expect(settings.value == KVSettings(volume: 11, name: "there"))
    }
}

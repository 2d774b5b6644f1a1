import Depot
import DepotTestSupport
import Foundation
import Testing

/// The values an observing task saw (guarded by `lock`).
final class LiveValues: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int] = []
    var all: [Int] { lock.withLock { values } }
    func append(_ value: Int) { lock.withLock { values.append(value) } }
}

@Suite("Live queries see other processes' commits")
struct LiveQueryExternalTests {
    @Test func anotherProcessSeedingReachesALiveQuery() async throws {
        let exe = try #require(depotExecutable())
        let folder = TemporaryFolder("depot-live-external")
        let store = try Store(path: folder.sub("store"))
        let watcher = try store.watchExternalChanges(every: .milliseconds(20))
        defer { watcher.stop() }
        let seen = LiveValues()
        let observation = store.observe(collections: ["Company"]) { tx in try tx.retrieveAll(dynamic: "Company").count }
        let consumer = Task { for try await count in observation { seen.append(count) } }
        defer { consumer.cancel() }
        #expect(await pollAsync { seen.all == [0] }, "the value at start")
        let tree = URL(fileURLWithPath: folder.sub("tree"))
        let (root, _, _) = try SeedFixture.generate(in: tree, companies: 2, employeesPerCompany: 3, employeesPerFile: 3)
        let seeded = try runProcess(exe, ["seed", "--path", folder.sub("store"), root.path])
        #expect(seeded.status == 0, "\(seeded.err)")
        #expect(await pollAsync { seen.all.last == 2 }, "the other process's companies: \(seen.all)")
    }
}

import DepotTestSupport
import Foundation
import Synchronization
import Testing
@testable import Depot

/// `store.read {}` reuses each thread's read view from one transaction to the next (see
/// `ReadSessions`): what it resolved must never outlive a change that invalidates it, and a view
/// its caller kept must not be handed to anyone else.
@Suite("Read sessions")
struct ReadSessionTests {
    let folder = TemporaryFolder()
    let store: Store
    init() throws { store = try Store(path: folder.path) }

    @Test func consecutiveReadsOnOneThreadReuseTheirView() throws {
        try store.write { tx throws in _ = try tx.park(Department(id: "d1", name: "R&D")) }
        let first = try store.read { tx in ObjectIdentifier(tx) }
        for _ in 0..<5 {
            #expect(try store.read { tx in ObjectIdentifier(tx) } == first)
            #expect(try store.read { try $0.retrieve(Department.self, id: "d1") }?.name == "R&D")
        }
    }

    @Test func aViewKeptPastItsClosureIsNeverReusedAndReportsItEnded() throws {
        try store.write { tx throws in _ = try tx.park(Department(id: "d1", name: "R&D")) }
        var kept: DocumentTransaction?
        try store.read { tx in kept = tx }
        let keptView = try #require(kept)
        for _ in 0..<3 {
            #expect(try store.read { tx in tx !== keptView })
        }
        #expect(keptView.store === store)
        #expect(throws: DepotError.self) { try keptView.retrieve(Department.self, id: "d1") }
    }

    @Test func readsOnManyThreadsSeeEveryCommitAndSchemaChange() throws {
        try store.write { tx throws in
            for i in 0..<20 { _ = try tx.park(Department(id: "d\(i)", name: "v0")) }
        }
        let temp = try store.alias("Scratch")
        let stop = Atomic<Bool>(false)
        let failures = Mutex<[String]>([])
        let reads = Atomic<Int>(0)
        let group = DispatchGroup()
        for t in 0..<6 {
            group.enter()
            Thread {
                defer { group.leave() }
                var rounds = 0
                while rounds == 0 || !stop.load(ordering: .acquiring) {
                    rounds += 1
                    do {
                        // One snapshot: all 20 documents carry the same version.
                        let names = try store.read { tx in try (0..<20).map { try tx.retrieve(Department.self, id: "d\($0)")?.name } }
                        if Set(names).count != 1 || names.contains(nil) { failures.withLock { $0.append("thread \(t): \(names)") } }
                        _ = try temp.read { try $0.fetch(Department.self) }
                        reads.add(1, ordering: .relaxed)
                    } catch {
                        failures.withLock { $0.append("thread \(t): \(error)") }
                        return
                    }
                }
            }.start()
        }
        for version in 1...30 {
            try store.write { tx throws in
                for i in 0..<20 { _ = try tx.park(Department(id: "d\(i)", name: "v\(version)")) }
            }
            // Schema changes under the readers: a collection created and dropped.
            try temp.write { tx throws in _ = try tx.park(Department(id: "s\(version)", name: "s")) }
            if version % 3 == 0 { try store.dropAlias("Scratch") }
        }
        stop.store(true, ordering: .releasing)
        group.wait()
        #expect(failures.withLock { $0 } == [])
        #expect(reads.load(ordering: .relaxed) > 0)
        #expect(try store.read { try $0.retrieve(Department.self, id: "d7") }?.name == "v30")
    }
}

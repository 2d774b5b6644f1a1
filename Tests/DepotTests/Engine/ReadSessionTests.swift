import DepotTestSupport
import Foundation
import Synchronization
import Testing
@testable import Depot
@testable import DepotCore

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

    /// A reused view reads through the record transform: its context holds the transform's
    /// wrapper of each transaction for the read (nobody else does), and lets go of it after.
    @Test func reusedViewsReadThroughARecordTransform() throws {
        let other = TemporaryFolder()
        var options = StoreOptions()
        options.recordTransform = ToyTransform(keyByte: 0x3C)
        let sealed = try Store(path: other.path, options: options)
        try sealed.write { tx throws in for i in 0..<5 { _ = try tx.park(SecretNote(id: "n\(i)", text: "note \(i)")) } }
        let first = try sealed.read { tx in ObjectIdentifier(tx) }
        for round in 0..<20 {
            let (view, text) = try sealed.read { tx in (ObjectIdentifier(tx), try tx.retrieve(SecretNote.self, id: "n\(round % 5)")?.text) }
            #expect(view == first)
            #expect(text == "note \(round % 5)")
        }
        var kept: DocumentTransaction?
        try sealed.read { tx in kept = tx }
        #expect(throws: DepotError.self) { try kept?.retrieve(SecretNote.self, id: "n1") }
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

    /// A store opened on existing data, read by many threads at once from the first read: no
    /// reader may meet a handle it cannot use (a database first opened inside one reader's
    /// transaction failed the others with EINVAL, for good).
    @Test func firstReadsFromManyThreadsOfAReopenedStore() throws {
        let other = TemporaryFolder()
        do {
            let writer = try Store(path: other.path)
            try writer.write { tx throws in
                for i in 0..<50 {
                    _ = try tx.park(Department(id: "d\(i)", name: "D\(i)"))
                    _ = try tx.park(sampleEmployee("e\(i)"))
                }
            }
            try writer.environment.close()
        }
        let reopened = try Store(path: other.path)
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        for t in 0..<8 {
            group.enter()
            Thread {
                defer { group.leave() }
                do {
                    for i in 0..<50 {
                        let found = try reopened.read { tx in
                            (try tx.retrieve(Department.self, id: "d\(i)")?.name, try tx.retrieve(Employee.self, id: "e\(i)")?.id)
                        }
                        if found.0 != "D\(i)" || found.1 != "e\(i)" { failures.withLock { $0.append("thread \(t): \(i) missing") } }
                    }
                } catch {
                    failures.withLock { $0.append("thread \(t): \(error)") }
                }
            }.start()
        }
        group.wait()
        #expect(failures.withLock { $0 } == [])
    }

    @Test func anAliasViewKeptPastItsClosureNeverSeesALaterTransaction() throws {
        try store.write { tx throws in _ = try tx.alias("B").park(Department(id: "d1", name: "first")) }
        let kept = try store.read { try $0.alias("B") }
        try store.write { tx throws in _ = try tx.alias("B").park(Department(id: "d1", name: "second")) }
        for _ in 0..<3 {
            #expect(try store.read { try $0.alias("B").retrieve(Department.self, id: "d1") }?.name == "second")
        }
        // The kept view's transaction ended: it must not read through a later one, not even
        // while that one runs on the same thread.
        #expect(throws: DepotError.self) { try kept.retrieve(Department.self, id: "d1") }
        let seenThroughKept = try store.read { _ in try? kept.retrieve(Department.self, id: "d1") }
        #expect(seenThroughKept == nil)
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

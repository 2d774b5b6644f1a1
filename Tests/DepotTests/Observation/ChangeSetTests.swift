import Foundation
import Testing
import DepotTestSupport
@testable import Depot
@testable import DepotCore
import DepotLMDB

private struct Boom: Error {}

final class RecordingObserver: StoreObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var _sets: [ChangeSet] = []
    private var _legacy: [[String: [DocumentValue]]] = []
    var sets: [ChangeSet] { lock.withLock { _sets } }
    var legacyCreated: [[String: [DocumentValue]]] { lock.withLock { _legacy } }
    func store(_ store: Store, didCommit changes: ChangeSet) { lock.withLock { _sets.append(changes) } }
    func store(_ store: Store, createdObjects: [String: [DocumentValue]], updatedObjects: [String: [DocumentValue]],
               deletedObjects: [String: [DocumentValue]]) { lock.withLock { _legacy.append(createdObjects) } }
}

@Suite("Change sets")
struct ChangeSetTests {
    let folder = TemporaryFolder()
    let store: Store
    let observer = RecordingObserver()

    init() throws {
        store = try Store(path: folder.path)
        store.addObserver(observer)
    }

    @Test func createdUpdatedDeleted() throws {
        try store.write { tx in try tx.park([sampleEmployee("a"), sampleEmployee("b")]) }
        try store.write { tx throws in
            try tx.park(sampleEmployee("a", salary: 5))
            _ = try tx.delete(Employee.self, id: "b")
            try tx.park(sampleEmployee("c"))
        }
        let sets = observer.sets
        #expect(sets.count == 2)
        #expect(sets[0].created(Employee.self) == ["a", "b"])
        #expect(sets[1].updated(Employee.self) == ["a"])
        #expect(sets[1].deleted(Employee.self) == ["b"])
        #expect(sets[1].created(Employee.self) == ["c"])
        #expect(observer.legacyCreated.first?["default/Employee"] == [.string("a"), .string("b")])
    }

    @Test func createThenDeleteAppearsNowhereAndRollbacksNever() throws {
        try store.write { tx throws in
            try tx.park(sampleEmployee("temp"))
            _ = try tx.delete(Employee.self, id: "temp")
            try tx.park(sampleEmployee("kept"))
            _ = try? tx.savepoint {
                try tx.park(sampleEmployee("rolled-back"))
                throw Boom()
            }
        }
        _ = try? store.write { tx throws in
            try tx.park(sampleEmployee("never"))
            throw Boom()
        }
        let sets = observer.sets
        #expect(sets.count == 1)
        #expect(sets[0].created(Employee.self) == ["kept"])
        #expect(sets[0].deleted(Employee.self).isEmpty)
    }

    @Test func updateOfChildThroughParentIsReported() throws {
        try store.write { tx in try tx.park(sampleEmployee("e", department: Department(id: "d", name: "Old"))) }
        try store.write { tx in try tx.park(sampleEmployee("e", department: Department(id: "d", name: "New"))) }
        let last = try #require(observer.sets.last)
        #expect(last.updated(Department.self) == ["d"])
        #expect(last.updated(Employee.self) == ["e"])
        #expect(observer.sets.first?.created(Department.self) == ["d"])
    }

    @Test func changesAcrossAliasesAndAsyncStream() async throws {
        let stream = store.changes(alias: "B")
        let typed = store.changes(of: Department.self)
        try await store.write { tx throws in
            try tx.park(sampleEmployee("a"))
            try tx.alias("B").park(sampleEmployee("b"))
        }
        try await store.write { tx in try tx.park(Department(id: "d", name: "x")) }
        var iterator = stream.makeAsyncIterator()
        let first = try #require(await iterator.next())
        #expect(first.collections.map(\.alias) == ["B"])
        #expect(first.created(Employee.self, alias: "B") == ["b"])
        var typedIterator = typed.makeAsyncIterator()
        let dept = try #require(await typedIterator.next())
        #expect(dept.created(Department.self) == ["d"])
        let both = try #require(observer.sets.first)
        #expect(Set(both.collections.map(\.alias)) == ["B", "default"])
    }

    @Test func asyncBatchGivesOneChangeSetPerCommitAndIsolatesFailures() async throws {
        let store = self.store
        let results = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<100 {
                group.addTask {
                    do {
                        try await store.write { tx throws in
                            try tx.park(sampleEmployee("b\(i)"))
                            if i % 4 == 0 { throw Boom() }
                        }
                        return true
                    } catch {
                        if i % 4 != 0 { Issue.record("write \(i) failed: \(error)") }
                        return false
                    }
                }
            }
            var ok = 0
            for await r in group where r { ok += 1 }
            return ok
        }
        #expect(results == 75)
        let created = observer.sets.flatMap { $0.created(Employee.self) }
        #expect(created.count == 75)
        #expect(!created.contains("b0"))
        #expect(try store.count(Employee.self) == 75)
    }
}

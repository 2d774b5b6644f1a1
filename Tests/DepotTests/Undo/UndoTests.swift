import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

@Suite("Undo and redo")
struct UndoTests {
    let folder = TemporaryFolder()
    let store: Store
    init() throws { store = try Store(path: folder.path) }

    /// The stored record bytes without the revision (content, flags, checksum of content).
    private func content(_ id: Int) throws -> [UInt8]? {
        try store.read { tx in
            guard let target = try tx.context.existingTarget(alias: "default", collection: "Staff") else { return nil }
            return try Int(id).withKeyBytes { k in
                try tx.context.txn.withValue(forKey: k, in: target.keyspace) { bytes in [bytes[1]] + [UInt8](bytes[Record.headerSize...]) }
            }
        }
    }

    private func expectSalaryIndexAgrees(_ label: String) throws {
        try store.read { tx throws in
            let all = try tx.retrieveAll(Staff.self)
            for salary in Set(all.map(\.salary)).union([staff(1).salary, 12_345]) {
                let viaIndex = try tx.execute(FetchRequest<Staff>().matching(\.salary, .equalTo(salary)))
                #expect(viaIndex.plan.usedIndex)
                #expect(viaIndex.documents.map(\.id) == all.filter { $0.salary == salary }.map(\.id), "\(label): salary \(salary)")
            }
        }
    }

    @Test func undoRestoresCreatedUpdatedAndDeletedRecordsAndIndexes() throws {
        let history = store.enableUndo()
        let observer = RecordingObserver()
        store.addObserver(observer)
        try store.write { tx in
            try tx.park(staff(1))
            try tx.park(staff(2))
        }
        let before1 = try content(1), before2 = try content(2)
        try store.write { tx in
            try tx.park(staff(3))
            var changed = staff(1)
            changed.salary = 12_345
            try tx.park(changed)
            _ = try tx.delete(Staff.self, id: 2)
            try tx.setSyncStatus(.synced, for: Staff.self, ids: [1])
        }
        try expectSalaryIndexAgrees("after the change")
        #expect(history.undoCount == 2)
        #expect(try history.undo())
        #expect(try content(1) == before1, "staff 1 exactly as before (content and status)")
        #expect(try content(2) == before2, "staff 2 back")
        #expect(try content(3) == nil, "staff 3 gone")
        try expectSalaryIndexAgrees("after undo")
        let undone = try #require(observer.sets.last)
        #expect(undone.deleted(Staff.self) == [3] && undone.created(Staff.self) == [2] && undone.updated(Staff.self) == [1])
        #expect(history.canRedo)
        #expect(try history.redo())
        #expect(try store.read { try $0.retrieve(Staff.self, id: 1) }?.salary == 12_345)
        #expect(try store.read { try $0.syncStatus(of: Staff.self, id: 1) } == .synced)
        #expect(try store.read { try $0.exists(Staff.self, id: 2) } == false)
        try expectSalaryIndexAgrees("after redo")
        // Both steps undone: the store is empty again.
        #expect(try history.undo())
        #expect(try history.undo())
        #expect(try store.read { try $0.count(Staff.self) } == 0)
        #expect(try history.undo() == false)
    }

    @Test func aGroupIsOneStepAndLevelsAreBounded() throws {
        let history = store.enableUndo(levels: 2)
        try history.group {
            try store.write { tx in try tx.park(staff(1)) }
            try store.write { tx in try tx.park(staff(2)) }
            var changed = staff(1)
            changed.name = "Changed"
            try store.write { tx in try tx.park(changed) }
        }
        #expect(history.undoCount == 1)
        try history.undo()
        #expect(try store.read { try $0.count(Staff.self) } == 0)
        try history.redo()
        #expect(try store.read { try $0.retrieve(Staff.self, id: 1) }?.name == "Changed")
        for i in 10..<13 { try store.write { tx in try tx.park(staff(i)) } }
        #expect(history.undoCount == 2, "the oldest steps are forgotten")
        #expect(!history.canRedo, "a new commit clears redo")
    }

    @Test func groupsInARowAndRolledBackSavepointsUndoExactly() throws {
        let history = store.enableUndo()
        try store.write { tx in try tx.park(staff(1)) }
        // Two groups in a row, each changing staff 1 twice: each undoes to its own start.
        for round in 0..<2 {
            try history.group {
                for step in 0..<2 {
                    var changed = staff(1)
                    changed.name = "round \(round) step \(step)"
                    try store.write { tx in try tx.park(changed) }
                }
            }
        }
        #expect(history.undoCount == 3)
        try history.undo()
        #expect(try store.read { try $0.retrieve(Staff.self, id: 1) }?.name == "round 0 step 1")
        try history.undo()
        #expect(try store.read { try $0.retrieve(Staff.self, id: 1) } == staff(1))
        // A savepoint rolled back, then the same record changed again in the transaction: the
        // step keeps the state from before the transaction.
        try store.write { tx in
            for attempt in 0..<3 {
                _ = try? tx.savepoint {
                    var changed = staff(1)
                    changed.name = "attempt \(attempt)"
                    try tx.park(changed)
                    throw CancellationError()
                }
            }
            var kept = staff(1)
            kept.name = "kept"
            try tx.park(kept)
            try tx.park(staff(2))
        }
        try history.undo()
        #expect(try store.read { try $0.retrieve(Staff.self, id: 1) } == staff(1))
        #expect(try store.read { try $0.retrieve(Staff.self, id: 2) } == nil)
    }

    @Test func aRecordChangedSinceIsAConflictNotAnOverwrite() throws {
        let history = store.enableUndo()
        try store.write { tx in try tx.park(staff(1)) }
        var other = staff(1)
        other.name = "Someone else"
        let otherHandle = try store.alias("default") // a handle without undo history
        try otherHandle.write { tx in try tx.park(other) }
        let error = #expect(throws: DepotError.self) { try history.undo() }
        #expect(error?.code == .undoConflict)
        #expect(error?.id == "1")
        #expect(try store.read { try $0.retrieve(Staff.self, id: 1) }?.name == "Someone else", "nothing was written")
        #expect(history.canUndo, "the step stays")
    }

    @Test func unitOfWorkSavesAndKeyValueWritesAreSteps() throws {
        let history = store.enableUndo()
        store.autosave = false
        try store.park(staff(1))
        try store.park(staff(2))
        try store.save()
        let kv = store.keyValue()
        kv["theme"] = "dark"
        try kv.save()
        #expect(history.undoCount == 2)
        try history.undo()
        #expect(try store.read { tx in try tx.context.keyValueTarget(alias: "default", create: false).map { t in
            try Array("theme".utf8).withUnsafeBytes { try tx.context.txn.withValue(forKey: $0, in: t.keyspace) { _ in true } } ?? false
        } } == false)
        try history.undo()
        #expect(try store.read { try $0.count(Staff.self) } == 0)
    }

    /// Undo and redo write key/value records: every cache of the process drops the keys, the
    /// one that saved them included, so each reads what is on disk (a fresh cache agrees).
    @Test func undoAndRedoRefreshTheKeyValueCaches() throws {
        let history = store.enableUndo()
        let kv = store.keyValue()
        let other = store.keyValue()
        kv["k"] = "old"
        try kv.save()
        kv["k"] = "new"
        try kv.save()
        #expect((other["k"] as String?) == "new")
        try history.undo()
        #expect((store.keyValue()["k"] as String?) == "old")
        #expect((kv["k"] as String?) == "old", "the saver's cache")
        #expect((other["k"] as String?) == "old", "another cache")
        try history.redo()
        #expect((kv["k"] as String?) == "new")
        #expect((other["k"] as String?) == "new")
        try history.undo()
        try history.undo()
        #expect((kv["k"] as String?) == nil, "the first save undone: the key is gone")
        #expect((other["k"] as String?) == nil)
    }
}

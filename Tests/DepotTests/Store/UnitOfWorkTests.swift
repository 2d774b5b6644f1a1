import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

@Suite("Unit of work (autosave off)")
struct UnitOfWorkTests {
    let folder = TemporaryFolder()
    let store: Store
    init() throws {
        store = try Store(path: folder.path)
        try store.write { tx in
            try tx.park(sampleEmployee("e2"))
            try tx.park(sampleEmployee("e4"))
        }
        store.autosave = false
    }

    @Test func readsSeeTheOverlayAndSaveCommitsIt() throws {
        let sales = Department(id: "sales", name: "Sales")
        try store.park(sampleEmployee("e1", department: sales))
        try store.park(sampleEmployee("e3"))
        try store.park(sampleEmployee("e4", salary: 999))
        try store.delete(Employee.self, id: "e2")
        #expect(store.hasUnsavedChanges)
        #expect(store.unsavedChangeCount == 5, "four documents and the referenced department")
        // Reads through the store see the overlay.
        #expect(try store.retrieve(Employee.self, id: "e1")?.department == sales)
        #expect(try store.retrieve(Department.self, id: "sales") == sales, "a referenced document is visible before save")
        #expect(try store.retrieve(Employee.self, id: "e2") == nil)
        #expect(try store.exists(Employee.self, id: "e3"))
        #expect(try store.retrieveAll(Employee.self).map(\.id) == ["e1", "e3", "e4"])
        #expect(try store.retrieveAll(Employee.self).last?.salary == 999)
        #expect(try store.count(Employee.self) == 3)
        // Nothing is committed yet: a plain read transaction sees the stored state.
        #expect(try store.read { try $0.retrieveAll(Employee.self) }.map(\.id) == ["e2", "e4"])
        try store.save()
        #expect(!store.hasUnsavedChanges)
        #expect(try store.read { try $0.retrieveAll(Employee.self) }.map(\.id) == ["e1", "e3", "e4"])
        #expect(try store.read { try $0.retrieve(Department.self, id: "sales") } == sales)
    }

    @Test func lastWriteWinsAndDeleteAllHidesStoredDocuments() throws {
        try store.park(sampleEmployee("e9", salary: 1))
        try store.park(sampleEmployee("e9", salary: 2))
        try store.deleteAll(Employee.self)
        #expect(try store.count(Employee.self) == 0)
        #expect(try store.retrieve(Employee.self, id: "e4") == nil)
        try store.park(sampleEmployee("e7", salary: 7))
        #expect(try store.retrieveAll(Employee.self).map(\.id) == ["e7"])
        #expect(try store.count(Employee.self) == 1)
        try store.save()
        #expect(try store.read { try $0.retrieveAll(Employee.self) }.map(\.id) == ["e7"])
    }

    @Test func rollbackDropsTheOverlay() throws {
        try store.park(sampleEmployee("e5"))
        try store.deleteEverything()
        #expect(try store.count(Employee.self) == 0)
        store.rollback()
        #expect(!store.hasUnsavedChanges)
        #expect(try store.retrieveAll(Employee.self).map(\.id) == ["e2", "e4"])
    }

    @Test func aFailedSaveCommitsNothingAndKeepsTheWork() throws {
        try store.park(staff(1))
        var clash = staff(2)
        clash.email = staff(1).email
        try store.park(clash)
        let error = #expect(throws: DepotError.self) { try store.save() }
        #expect(error?.code == .uniqueIndexViolation)
        #expect(store.hasUnsavedChanges)
        #expect(try store.read { try $0.count(Staff.self) } == 0)
        try store.delete(clash)
        try store.save()
        #expect(try store.read { try $0.retrieveAll(Staff.self) }.map(\.id) == [1])
    }

    @Test func syncStatusChangesJoinTheUnitOfWork() throws {
        try store.park(Task2(id: "t1", title: "one", syncStatus: .undetermined))
        try store.setSyncStatus(.synced, for: Task2(id: "t1", title: "one"))
        #expect(try store.retrieve(Task2.self, id: "t1")?.syncStatus == .synced)
        #expect(try store.syncStatus(of: Task2.self, id: "t1") == .synced)
        store.rollback()
        #expect(try store.syncStatus(of: Task2.self, id: "t1") == nil)
        // Stored first, then the status changes in the unit of work.
        store.autosave = true
        try store.park(Task2(id: "t2", title: "two", syncStatus: .notSynced))
        store.autosave = false
        try store.setSyncStatus(.syncing, for: Task2.self, ids: ["t2"])
        #expect(try store.retrieveAll(Task2.self).map(\.syncStatus) == [.syncing])
        #expect(try store.read { try $0.syncStatus(of: Task2.self, id: "t2") } == .notSynced, "not saved yet")
        try store.save()
        #expect(try store.read { try $0.syncStatus(of: Task2.self, id: "t2") } == .syncing)
        #expect(try store.read { try $0.retrieve(Task2.self, withSyncStatus: .syncing) }.map(\.id) == ["t2"])
        // A later park stores the object's own status again (GarageStorage's rule).
        try store.setSyncStatus(.synced, for: Task2.self, ids: ["t2"])
        try store.park(Task2(id: "t2", title: "two", syncStatus: .notSynced))
        try store.save()
        #expect(try store.read { try $0.syncStatus(of: Task2.self, id: "t2") } == .notSynced)
    }

    @Test func badDocumentsAreRefusedWhenParked() throws {
        let error = #expect(throws: DepotError.self) { try store.park(sampleEmployee("")) }
        #expect(error?.code == .invalidKey)
        #expect(!store.hasUnsavedChanges)
    }

    @Test func readsDoNotTakeTheWriter() throws {
        try store.park(sampleEmployee("e8"))
        // Another thread holds the only writer; reads through the store still answer.
        let holder = try store.beginTransaction()
        defer { holder.rollback() }
        let done = DispatchSemaphore(value: 0)
        let result = LockedBox<Employee?>(nil)
        let reader = Thread { [store] in
            result.set(try? store.retrieve(Employee.self, id: "e8"))
            done.signal()
        }
        reader.start()
        #expect(done.wait(timeout: .now() + 20) == .success, "the read finished while the writer was held")
        #expect(result.get()?.id == "e8")
    }
}

/// A value shared with another thread.
final class LockedBox<T>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: T
    init(_ value: T) { self.value = value }
    func set(_ new: T) { lock.withLock { value = new } }
    func get() -> T { lock.withLock { value } }
}

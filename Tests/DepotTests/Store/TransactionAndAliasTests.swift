import Foundation
import Synchronization
import Testing
import DepotTestSupport
@testable import Depot
@testable import DepotCore
import DepotLMDB

private struct Boom: Error {}

@Suite("Store transactions and aliases")
struct TransactionAndAliasTests {
    let folder = TemporaryFolder()
    let store: Store

    init() throws { store = try Store(path: folder.path) }

    @Test(arguments: ["default", "ManagerA", "ManagerB"])
    func sameBodyWorksInEveryAlias(_ alias: String) throws {
        let s = try store.alias(alias)
        try s.write { tx throws in
            try tx.park(sampleEmployee("e1"))
            try tx.park(sampleEmployee("e2", department: Department(id: "d", name: alias)))
        }
        #expect(try s.count(Employee.self) == 2)
        #expect(try s.retrieve(Employee.self, id: "e2")?.department?.name == alias)
        #expect(try s.read { try $0.collections() } == ["Department", "Employee"])
    }

    /// A transaction kept past its closure (misuse) fails with a typed error when used, after a
    /// read (whose thread's read view is reused) and after a write, never reads freed memory.
    @Test func aTransactionUsedAfterItsClosureThrows() throws {
        try store.write { tx in try tx.park(Department(id: "d", name: "kept")) }
        var keptRead: DocumentTransaction?
        _ = try store.read { tx in
            keptRead = tx
            return try tx.retrieve(Department.self, id: "d")
        }
        var keptWrite: DocumentTransaction?
        try store.write { tx in keptWrite = tx }
        for kept in [keptRead, keptWrite] {
            let error = #expect(throws: DepotError.self) { try kept?.retrieve(Department.self, id: "d") }
            #expect(error != nil)
        }
    }

    /// Read transactions reuse what an earlier read resolved for a type (collection handle, ID
    /// kind) while the schema version holds: a dropped and re-created collection must be seen
    /// as it is now, whatever the earlier reads cached.
    @Test func readsSeeACollectionDroppedAndCreatedAgain() throws {
        let a = try store.alias("Temp")
        for round in 0..<3 {
            try a.write { tx throws in
                _ = try tx.park(Department(id: "d\(round)", name: "round \(round)"))
            }
            for _ in 0..<3 { // the first read resolves and caches; the others reuse it
                #expect(try a.read { try $0.retrieve(Department.self, id: "d\(round)") }?.name == "round \(round)")
                #expect(try a.read { try $0.retrieve(Department.self, id: "d\(round - 1)") } == nil)
            }
            #expect(try a.read { try $0.fetch(Department.self) }.count == 1)
            try store.dropAlias("Temp")
            #expect(try a.read { try $0.retrieve(Department.self, id: "d\(round)") } == nil)
            #expect(try a.read { try $0.fetch(Department.self) }.isEmpty)
        }
        // Another type on the same collection name after a drop: its own ID kind.
        try a.write { tx throws in _ = try tx.park(Department(id: "x", name: "x")) }
        #expect(try a.read { try $0.retrieve(Department.self, id: "x") }?.name == "x")
    }

    @Test func aliasesAreIsolatedAndOneTransactionSpansThem() throws {
        let a = try store.alias("ManagerA"), b = try store.alias("ManagerB")
        try a.write { tx throws in
            try tx.park(sampleEmployee("x"))
            try tx.alias("ManagerB").park(sampleEmployee("y"))
        }
        #expect(try a.retrieveAll(Employee.self).map(\.id) == ["x"])
        #expect(try b.retrieveAll(Employee.self).map(\.id) == ["y"])
        #expect(try store.count(Employee.self) == 0)
        #expect(throws: Boom.self) {
            try a.write { tx throws in
                try tx.park(sampleEmployee("x2"))
                try tx.alias("ManagerB").park(sampleEmployee("y2"))
                throw Boom()
            }
        }
        #expect(try a.count(Employee.self) == 1 && b.count(Employee.self) == 1)
        #expect(try store.aliases() == ["ManagerA", "ManagerB"])
        #expect(try store.clearAlias("ManagerA") == 1)
        #expect(try a.count(Employee.self) == 0)
        let kvB = b.keyValue()
        kvB["theme"] = "dark"
        try kvB.save()
        #expect(try store.dropAlias("ManagerB"), "it held documents and entries")
        #expect(try store.dropAlias("ManagerB") == false, "dropped already")
        #expect(try store.dropAlias("ManagerZ") == false, "a misspelt name says it held nothing")
        #expect(try store.aliases() == ["ManagerA"])
        #expect(try b.count(Employee.self) == 0)
        #expect(try b.read { tx in try tx.context.keyValueTarget(alias: "ManagerB", create: false).map { try tx.context.txn.count($0.keyspace) } ?? 0 } == 0,
                "the alias's key/value entries are gone too")
        #expect(throws: DepotError.self) { _ = try store.alias("bad/name") }
        #expect(throws: DepotError.self) { _ = try store.alias("") }
    }

    @Test func throwHalfwayThroughLeavesNothing() throws {
        #expect(throws: Boom.self) {
            try store.write { tx throws in
                for i in 0..<50 {
                    try tx.park(sampleEmployee("e\(i)", department: Department(id: "d\(i)", name: "D")))
                    if i == 25 { throw Boom() }
                }
            }
        }
        #expect(try store.count(Employee.self) == 0)
        #expect(try store.count(Department.self) == 0)
    }

    @Test func savepointRollbackKeepsTheRest() throws {
        try store.write { tx throws in
            try tx.park(sampleEmployee("kept"))
            _ = try? tx.savepoint {
                try tx.park(sampleEmployee("undone"))
                throw Boom()
            }
            try tx.savepoint { try tx.park(sampleEmployee("child-kept")) }
        }
        #expect(try store.retrieveAll(Employee.self).map(\.id) == ["child-kept", "kept"])
    }

    @Test func explicitBeginCommitRollback() throws {
        let tx = try store.beginTransaction()
        try tx.park(sampleEmployee("e1"))
        try tx.commit()
        #expect(try store.exists(Employee.self, id: "e1"))
        // Committing again is misuse, named as such (it was LMDB's bare "bad transaction").
        let again = #expect(throws: DepotError.self) { try tx.commit() }
        #expect(again?.code == .transactionMisuse)
        #expect(again?.message.contains("already ended") == true, "\(String(describing: again))")
        // A write through the ended transaction: LMDB's error, as a DepotError (code storage)
        // that LMDB's pattern matches.
        let write = #expect(throws: DepotError.self) { try tx.park(sampleEmployee("late")) }
        #expect(write?.code == .storage)
        #expect(write.map { LMDBError.badTransaction ~= $0 } == true)
        let tx2 = try store.beginTransaction()
        try tx2.park(sampleEmployee("e2"))
        tx2.rollback()
        #expect(try store.exists(Employee.self, id: "e2") == false)
        #expect((#expect(throws: DepotError.self) { try tx2.commit() })?.code == .transactionMisuse)
        #expect(try store.exists(Employee.self, id: "late") == false)
        try store.write { scoped throws in
            #expect(throws: DepotError.self) { try scoped.commit() }
        }
    }

    /// Runs `body` on a thread of its own and waits for it (at most `seconds`); false if it did
    /// not return in time.
    private func onAnotherThread(seconds: Double = 60, _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread { body(); done.signal() }.start()
        return done.wait(timeout: .now() + seconds) == .success
    }

    /// Committing an explicit write transaction on another thread than the one that began it
    /// hung (LMDB's writer lock belongs to that thread: its unlock failed unseen, and the next
    /// write waited forever). It is `transactionMisuse` now, and the transaction stays open to
    /// be ended on its own thread; a rollback from another thread does nothing.
    @Test func anExplicitWriteEndsOnlyOnItsOwnThread() throws {
        nonisolated(unsafe) let tx = try store.beginTransaction()
        try tx.park(sampleEmployee("x1"))
        let outcome = Mutex<DepotError?>(nil)
        #expect(onAnotherThread {
            do { try tx.commit() } catch { outcome.withLock { $0 = error as? DepotError } }
        }, "the commit returns")
        let error = outcome.withLock { $0 }
        #expect(error?.code == .transactionMisuse, "\(String(describing: error))")
        #expect(error?.message.contains("thread that began it") == true)
        #expect(onAnotherThread { tx.rollback() }, "a rollback from another thread returns")
        try tx.park(sampleEmployee("x2"))
        try tx.commit()
        #expect(try store.exists(Employee.self, id: "x1") && store.exists(Employee.self, id: "x2"))
        // The writer was released: another write, on another thread, goes through.
        let store = self.store
        #expect(onAnotherThread { _ = try? store.write { tx in try tx.park(sampleEmployee("x3")) } })
        #expect(try store.exists(Employee.self, id: "x3"))
    }

    /// An explicit write transaction abandoned by a thrown error (neither committed nor rolled
    /// back) held the store's writer forever: a later write on the same thread failed with
    /// EDEADLK, on another thread it waited without end. Released, it is rolled back now.
    @Test func anAbandonedExplicitTransactionIsRolledBack() throws {
        struct Refused: Error {}
        func addThenFail(_ id: String) throws {
            let tx = try store.beginTransaction()
            let other = try tx.alias("elsewhere")
            try tx.park(sampleEmployee(id))
            try other.park(sampleEmployee(id))
            throw Refused()
        }
        let store = self.store
        #expect(throws: Refused.self) { try addThenFail("abandoned") }
        #expect(try store.exists(Employee.self, id: "abandoned") == false, "nothing of it was kept")
        try store.write { tx in try tx.park(sampleEmployee("after")) } // same thread
        /// Written by the thread before it signals, read after the wait: ordered by the semaphore.
        final class Outcome: @unchecked Sendable { var error: (any Error)? }
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        Thread {
            do { try store.write { tx in try tx.park(sampleEmployee("other-thread")) } } catch { outcome.error = error }
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 30) == .success, "another thread's write waited for the abandoned one")
        #expect(outcome.error == nil)
        #expect(try store.exists(Employee.self, id: "other-thread"))
        // A view on another alias keeps the transaction open until it goes too.
        var view: DocumentTransaction? = try {
            let tx = try store.beginTransaction()
            return try tx.alias("elsewhere")
        }()
        try view?.park(sampleEmployee("through-view"))
        view = nil
        #expect(try store.alias("elsewhere").exists(Employee.self, id: "through-view") == false)
        try store.write { tx in try tx.park(sampleEmployee("after-view")) }
    }

    /// A write begun inside a write on one thread was `.storage` with the LMDB binding's advice
    /// (`txn.nested {}`); it is misuse in the document layer's words (a savepoint).
    @Test func aWriteInsideAWriteIsMisuseWithTheDocumentLayersAdvice() throws {
        let store = self.store
        let nested = #expect(throws: DepotError.self) { try store.write { _ in try store.write { _ in } } }
        #expect(nested?.code == .transactionMisuse && nested?.message.contains("savepoint") == true, "\(String(describing: nested))")
        let open = try store.beginTransaction()
        let second = #expect(throws: DepotError.self) { _ = try store.beginTransaction() }
        #expect(second?.code == .transactionMisuse, "\(String(describing: second))")
        let inside = #expect(throws: DepotError.self) { try store.write { _ in } }
        #expect(inside?.code == .transactionMisuse)
        open.rollback()
        try store.write { tx in try tx.park(sampleEmployee("after-misuse")) }
    }

    @Test func autosaveOffCollectsAUnitOfWork() throws {
        store.autosave = false
        try store.park(sampleEmployee("p1"))
        try store.park(sampleEmployee("p2"))
        try store.delete(Employee.self, id: "p1")
        #expect(store.hasUnsavedChanges)
        // Reads through the store see pending changes; another handle does not.
        #expect(try store.retrieveAll(Employee.self).map(\.id) == ["p2"])
        #expect(try store.read { try $0.count(Employee.self) } == 0)
        try store.save()
        #expect(!store.hasUnsavedChanges)
        #expect(try store.read { try $0.retrieveAll(Employee.self).map(\.id) } == ["p2"])
        try store.park(sampleEmployee("p3"))
        store.rollback()
        #expect(try store.retrieveAll(Employee.self).map(\.id) == ["p2"])
        store.autosave = true
        try store.park(sampleEmployee("p4"))
        #expect(try store.read { try $0.count(Employee.self) } == 2)
    }

    @Test func sameFolderTwiceSharesTheEnvironment() throws {
        let other = try Store(path: folder.path + "/")
        #expect(try other.environment === store.environment)
        try store.write { tx in try tx.park(sampleEmployee("shared")) }
        #expect(try other.exists(Employee.self, id: "shared"))
        let elsewhere = try Store(path: folder.sub("second"))
        #expect(try elsewhere.environment !== store.environment)
        #expect(try elsewhere.count(Employee.self) == 0)
    }

    @Test func asyncWritesFromManyTasks() async throws {
        let store = self.store
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                group.addTask { _ = try await store.write { tx in try tx.park(sampleEmployee("a\(i)")) } }
            }
            try await group.waitForAll()
        }
        #expect(try store.count(Employee.self) == 200)
    }

    /// Drivers without a group commit of their own run each async write on the shared blocking
    /// queue (see `BlockingCalls`): many at once, each blocked on the driver's one writer, all
    /// finish (the queue adds threads while its threads are blocked, or queues the rest).
    @Test(arguments: DriverKind.allCases)
    func asyncWritesFromManyTasksOnEveryDriver(_ kind: DriverKind) async throws {
        let folder = TemporaryFolder()
        let store = try kind.makeStore(folder)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<300 {
                group.addTask { _ = try await store.write { tx in try tx.park(sampleEmployee("a\(i)")) } }
            }
            try await group.waitForAll()
        }
        #expect(try store.count(Employee.self) == 300)
    }
}

@Suite("Optimistic concurrency")
struct RevisionTests {
    @Test func conditionalParkFailsWhenTheRevisionMoved() async throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        try await store.write { tx throws in
            #expect(try tx.park(sampleEmployee("e", salary: 1), ifRevision: 0) == 1)  // 0: only if absent
            #expect(throws: DepotError.revisionConflict(alias: "default", collection: "Employee", id: "e", expected: 0, actual: 1)) {
                try tx.park(sampleEmployee("e", salary: 9), ifRevision: 0)
            }
        }
        let seen = try #require(try store.read { try $0.revision(of: Employee.self, id: "e") })
        // Two writers read revision 1; only the first compare-and-set wins.
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for salary in [10, 20] {
                group.addTask {
                    do {
                        _ = try await store.write { tx in try tx.park(sampleEmployee("e", salary: salary), ifRevision: seen) }
                        return true
                    } catch DepotError.revisionConflict {
                        return false
                    } catch {
                        return false
                    }
                }
            }
            var wins = 0
            for await won in group where won { wins += 1 }
            return wins
        }
        #expect(outcomes == 1)
        #expect(try store.read { try $0.revision(of: Employee.self, id: "e") } == 2)
    }
}

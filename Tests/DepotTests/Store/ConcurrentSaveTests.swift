// Found by a stress test of the API from several threads: an undo filed another thread's commit
// as its own (a later redo then deleted that thread's acknowledged write), saves of the key/value
// cache and of the unit of work took their snapshot before waiting for the writer (an older
// value could commit over a newer one), a rollback restarted the unit of work's change numbers
// (a save running meanwhile then forgot a later park), and an explicit write transaction
// released on another thread left every later write waiting forever.

import DepotTestSupport
import Foundation
import Synchronization
import Testing
@testable import Depot
@testable import DepotCore

struct CSNote: Document, Equatable {
    var id: String
    var text: String = ""
}

/// A value shared between threads (a `Mutex` in a class, so that closures can capture it).
final class CSShared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R>(_ body: (inout sending Value) throws -> sending R) rethrows -> R { try mutex.withLock(body) }
}

/// Carries a transaction to another thread (which a test does on purpose).
final class CSBox: @unchecked Sendable {
    let tx: DocumentTransaction
    init(_ tx: DocumentTransaction) { self.tx = tx }
}

@Suite("Concurrent saves, undo and explicit transactions from several threads")
struct ConcurrentSaveTests {
    let folder = TemporaryFolder()

    /// Runs `body` on a new thread; returns a check that it finished (for `poll`).
    private func onThread(_ body: @escaping @Sendable () -> Void) -> @Sendable () -> Bool {
        let finished = CSShared(false)
        Thread {
            body()
            finished.withLock { $0 = true }
        }.start()
        return { finished.withLock { $0 } }
    }

    @Test func aCommitOfAnotherThreadDuringAnUndoStaysAStepOfItsOwn() throws {
        let store = try Store(path: folder.path)
        let history = store.enableUndo()
        try store.write { try $0.park(CSNote(id: "a", text: "1")) }
        let began = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0)
        let failures = CSShared<[String]>([])
        let writer = onThread {
            do {
                let tx = try store.beginTransaction()
                try tx.park(CSNote(id: "x"))
                began.signal()
                go.wait()
                try tx.commit()
            } catch { failures.withLock { $0.append("writer: \(error)") } }
        }
        began.wait()
        let undoer = onThread {
            do { _ = try history.undo() } catch { failures.withLock { $0.append("undo: \(error)") } }
        }
        // Lets the undo reach the writer it waits for (the outcome must not depend on it).
        usleep(200_000)
        go.signal()
        #expect(poll(seconds: 60) { writer() && undoer() })
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(history.undoCount == 1 && history.redoCount == 1) // the writer's step; the undone note
        #expect(try history.redo())
        #expect(try store.read { try $0.exists(CSNote.self, id: "x") && $0.exists(CSNote.self, id: "a") })
        #expect(try history.undo()) // the note's redo
        #expect(try history.undo()) // the writer's own step
        #expect(try store.read { try $0.exists(CSNote.self, id: "x") } == false)
    }

    @Test func keyValueSavesCommitTheNewestValueLast() throws {
        let store = try Store(path: folder.path)
        let kv = store.keyValue()
        let running = CSShared(true)
        let saver = onThread {
            while running.withLock({ $0 }) { try? kv.save() }
        }
        for i in 0..<1_000 {
            kv["k"] = i
            try kv.save()
        }
        running.withLock { $0 = false }
        #expect(poll(seconds: 60) { saver() })
        try kv.save()
        #expect(!kv.hasUnsavedChanges)
        #expect(store.keyValue()["k"] as Int? == 999)
    }

    @Test func unitOfWorkSavesCommitTheNewestParkLast() throws {
        let store = try Store(path: folder.path)
        store.autosave = false
        let running = CSShared(true)
        let saver = onThread {
            while running.withLock({ $0 }) { try? store.save() }
        }
        for i in 0..<300 {
            try store.park(CSNote(id: "n", text: "\(i)"))
            try store.save()
        }
        running.withLock { $0 = false }
        #expect(poll(seconds: 60) { saver() })
        try store.save()
        #expect(!store.hasUnsavedChanges)
        let other = try Store(path: folder.path)
        #expect(try other.read { try $0.retrieve(CSNote.self, id: "n")?.text } == "299")
    }

    @Test func aRollbackDuringASaveKeepsALaterPark() throws {
        let store = try Store(path: folder.path)
        store.autosave = false
        for i in 0..<20 { try store.park(CSNote(id: "old-\(i)")) }
        let holder = try Store(path: folder.path)
        let tx = try holder.beginTransaction() // holds the writer: the save below waits for it
        let failures = CSShared<[String]>([])
        let saving = onThread {
            do { try store.save() } catch { failures.withLock { $0.append("\(error)") } }
        }
        usleep(100_000)
        store.rollback()
        try store.park(CSNote(id: "after-rollback"))
        try tx.commit()
        #expect(poll(seconds: 60) { saving() })
        #expect(failures.withLock { $0 }.isEmpty)
        try store.save()
        let other = try Store(path: folder.path)
        #expect(try other.read { try $0.exists(CSNote.self, id: "after-rollback") })
    }

    @Test func anExplicitWriteReleasedOnAnotherThreadFailsLaterWritesInsteadOfHanging() throws {
        let store = try Store(path: folder.path)
        let handed = CSShared<CSBox?>(nil)
        let keepAlive = DispatchSemaphore(value: 0)
        defer { keepAlive.signal() }
        _ = onThread {
            do {
                let tx = try store.beginTransaction()
                try tx.park(CSNote(id: "lost"))
                handed.withLock { $0 = CSBox(tx) }
            } catch {}
            keepAlive.wait() // the thread that holds the writer lives on (its ID is not reused)
        }
        #expect(poll(seconds: 60) { handed.withLock { $0 != nil } })
        // Released here, still open: its writer lock belongs to the other thread.
        let released = onThread { handed.withLock { $0 = nil } }
        #expect(poll(seconds: 60) { released() })
        let outcome = CSShared<String?>(nil)
        let writing = onThread {
            do {
                try store.write { try $0.park(CSNote(id: "after")) }
                outcome.withLock { $0 = "written" }
            } catch { outcome.withLock { $0 = "\(error)" } }
        }
        #expect(poll(seconds: 60) { writing() })
        let text = outcome.withLock { $0 } ?? ""
        #expect(text.contains("released, still open, on another thread"), "\(text)")
    }

    @Test func changeSetsOfThisProcessCarryTheirCommitOrder() throws {
        let store = try Store(path: folder.path)
        let recorder = CSRecorder()
        store.addObserver(recorder)
        for i in 0..<5 { try store.write { try $0.park(CSNote(id: "o\(i)")) } }
        let tx = try store.beginTransaction()
        try tx.park(CSNote(id: "explicit"))
        try tx.commit()
        let ids = recorder.ids.withLock { $0 }
        #expect(ids.count == 6 && ids.allSatisfy { $0 != nil })
        #expect(ids.compactMap { $0 } == ids.compactMap { $0 }.sorted() && Set(ids.compactMap { $0 }).count == 6)
    }
}

/// Records each change set's transaction ID.
final class CSRecorder: StoreObserver, Sendable {
    let ids = CSShared<[Int?]>([])
    func store(_ store: Store, didCommit changes: ChangeSet) { ids.withLock { $0.append(changes.transactionID) } }
}

import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

/// Several external-change watchers on one store (an explicit one beside the one `Persistent`
/// shares, or two explicit ones): each commit of another process reaches observers once.
@Suite("External change watchers sharing a store")
struct ExternalWatcherSharingTests {
    /// What another process's commit creating `id` in collection `Note` logs.
    private func logCreation(_ id: String, in store: Store) throws {
        let change: [(ChangeRecorder.Key, ChangeRecorder.State)] = [
            (.init(alias: "default", collection: "Note", key: Array(id.utf8)), .init(existedBefore: false, existsNow: true, idKind: .string)),
        ]
        try store.driver.write { txn in try ChangeLog.append(change, writer: "another process", txn: txn) }
    }

    /// The IDs of `Note` that external change sets reported created, in order.
    private func reportedCreations(_ observer: RecordingObserver) -> [DocumentValue] {
        observer.sets.filter(\.isExternal).flatMap { $0.changes(in: "Note")?.created ?? [] }
    }

    /// Two watchers both read the same entry (their threads poll only every 5 s: the test polls
    /// them itself, in a known order): the observer is told once. Watchers started later, reading
    /// first, leave the others nothing to add.
    @Test func eachExternalCommitIsPublishedOnceHoweverManyWatchersPoll() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let observer = RecordingObserver()
        store.addObserver(observer)
        let first = try store.watchExternalChanges(every: .seconds(5))
        let second = try store.watchExternalChanges(every: .seconds(5))
        defer { first.stop(); second.stop() }
        try logCreation("n1", in: store)
        first.poll()
        second.poll()
        #expect(reportedCreations(observer) == ["n1"])

        let third = try store.watchExternalChanges(every: .seconds(5))
        defer { third.stop() }
        try logCreation("n2", in: store)
        third.poll()
        second.poll()
        first.poll()
        #expect(reportedCreations(observer) == ["n1", "n2"])

        // A watcher started while the others have read nothing of an entry yet reads from where
        // publishing stands: the entry is published once, never lost between them.
        try logCreation("n3", in: store)
        let fourth = try store.watchExternalChanges(every: .seconds(5))
        defer { fourth.stop() }
        fourth.poll()
        first.poll()
        second.poll()
        third.poll()
        #expect(reportedCreations(observer) == ["n1", "n2", "n3"])
    }
}

import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

/// A `changes()` stream lives as long as its store: once the last handle is released no change
/// can come, and a task iterating the stream ends its loop.
@Suite("Change stream lifetime")
struct ChangeStreamLifetimeTests {
    /// Whether `condition` held before `deadline` (checked every 5 ms).
    private func poll(seconds: Double, _ condition: () -> Bool) async -> Bool {
        await pollAsync(seconds: seconds, condition)
    }

    /// Commits `document` (synchronously: `write` in an async context is the group commit).
    private func park(_ document: Staff, in store: Store) throws {
        try store.write { tx in try tx.park(document) }
    }

    @Test func aChangeStreamFinishesWhenTheLastHandleIsReleased() async throws {
        let folder = TemporaryFolder()
        var store: Store? = try Store(path: folder.path)
        var alias: Store? = try store?.alias("other")
        let stream = try #require(store).changes()
        let received = StreamProgress()
        let iterating = Task {
            for await _ in stream { received.add() }
            received.finish()
        }
        try park(staff(1), in: try #require(alias))
        let delivered = await poll(seconds: 10) { received.count == 1 }
        #expect(delivered, "the stream delivers while the store lives")
        store = nil
        _ = await poll(seconds: 0.05) { received.finished }
        #expect(!received.finished, "another handle of the store is still alive")
        alias = nil
        let finished = await poll(seconds: 10) { received.finished }
        #expect(finished, "the stream finished once the last handle went")
        if !finished { iterating.cancel() }
        await iterating.value
    }
}

/// Change sets a task received, and whether its loop ended.
private final class StreamProgress: @unchecked Sendable {
    // @unchecked Sendable: both fields are guarded by `lock`.
    private let lock = NSLock()
    private var received = 0
    private var ended = false
    var count: Int { lock.withLock { received } }
    var finished: Bool { lock.withLock { ended } }
    func add() { lock.withLock { received += 1 } }
    func finish() { lock.withLock { ended = true } }
}

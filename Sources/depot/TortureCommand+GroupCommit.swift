import DepotLMDB
import Foundation

extension TortureCommand {
    /// `--async-writers W`: W tasks commit the key/value transactions through group commit, each
    /// taking the next transaction number, retrying a failed commit as `--retries` allows and
    /// printing 'ack N' once its commit returned.
    func runKeyValueConcurrently(_ env: Environment) async throws {
        let (db, first) = try keyValueTarget(env)
        let end = first + UInt64(count)
        let next = TransactionNumbers(first: first, end: end)
        // What the tasks need, copied: the command itself stays on this task.
        let retries = self.retries, records = self.records, payloadSize = self.payloadSize
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<asyncWriters {
                group.addTask {
                    while let n = next.take() {
                        let values = TortureCommand.keyValueRecords(txn: n, records: records, payloadSize: payloadSize)
                        try await TortureCommand.committing(n, retries: retries) {
                            try await env.write { txn in
                                for (i, value) in values.enumerated() {
                                    try txn.put(value, forKey: TortureCommand.key(txn: n, index: i), in: db)
                                }
                            }
                        }
                        TortureCommand.acknowledge(n)
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}

/// The transaction numbers the writers take, one at a time. `@unchecked Sendable`: `next` is
/// only touched under `lock` (an `NSLock`: `Synchronization.Mutex` would raise the Apple platform
/// floor).
private final class TransactionNumbers: @unchecked Sendable {
    private let lock = NSLock()
    private var next: UInt64
    private let end: UInt64

    init(first: UInt64, end: UInt64) {
        next = first
        self.end = end
    }

    /// The next number, or nil when all are taken.
    func take() -> UInt64? {
        lock.withLock {
            guard next < end else { return nil }
            defer { next += 1 }
            return next
        }
    }
}

import Foundation
import PostgresNIO

/// Hands a connection leased from the pool (inside an async `withConnection` on the bridge) to a
/// blocked thread, and gives it back when that thread is done: the lease lasts exactly as long
/// as one transaction.
final class ConnectionHandoff: @unchecked Sendable {
    // @unchecked Sendable: every field is guarded by `condition`.
    private let condition = NSCondition()
    private var connection: PostgresConnection?
    private var failure: (any Error)?
    private var giveBack: CheckedContinuation<Void, Never>?
    private var released = false

    /// Called on the bridge with the leased connection: waits until ``release()``.
    func hold(_ connection: PostgresConnection) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow: Bool = condition.withLock {
                if released { return true }
                self.connection = connection
                giveBack = continuation
                condition.broadcast()
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Called on the bridge when no connection could be leased.
    func fail(_ error: any Error) {
        condition.withLock {
            failure = error
            condition.broadcast()
        }
    }

    /// Waits for the connection until `deadline`; nil when the deadline passes (the lease is then
    /// given back as soon as it arrives). Throws the leasing error.
    func wait(until deadline: Date) throws -> PostgresConnection? {
        try condition.withLock {
            while connection == nil && failure == nil {
                if !condition.wait(until: deadline) { break }
            }
            if let failure { throw failure }
            if connection == nil { released = true }
            return connection
        }
    }

    /// Gives the connection back to the pool.
    func release() {
        let continuation: CheckedContinuation<Void, Never>? = condition.withLock {
            released = true
            defer { giveBack = nil; connection = nil }
            return giveBack
        }
        continuation?.resume()
    }
}

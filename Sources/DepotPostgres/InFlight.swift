#if Postgres
import Foundation

/// Something waiting for a statement's result that can be failed from outside.
protocol Failable: AnyObject, Sendable {
    /// Fails it, unless a result arrived first.
    func fail(_ error: any Error)
}

/// The statements submitted on one connection and not answered yet. When the connection's
/// channel closes (the server went away, a backend was terminated, the driver closed it after
/// a deadline), every one of them fails at once with ``PostgresDriverError/connectionLost(server:detail:)``
/// instead of waiting for an answer that will never come; statements submitted afterwards fail
/// at once too.
///
/// `@unchecked Sendable`: `waiting` and `lost` are only touched under `lock`.
final class InFlight: @unchecked Sendable {
    private let lock = NSLock()
    private var waiting: [ObjectIdentifier: any Failable] = [:]
    private var lost: PostgresDriverError?

    /// Registers `pending`; when the connection is already gone it fails at once.
    func add(_ pending: any Failable) {
        let gone: PostgresDriverError? = lock.withLock {
            if lost == nil { waiting[ObjectIdentifier(pending)] = pending }
            return lost
        }
        if let gone { pending.fail(gone) }
    }

    /// Forgets `pending` (its result arrived).
    func remove(_ pending: any Failable) {
        lock.withLock { _ = waiting.removeValue(forKey: ObjectIdentifier(pending)) }
    }

    /// The connection closed: fails everything waiting, and everything added later.
    func connectionClosed(_ error: PostgresDriverError) {
        let failing: [any Failable] = lock.withLock {
            if lost == nil { lost = error }
            defer { waiting = [:] }
            return Array(waiting.values)
        }
        for pending in failing { pending.fail(error) }
    }

    /// Whether the connection closed.
    var isLost: Bool { lock.withLock { lost != nil } }
}
#endif

#if Postgres
import Foundation

/// Errors of ``PostgresDriver``. Messages name the server, the database and the SQLSTATE, never
/// a password, a key or a value.
public enum PostgresDriverError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A connection URL or environment setting is not acceptable.
    case invalidConfiguration(String)
    /// A schema name is not a plain lowercase identifier.
    case invalidSchemaName(String)
    /// No connection could be had within the timeout.
    case connectionUnavailable(server: String, detail: String)
    /// The server refused a statement (SQLSTATE and the server's primary message).
    case server(sqlState: String, message: String)
    /// The connection failed or closed during an operation.
    case connectionLost(server: String, detail: String)
    /// TLS with the server failed: it does not offer TLS where the configuration requires it,
    /// its certificate is not trusted (``PostgresConfiguration/rootCertificatePath``, or the
    /// system's roots), or the certificate does not name the host connected to
    /// (``PostgresConfiguration/TLSMode/verifyFull``). `detail` says which. Not retried: the
    /// server or the configuration must change.
    case tlsFailure(server: String, detail: String)
    /// The call did not finish within ``PostgresConfiguration/callTimeout``: the server did not
    /// answer in time (stopped, unreachable, overloaded, or a lock held elsewhere). A write
    /// that was not yet committing was rolled back; see ``commitOutcomeUnknown(server:detail:)``
    /// for one that was.
    case deadlineExceeded(server: String, timeout: Duration)
    /// The connection failed or the deadline passed while `COMMIT` was on its way: the write
    /// may or may not have been applied. Read it back before repeating it.
    case commitOutcomeUnknown(server: String, detail: String)
    /// A write kept failing with serialization failures or deadlocks.
    case retriesExhausted(attempts: Int, sqlState: String)
    /// The transaction was used after it ended.
    case transactionEnded
    /// A read-only transaction was asked to write.
    case readOnlyTransaction
    /// A write was started inside a write on the same thread (use a savepoint instead).
    case nestedWrite
    /// The driver was called from its own internal thread (the change notices' event loop).
    case calledFromDriverThread
    /// The driver was closed.
    case closed
    /// The schema holds no Depot store, and the configuration does not create one
    /// (``PostgresConfiguration/createsSchema`` false): nothing was created.
    case noStore(server: String, schema: String)

    /// A message naming what failed (never a password, key or value).
    public var description: String {
        switch self {
        case .invalidConfiguration(let detail): "PostgreSQL configuration: \(detail)"
        case .invalidSchemaName(let name): "PostgreSQL schema name '\(name)' is not a lowercase identifier (a-z, 0-9, _; at most 48 characters)"
        case .connectionUnavailable(let server, let detail): "no PostgreSQL connection to \(server): \(detail)"
        case .server(let state, let message) where state == "53200":
            // The lock table is full: a write takes one lock per key it writes (see KeyLocks).
            "PostgreSQL error \(state): \(message) (the transaction takes a lock per key it writes, more than the server's lock table holds: "
                + "write fewer documents per transaction, such as with 'depot import --batch N', or raise the server's max_locks_per_transaction)"
        case .server(let state, let message): "PostgreSQL error \(state): \(message)"
        case .connectionLost(let server, let detail): "PostgreSQL connection to \(server) failed: \(detail)"
        case .tlsFailure(let server, let detail): "TLS with PostgreSQL server \(server) failed: \(detail)"
        case .deadlineExceeded(let server, let timeout): "PostgreSQL call to \(server) passed its deadline (\(timeout))"
        case .commitOutcomeUnknown(let server, let detail): "PostgreSQL COMMIT on \(server) got no answer (\(detail)): the write may or may not have been applied"
        case .retriesExhausted(let attempts, let state): "PostgreSQL write gave up after \(attempts) attempts (last SQLSTATE \(state))"
        case .transactionEnded: "the PostgreSQL transaction has ended"
        case .readOnlyTransaction: "a read-only transaction cannot write"
        case .nestedWrite: "a write inside a write on the same thread: use a savepoint"
        case .calledFromDriverThread: "the PostgreSQL driver was called from its own internal thread"
        case .closed: "the PostgreSQL driver is closed"
        case .noStore(let server, let schema): "no Depot store in schema '\(schema)' on PostgreSQL server \(server) (nothing was created)"
        }
    }

    /// The SQLSTATE, when the server gave one.
    public var sqlState: String? {
        switch self {
        case .server(let state, _), .retriesExhausted(_, let state): state
        default: nil
        }
    }

    /// Whether the write should be retried: a serialization failure (40001) or a deadlock (40P01).
    var isRetryable: Bool {
        if case .server(let state, _) = self { return state == "40001" || state == "40P01" }
        return false
    }

    /// Whether the call passed its deadline.
    var isDeadline: Bool {
        if case .deadlineExceeded = self { return true }
        return false
    }

    /// Whether the connection was lost (the transaction on it was rolled back by the server).
    var isConnectionLoss: Bool {
        if case .connectionLost = self { return true }
        return false
    }
}

extension PostgresDriverError: LocalizedError {
    /// The ``description`` (server, database and SQLSTATE; never a password, key or value).
    public var errorDescription: String? { description }
}
#endif

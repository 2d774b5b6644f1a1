#if Postgres
import Logging
import NIOCore
import PostgresNIO

/// The named prepared statements of one connection. The first time a connection sends one of
/// the driver's fixed statements (``Statement/preparable``) it goes out unnamed, as any other,
/// and a `Parse` of it under a name follows; once the server has answered that, the connection
/// runs the statement by name: `Bind` and `Execute` only, without the server parsing and
/// planning it again.
///
/// Preparing never changes what a statement does: its text is the same, every parameter is cast
/// in it (so the server's types match the unnamed statement's), and a prepared statement is not
/// part of any transaction (a rollback keeps it). A `Parse` inside an aborted transaction fails;
/// the statement is then prepared at a later use, and after ``attempts`` failures never.
///
/// `@unchecked Sendable`: `states` is only touched on the connection's event loop (statements
/// are submitted there, and the futures of its connection complete there).
final class PreparedStatements: @unchecked Sendable {
    private enum State {
        case preparing
        case ready(PreparedQuery)
        case failed(Int)
    }

    /// Each statement text this connection has met, in the order first met. Found by length,
    /// then by comparing texts, not by hashing them: a hash reads all of a text of hundreds of
    /// characters at every use; the driver's texts mostly differ in length.
    private var texts: [String] = []
    /// The state of each of ``texts``, at the same index.
    private var states: [State] = []
    /// Whether statements are prepared at all (``PostgresConfiguration/preparesStatements``).
    let enabled: Bool

    /// At most this many statements per connection (the driver's fixed statements are fewer).
    static let limit = 64
    /// How often a statement's preparation may fail before it is no longer tried.
    static let attempts = 3

    init(enabled: Bool) { self.enabled = enabled }

    /// The index of `sql` in ``texts`` (texts of another length are passed over without a compare).
    private func index(of sql: String) -> Int? {
        let count = sql.utf8.count
        return texts.firstIndex { $0.utf8.count == count && $0 == sql }
    }

    /// The prepared statement for `sql`, when the server has prepared it on this connection.
    /// On the connection's event loop.
    func ready(_ sql: String) -> PreparedQuery? {
        guard enabled, let i = index(of: sql), case .ready(let query) = states[i] else { return nil }
        return query
    }

    /// Prepares `sql` on `connection` unless it is prepared, being prepared, or has failed too
    /// often. On the connection's event loop; returns at once.
    func prepare(_ sql: String, on connection: PostgresConnection) {
        guard enabled else { return }
        let failures: Int, i: Int
        if let known = index(of: sql) {
            switch states[known] {
            case .preparing, .ready: return
            case .failed(let count):
                guard count < Self.attempts else { return }
                failures = count
            }
            i = known
            states[i] = .preparing
        } else {
            guard states.count < Self.limit else { return }
            failures = 0
            i = states.count
            texts.append(sql)
            states.append(.preparing)
        }
        connection.prepare(query: sql).whenComplete { [self] result in
            switch result {
            case .success(let query): states[i] = .ready(query)
            case .failure: states[i] = .failed(failures + 1)
            }
        }
    }
}
#endif

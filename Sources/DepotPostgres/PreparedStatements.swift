#if Postgres

/// The named prepared statements of one connection. The first time a connection sends one of
/// the driver's fixed statements (``Statement/preparable``) it goes out unnamed, as any other,
/// and a `Parse` of it under a name follows in the same pipeline; once the server has answered
/// that, the connection runs the statement by name: `Bind` and `Execute` only, without the
/// server parsing and planning it again.
///
/// Preparing never changes what a statement does: its text is the same, every parameter is cast
/// in it (so the server's types match the unnamed statement's), and a prepared statement is not
/// part of any transaction (a rollback keeps it). A `Parse` inside an aborted transaction fails;
/// the statement is then prepared at a later use, and after ``attempts`` failures never.
///
/// Only the thread using the connection touches it (see ``LibPQConnection``).
final class PreparedStatements {
    private enum State {
        /// Not prepared (never tried, or its `Parse` failed or was skipped in an aborted pipeline).
        case unprepared
        /// Its `Parse` was sent and not answered yet.
        case preparing
        case ready
    }

    /// What a use of a statement does (``use(_:)``).
    enum Use {
        /// Runs it by ``PreparedStatements/name(_:)`` of this index.
        case named(Int)
        /// Runs it unnamed, then prepares it under ``PreparedStatements/name(_:)`` of this index.
        case prepareAfter(Int)
        /// Runs it unnamed.
        case unnamed
    }

    /// How a `Parse` was answered.
    enum Outcome {
        case ready, failed, aborted
    }

    /// Each statement text this connection has met, in the order first met. Found by length,
    /// then by comparing texts, not by hashing them: a hash reads all of a text of hundreds of
    /// characters at every use; the driver's texts mostly differ in length.
    private var texts: [String] = []
    /// The state of each of ``texts``, and how often its `Parse` failed, at the same index.
    private var states: [State] = []
    private var failures: [Int] = []
    /// Whether statements are prepared at all (``PostgresConfiguration/preparesStatements``).
    let enabled: Bool

    /// At most this many statements per connection (the driver's fixed statements are fewer).
    static let limit = 64
    /// How often a statement's preparation may fail before it is no longer tried.
    static let attempts = 3

    init(enabled: Bool) { self.enabled = enabled }

    /// The name statement `index` is prepared under.
    static func name(_ index: Int) -> String { "depot_\(index)" }

    /// Runs `body` with ``name(_:)`` of `index` as a C string written on the stack (a `String`
    /// passed to libpq would be built, then copied into a new array, for every statement).
    static func withName<R>(_ index: Int, _ body: (UnsafePointer<CChar>) -> R) -> R {
        // "depot_", at most 20 digits, and the terminating zero.
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 32) { buffer in
            guard let base = buffer.baseAddress else { return name(index).withCString(body) }
            var n = 0
            for byte in "depot_".utf8 {
                buffer[n] = CChar(bitPattern: byte)
                n += 1
            }
            var value = UInt(bitPattern: index)
            var digits = 1
            while value >= 10 {
                value /= 10
                digits += 1
            }
            value = UInt(bitPattern: index)
            for position in stride(from: n + digits - 1, through: n, by: -1) {
                buffer[position] = CChar(UInt8(ascii: "0") + UInt8(value % 10))
                value /= 10
            }
            buffer[n + digits] = 0
            return body(UnsafePointer(base))
        }
    }

    /// The index of `sql` in ``texts`` (texts of another length are passed over without a compare).
    private func index(of sql: String) -> Int? {
        let count = sql.utf8.count
        return texts.firstIndex { $0.utf8.count == count && $0 == sql }
    }

    /// How to send `sql` now: by name when prepared; unnamed and then prepared when it is not
    /// (and not being prepared, nor failed too often); else unnamed.
    func use(_ sql: String) -> Use {
        guard enabled else { return .unnamed }
        let i: Int
        if let known = index(of: sql) {
            switch states[known] {
            case .ready: return .named(known)
            case .preparing: return .unnamed
            case .unprepared: guard failures[known] < Self.attempts else { return .unnamed }
            }
            i = known
        } else {
            guard states.count < Self.limit else { return .unnamed }
            i = states.count
            texts.append(sql)
            states.append(.unprepared)
            failures.append(0)
        }
        states[i] = .preparing
        return .prepareAfter(i)
    }

    /// Whether `sql` runs by name on this connection now.
    func isReady(_ sql: String) -> Bool {
        guard let i = index(of: sql), case .ready = states[i] else { return false }
        return true
    }

    /// Records how the `Parse` of statement `index` was answered.
    func settle(_ index: Int, _ outcome: Outcome) {
        guard states.indices.contains(index) else { return }
        switch outcome {
        case .ready: states[index] = .ready
        case .aborted: states[index] = .unprepared
        case .failed:
            failures[index] += 1
            states[index] = .unprepared
        }
    }
}
#endif

#if Postgres
import NIOCore
import PostgresNIO

/// One statement the driver sends: its text and parameters, and whether it is one of the
/// driver's fixed statements (a text that does not vary with the data, every parameter cast to
/// its type), which a connection runs as a named prepared statement once it has prepared it
/// (see ``PreparedStatements``): the server then skips parsing and planning it.
struct Statement: Sendable {
    let sql: String
    var parameters: Parameters
    /// Whether the statement may run as a named prepared statement.
    let preparable: Bool

    /// A statement sent unnamed (parsed and planned by the server each time).
    init(_ sql: String, _ parameters: Parameters = []) {
        self.sql = sql
        self.parameters = parameters
        preparable = false
    }

    /// One of the driver's fixed statements: every parameter must be cast in `sql`
    /// (`$1::int`), because a named statement is prepared without the parameters' types.
    init(prepared sql: String, _ parameters: Parameters = []) {
        self.sql = sql
        self.parameters = parameters
        preparable = true
    }

    /// The statement for postgres-nio's unnamed extended query.
    var query: PostgresQuery {
        var binds = PostgresBindings(capacity: parameters.count)
        for value in parameters { binds.append(value) }
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }
}

/// A statement's parameters, in order.
typealias Parameters = [PostgresData]

extension Array where Element == PostgresData {
    /// Parameters from bytea buffers, integers, strings and booleans, in order.
    static func of(_ values: any PostgresBindable...) -> Parameters {
        var parameters = Parameters()
        parameters.reserveCapacity(values.count)
        for value in values { value.bind(into: &parameters) }
        return parameters
    }
}

/// A value the driver binds as a statement parameter.
protocol PostgresBindable {
    func bind(into parameters: inout Parameters)
}

extension Int32: PostgresBindable {
    func bind(into parameters: inout Parameters) { parameters.append(PostgresData(int32: self)) }
}

extension Bool: PostgresBindable {
    func bind(into parameters: inout Parameters) { parameters.append(PostgresData(bool: self)) }
}

extension String: PostgresBindable {
    func bind(into parameters: inout Parameters) { parameters.append(PostgresData(string: self)) }
}

extension Int64: PostgresBindable {
    func bind(into parameters: inout Parameters) { parameters.append(PostgresData(int64: self)) }
}

/// Bytes bound as bytea (a `[UInt8]` would bind as an array of "char").
struct Bytea: PostgresBindable {
    let buffer: ByteBuffer
    init(_ bytes: some Sequence<UInt8>) { buffer = ByteBuffer(bytes: bytes) }
    func bind(into parameters: inout Parameters) { parameters.append(PostgresData(type: .bytea, formatCode: .binary, value: buffer)) }
}

/// A row without the column a decoder expected.
struct UnexpectedRow: Error {}

extension PostgresRow {
    /// Column `index` decoded from its binary form. postgres-nio asks for every result in
    /// binary, but the rows of a named prepared statement (its `PreparedQuery`) describe their
    /// columns as text: the format is set here, so that both kinds of row decode alike.
    func binary<T: PostgresDecodable>(_ type: T.Type, at index: Int) throws -> T {
        var cell = try cell(at: index)
        cell.format = .binary
        return try cell.decode(T.self)
    }

    /// Column `index` as bytes, nil for SQL NULL.
    func bytes(at index: Int) throws -> [UInt8]? {
        try cell(at: index).bytes.map { Array($0.readableBytesView) }
    }

    /// Column `index`, walked to in place (no random-access copy of the row per column).
    private func cell(at index: Int) throws -> PostgresCell {
        guard index >= 0, let cell = dropFirst(index).first else { throw UnexpectedRow() }
        return cell
    }
}
#endif

#if Postgres
import CLibPQ
import Foundation

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
}

/// One statement parameter, sent in PostgreSQL's binary format with its type.
struct Parameter: Sendable {
    /// The type's OID (`bytea` 17, `int8` 20, `int4` 23, `text` 25, `bool` 16).
    let type: UInt32
    /// The value's binary form; nil for SQL NULL.
    let bytes: [UInt8]?
}

/// A statement's parameters, in order.
typealias Parameters = [Parameter]

extension Array where Element == Parameter {
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
    func bind(into parameters: inout Parameters) { parameters.append(Parameter(type: 23, bytes: bigEndianBytes(self))) }
}

extension Bool: PostgresBindable {
    func bind(into parameters: inout Parameters) { parameters.append(Parameter(type: 16, bytes: [self ? 1 : 0])) }
}

extension String: PostgresBindable {
    func bind(into parameters: inout Parameters) { parameters.append(Parameter(type: 25, bytes: Array(utf8))) }
}

extension Int64: PostgresBindable {
    func bind(into parameters: inout Parameters) { parameters.append(Parameter(type: 20, bytes: bigEndianBytes(self))) }
}

/// The big-endian bytes of `value` (PostgreSQL's binary integers).
private func bigEndianBytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    withUnsafeBytes(of: value.bigEndian) { Array($0) }
}

/// Bytes bound as bytea.
struct Bytea: PostgresBindable {
    let bytes: [UInt8]
    init(_ bytes: some Sequence<UInt8>) { self.bytes = Array(bytes) }
    func bind(into parameters: inout Parameters) { parameters.append(Parameter(type: 17, bytes: bytes)) }
}

/// A row without the column a decoder expected, or a column of another type.
struct UnexpectedRow: Error {}

/// One row of a statement's answer: each column's binary value (nil for SQL NULL), copied out
/// of libpq's result.
struct Row: Sendable {
    let columns: [[UInt8]?]

    /// The rows of a libpq result (`PGresult *`).
    static func rows(of result: OpaquePointer) -> [Row] {
        let rowCount = PQntuples(result), columnCount = PQnfields(result)
        guard rowCount > 0, columnCount > 0 else { return [] }
        var rows: [Row] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            var columns: [[UInt8]?] = []
            columns.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount {
                if PQgetisnull(result, row, column) == 1 {
                    columns.append(nil)
                    continue
                }
                let length = Int(PQgetlength(result, row, column))
                guard length > 0, let value = PQgetvalue(result, row, column) else {
                    columns.append([])
                    continue
                }
                columns.append(Array(UnsafeRawBufferPointer(start: value, count: length)))
            }
            rows.append(Row(columns: columns))
        }
        return rows
    }

    /// Column `index` as bytes, nil for SQL NULL.
    func bytes(at index: Int) throws -> [UInt8]? {
        guard columns.indices.contains(index) else { throw UnexpectedRow() }
        return columns[index]
    }

    /// Column `index` as an integer (`int2`, `int4` or `int8` in binary); nil for SQL NULL.
    func integer(at index: Int) throws -> Int64? {
        guard let bytes = try bytes(at: index) else { return nil }
        guard [2, 4, 8].contains(bytes.count) else { throw UnexpectedRow() }
        var value: Int64 = bytes[0] >= 0x80 ? -1 : 0
        for byte in bytes { value = value << 8 | Int64(byte) }
        return value
    }

    /// Column `index` as an integer that is never SQL NULL.
    func binary(_ type: Int64.Type, at index: Int) throws -> Int64 {
        guard let value = try integer(at: index) else { throw UnexpectedRow() }
        return value
    }

    /// Column `index` as a boolean (`bool` in binary).
    func boolean(at index: Int) throws -> Bool {
        guard let bytes = try bytes(at: index), bytes.count == 1 else { throw UnexpectedRow() }
        return bytes[0] != 0
    }
}
#endif

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
    init(_ sql: String, _ parameters: Parameters = Parameters()) {
        self.sql = sql
        self.parameters = parameters
        preparable = false
    }

    /// One of the driver's fixed statements: every parameter must be cast in `sql`
    /// (`$1::int`), because a named statement is prepared without the parameters' types.
    init(prepared sql: String, _ parameters: Parameters = Parameters()) {
        self.sql = sql
        self.parameters = parameters
        preparable = true
    }
}

/// A statement's parameters, in order, each sent in PostgreSQL's binary format with its type.
///
/// Every value's bytes lie in one array, one after another: a statement's parameters cost two
/// allocations however many there are (not one per value), and the connection sends the values
/// from that array without copying them (``ParameterBuffer``).
struct Parameters: Sendable {
    /// One parameter: its type's OID (`bytea` 17, `int8` 20, `int4` 23, `text` 25, `bool` 16)
    /// and the length of its value in ``bytes`` (-1 for SQL NULL).
    struct Entry: Sendable {
        let type: UInt32
        let length: Int
    }

    /// The parameters, in order.
    private(set) var entries: [Entry] = []
    /// The values' bytes, in the parameters' order (nothing for SQL NULL).
    private(set) var bytes: [UInt8] = []

    /// No parameters.
    init() {}

    /// No parameters yet, with room for the lock keys (integers) a statement of the driver's
    /// takes: up to 16 of them without growing.
    static func forLocks() -> Parameters { Parameters(capacity: 16, byteCount: 128) }

    /// Room for `count` parameters with `byteCount` bytes of values in all.
    init(capacity count: Int, byteCount: Int) {
        entries.reserveCapacity(count)
        bytes.reserveCapacity(byteCount)
    }

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    /// Parameters from bytea buffers, integers, strings and booleans, in order.
    static func of(_ values: any PostgresBindable...) -> Parameters {
        var byteCount = 0
        for value in values { byteCount += value.byteCount }
        // Room for a few integers more: a lock's key, say, which writes often add.
        var parameters = Parameters(capacity: values.count + 4, byteCount: byteCount + 32)
        for value in values { value.bind(into: &parameters) }
        return parameters
    }

    /// Adds a parameter of `type` whose value is `value`'s bytes.
    mutating func append(type: UInt32, _ value: some Collection<UInt8>) {
        let before = bytes.count
        bytes.append(contentsOf: value)
        entries.append(Entry(type: type, length: bytes.count - before))
    }

    /// Adds an integer parameter of `type`: `value`'s big-endian bytes.
    mutating func append<T: FixedWidthInteger>(type: UInt32, integer value: T) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
        entries.append(Entry(type: type, length: MemoryLayout<T>.size))
    }

    /// Adds an SQL NULL of `type`.
    mutating func appendNull(type: UInt32) {
        entries.append(Entry(type: type, length: -1))
    }

    /// Adds `other`'s parameters after these.
    static func += (parameters: inout Parameters, other: Parameters) {
        parameters.entries.append(contentsOf: other.entries)
        parameters.bytes.append(contentsOf: other.bytes)
    }
}

/// A value the driver binds as a statement parameter.
protocol PostgresBindable {
    /// The length of its value's bytes (room reserved for them before ``bind(into:)``).
    var byteCount: Int { get }
    func bind(into parameters: inout Parameters)
}

extension Int32: PostgresBindable {
    var byteCount: Int { 4 }
    func bind(into parameters: inout Parameters) { parameters.append(type: 23, integer: self) }
}

extension Bool: PostgresBindable {
    var byteCount: Int { 1 }
    func bind(into parameters: inout Parameters) { parameters.append(type: 16, CollectionOfOne(self ? 1 : 0)) }
}

extension String: PostgresBindable {
    var byteCount: Int { utf8.count }
    func bind(into parameters: inout Parameters) { parameters.append(type: 25, utf8) }
}

extension Int64: PostgresBindable {
    var byteCount: Int { 8 }
    func bind(into parameters: inout Parameters) { parameters.append(type: 20, integer: self) }
}

/// Bytes bound as bytea: copied into the parameters when bound (a buffer need only be valid
/// until then).
struct Bytea<Bytes: Collection<UInt8>>: PostgresBindable {
    let bytes: Bytes
    init(_ bytes: Bytes) { self.bytes = bytes }
    var byteCount: Int { bytes.count }
    func bind(into parameters: inout Parameters) { parameters.append(type: 17, bytes) }
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

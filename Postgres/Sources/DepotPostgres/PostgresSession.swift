import Logging
import NIOCore
import PostgresNIO

/// One leased connection seen from a blocked thread: each call runs one statement on the bridge
/// and waits for its rows. Errors come back as ``PostgresDriverError``.
struct PostgresSession: Sendable {
    let connection: PostgresConnection
    let bridge: BlockingBridge
    let logger: Logger
    let server: String

    /// Runs a statement, discarding its rows.
    func execute(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws {
        let query = PostgresQuery(unsafeSQL: sql, binds: binds)
        let connection = connection, logger = logger
        try mapErrors {
            try bridge.run {
                let rows = try await connection.query(query, logger: logger)
                for try await _ in rows {}
            }
        }
    }

    /// Runs a statement returning one bytea column.
    func values(_ sql: String, _ binds: PostgresBindings) throws -> [[UInt8]] {
        let query = PostgresQuery(unsafeSQL: sql, binds: binds)
        let connection = connection, logger = logger
        return try mapErrors {
            try bridge.run {
                var result: [[UInt8]] = []
                for try await row in try await connection.query(query, logger: logger) {
                    result.append(Array(try row.decode(ByteBuffer.self).readableBytesView))
                }
                return result
            }
        }
    }

    /// Runs a statement returning two bytea columns (key, value).
    func pairs(_ sql: String, _ binds: PostgresBindings) throws -> [(key: [UInt8], value: [UInt8])] {
        let query = PostgresQuery(unsafeSQL: sql, binds: binds)
        let connection = connection, logger = logger
        let rows: [[[UInt8]]] = try mapErrors {
            try bridge.run {
                var result: [[[UInt8]]] = []
                for try await row in try await connection.query(query, logger: logger) {
                    let (key, value) = try row.decode((ByteBuffer, ByteBuffer).self)
                    result.append([Array(key.readableBytesView), Array(value.readableBytesView)])
                }
                return result
            }
        }
        return rows.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
    }

    /// Runs a statement returning one bigint column; its values.
    func integers(_ sql: String, _ binds: PostgresBindings) throws -> [Int64] {
        let query = PostgresQuery(unsafeSQL: sql, binds: binds)
        let connection = connection, logger = logger
        return try mapErrors {
            try bridge.run {
                var result: [Int64] = []
                for try await row in try await connection.query(query, logger: logger) {
                    result.append(try row.decode(Int64.self))
                }
                return result
            }
        }
    }

    private func mapErrors<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw Self.map(error, server: server) }
    }

    /// A driver error for anything postgres-nio throws (server messages keep their SQLSTATE and
    /// primary message only; details, which can quote stored values, are dropped).
    static func map(_ error: any Error, server: String) -> PostgresDriverError {
        switch error {
        case let error as PostgresDriverError:
            return error
        case let error as PSQLError:
            if error.code == .server, let info = error.serverInfo {
                return .server(sqlState: info[.sqlState] ?? "?????", message: info[.message] ?? "")
            }
            return .connectionLost(server: server, detail: error.code.description)
        case is PostgresDecodingError:
            return .connectionLost(server: server, detail: "a row did not decode as expected")
        default:
            return .connectionLost(server: server, detail: String(describing: type(of: error)))
        }
    }
}

extension PostgresBindings {
    /// Bindings from bytea buffers and integers, in order.
    static func of(_ values: any PostgresBindable...) -> PostgresBindings {
        var binds = PostgresBindings(capacity: values.count)
        for value in values { value.bind(into: &binds) }
        return binds
    }
}

/// A value the driver binds as a statement parameter.
protocol PostgresBindable {
    func bind(into binds: inout PostgresBindings)
}

extension Int32: PostgresBindable {
    func bind(into binds: inout PostgresBindings) { binds.append(self) }
}

extension Bool: PostgresBindable {
    func bind(into binds: inout PostgresBindings) { binds.append(self) }
}

extension String: PostgresBindable {
    func bind(into binds: inout PostgresBindings) { binds.append(self) }
}

extension Int64: PostgresBindable {
    func bind(into binds: inout PostgresBindings) { binds.append(self) }
}

/// Bytes bound as bytea (a `[UInt8]` would bind as an array of "char").
struct Bytea: PostgresBindable {
    let buffer: ByteBuffer
    init(_ bytes: some Sequence<UInt8>) { buffer = ByteBuffer(bytes: bytes) }
    func bind(into binds: inout PostgresBindings) { binds.append(buffer) }
}

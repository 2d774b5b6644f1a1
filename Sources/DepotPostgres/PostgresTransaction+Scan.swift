#if Postgres
import DepotCore

/// Ordered scans of ``PostgresTransaction``.
extension PostgresTransaction {
    /// Pages of `LIMIT n` rows, each continuing after the last row seen (by key, or by key and
    /// value in a multi-value keyspace); the first page is small and later ones grow, so a scan
    /// stopped early reads little and a long one makes few round trips.
    func scan(_ keyspace: Keyspace, lower: [UInt8]?, upper: [UInt8]?, prefix: [UInt8]?, reverse: Bool,
              _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try storageCall {
            try check(write: false)
            guard let handle = try self.handle(of: keyspace) else { return }
            var low = lower, high = upper
            if let prefix {
                if low.map({ $0.lexicographicallyPrecedes(prefix) }) ?? true { low = prefix }
                if let end = Self.successor(of: prefix), high.map({ end.lexicographicallyPrecedes($0) }) ?? true { high = end }
            }
            if let low, let high, !low.lexicographicallyPrecedes(high) { return }
            // A range read in a write: no writer of the keyspace commits until this transaction
            // ends (waits for those holding it first).
            try holdingKeyspace(handle, exclusive: true) {}
            let table = schema.table(multiValue: handle.multiValue)
            let direction = reverse ? "DESC" : "ASC"
            let order = handle.multiValue ? "key \(direction), value \(direction)" : "key \(direction)"
            var after: (key: [UInt8], value: [UInt8])?
            var page = firstPage
            while true {
                var parameters = Parameters.of(handle.id)
                func parameter(_ bytes: [UInt8]) -> String {
                    Bytea(bytes).bind(into: &parameters)
                    return "$\(parameters.count)::bytea"
                }
                var sql = "SELECT key, value FROM \(table) WHERE keyspace = $1::int"
                if let low { sql += " AND key >= \(parameter(low))" }
                if let high { sql += " AND key < \(parameter(high))" }
                if let after {
                    let comparison = reverse ? "<" : ">"
                    sql += handle.multiValue
                        ? " AND (key, value) \(comparison) (\(parameter(after.key)), \(parameter(after.value)))"
                        : " AND key \(comparison) \(parameter(after.key))"
                }
                sql += " ORDER BY \(order) LIMIT \(page)"
                // Preparable: the texts differ only in the bounds given and the page size.
                let rows = try run { try session.pairs(Statement(prepared: sql, parameters)) }
                for row in rows {
                    let goOn = try row.key.withUnsafeBytes { key in try row.value.withUnsafeBytes { value in try body(key, value) } }
                    if !goOn { return }
                }
                guard rows.count == page, let last = rows.last else { return }
                after = last
                page = min(page * 2, 1024)
            }
        }
    }

    /// The smallest key above every key starting with `prefix`; nil when there is none (all 0xff).
    static func successor(of prefix: [UInt8]) -> [UInt8]? {
        var end = prefix
        while let last = end.last {
            if last < 0xff {
                end[end.count - 1] = last + 1
                return end
            }
            end.removeLast()
        }
        return nil
    }
}
#endif

import Foundation
import GRDB

extension Person: FetchableRecord, PersistableRecord {
    // Table "person"; `tags` ([String]) is stored by GRDB's Codable support as a JSON text column.
}

/// GRDB 7 on SQLite in a temporary file, WAL mode (DatabasePool), used as its documentation
/// recommends for speed: one transaction for bulk inserts, cached statements for look-ups.
/// GRDB sets `synchronous=NORMAL` on WAL databases (its default and SQLite's advice): commits
/// are then NOT fsynced (a power loss may lose the last ones; the file stays consistent). Only
/// `durableSingleWrites` switches to `synchronous=FULL`, to compare like with like (LMDB's
/// defaults fsync every commit).
struct GRDBEngine: KVEngine {
    let name = "grdb"

    static func pool(_ folder: String) throws -> DatabasePool {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return try DatabasePool(path: folder + "/bench.sqlite")
    }

    static func kvPool(_ folder: String) throws -> DatabasePool {
        let pool = try pool(folder)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS kv (k INTEGER PRIMARY KEY, v BLOB NOT NULL)")
        }
        return pool
    }

    /// An untimed pass over every record (as the C and binding sides do).
    static func touchAll(_ db: Database) throws {
        let rows = try Row.fetchCursor(db, sql: "SELECT k, v FROM kv")
        var sink = 0
        while let row = try rows.next() { sink &+= try row.withUnsafeData(atIndex: 1) { $0?.count ?? 0 } }
        blackHole(sink)
    }

    func appendPut(folder: String, n: Int, value: [UInt8]) throws -> UInt64 {
        let pool = try Self.kvPool(folder)
        defer { try? pool.close() }
        let blob = Data(value)
        return try pool.write { db in
            let statement = try db.cachedStatement(sql: "INSERT INTO kv (k, v) VALUES (?, ?)")
            let t0 = now()
            for i in 0..<Int64(n) {
                try statement.execute(arguments: [i, blob])
            }
            return now() - t0
        }
    }

    func randomPut(folder: String, keys: [UInt64], value: [UInt8]) throws -> UInt64 {
        let pool = try Self.kvPool(folder)
        defer { try? pool.close() }
        let blob = Data(value)
        return try pool.write { db in
            let statement = try db.cachedStatement(sql: "INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)")
            let t0 = now()
            for key in keys {
                try statement.execute(arguments: [Int64(bitPattern: key), blob])
            }
            return now() - t0
        }
    }

    func randomGet(folder: String, keys: [UInt64], checksum: inout UInt64) throws -> UInt64 {
        let pool = try Self.kvPool(folder)
        defer { try? pool.close() }
        let (elapsed, sum) = try pool.read { db in
            try Self.touchAll(db)
            let statement = try db.cachedStatement(sql: "SELECT v FROM kv WHERE k = ?")
            var sum: UInt64 = 0
            let t0 = now()
            for key in keys {
                guard let row = try Row.fetchOne(statement, arguments: [Int64(bitPattern: key)]) else {
                    throw BenchError("grdb: key \(key) is missing")
                }
                sum &+= try row.withUnsafeData(atIndex: 0) { data in UInt64(data?.first ?? 0) }
            }
            return (now() - t0, sum)
        }
        checksum &+= sum
        return elapsed
    }

    func scan(folder: String, count: inout UInt64, checksum: inout UInt64) throws -> UInt64 {
        let pool = try Self.kvPool(folder)
        defer { try? pool.close() }
        let (elapsed, records, sum) = try pool.read { db in
            try Self.touchAll(db)
            var records: UInt64 = 0
            var sum: UInt64 = 0
            let t0 = now()
            let rows = try Row.fetchCursor(db, sql: "SELECT k, v FROM kv ORDER BY k")
            while let row = try rows.next() {
                records &+= 1
                sum &+= try row.withUnsafeData(atIndex: 1) { data in UInt64(data?.last ?? 0) }
            }
            return (now() - t0, records, sum)
        }
        count = records
        checksum &+= sum
        return elapsed
    }

    func durableSingleWrites(folder: String, n: Int, value: [UInt8]) throws -> UInt64 {
        let pool = try Self.kvPool(folder)
        defer { try? pool.close() }
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        let blob = Data(value)
        let t0 = now()
        for i in 0..<Int64(n) {
            try pool.write { db in
                try db.cachedStatement(sql: "INSERT INTO kv (k, v) VALUES (?, ?)").execute(arguments: [i, blob])
            }
        }
        return now() - t0
    }

    // MARK: Documents

    static func createPersonTable(_ pool: DatabasePool) throws {
        try pool.write { db in
            try db.create(table: "person", options: .ifNotExists) { t in
                t.primaryKey("id", .text)
                t.column("name", .text).notNull()
                t.column("age", .integer).notNull()
                t.column("email", .text).notNull()
                t.column("tags", .jsonText).notNull()
            }
        }
    }

    /// Inserts every person as a record in one transaction. Measured: the whole transaction.
    func insertDocuments(_ people: [Person], folder: String) throws -> UInt64 {
        let pool = try Self.pool(folder)
        defer { try? pool.close() }
        try Self.createPersonTable(pool)
        let t0 = now()
        try pool.write { db in
            for person in people { try person.insert(db) }
        }
        return now() - t0
    }

    /// Fetches and decodes the record of every ID, in the given order, in one read transaction.
    func getDocuments(ids: [String], folder: String, checksum: inout Int) throws -> UInt64 {
        let pool = try Self.pool(folder)
        defer { try? pool.close() }
        let t0 = now()
        let sum = try pool.read { db in
            let statement = try db.cachedStatement(sql: "SELECT * FROM person WHERE id = ?")
            var sum = 0
            for id in ids {
                guard let person = try Person.fetchOne(statement, arguments: [id]) else {
                    throw BenchError("grdb: person \(id) is missing")
                }
                sum &+= person.age
            }
            return sum
        }
        let elapsed = now() - t0
        checksum &+= sum
        return elapsed
    }
}

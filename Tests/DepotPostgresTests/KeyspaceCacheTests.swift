#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import Testing

/// Keyspace handles cached across transactions stay correct: a keyspace dropped and recreated
/// by another host is found anew, and one created by a rolled-back write is not remembered.
@Suite("PostgreSQL keyspace cache", .enabled(if: PostgresTestServer.isAvailable, "DEPOT_POSTGRES_URL is not set"))
struct KeyspaceCacheTests {
    struct Abort: Error {}

    func put(_ driver: PostgresDriver, _ space: String, _ value: String) throws {
        try driver.write { txn in
            guard let keyspace = try txn.keyspace(named: space, create: true, multiValue: false) else { throw Abort() }
            try Array(value.utf8).withUnsafeBytes { v in try Array("key".utf8).withUnsafeBytes { try txn.put(v, forKey: $0, in: keyspace) } }
        }
    }

    func get(_ driver: PostgresDriver, _ space: String) throws -> String? {
        try driver.read { txn in
            guard let keyspace = try txn.keyspace(named: space, create: false, multiValue: false) else { return nil }
            return try Array("key".utf8).withUnsafeBytes { try txn.withValue(forKey: $0, in: keyspace) { String(decoding: $0, as: UTF8.self) } }
        }
    }

    @Test func dropAndRecreateOnAnotherHostIsSeen() throws {
        try PostgresTestServer.withHosts(2) { hosts in
            let first = hosts[0], second = hosts[1]
            try put(first, "space", "one")
            #expect(try get(first, "space") == "one")      // now cached by the first host
            try second.write { txn in
                let keyspace = try #require(try txn.keyspace(named: "space", create: false, multiValue: false))
                try txn.drop(keyspace)
            }
            #expect(try get(first, "space") == nil)
            try put(second, "space", "two")                 // a new keyspace row, a new id
            #expect(try get(first, "space") == "two")
            try put(first, "space", "three")
            #expect(try get(second, "space") == "three")
        }
    }

    @Test func keyspaceOfRolledBackWriteIsNotRemembered() throws {
        try PostgresTestServer.withDriver { driver in
            #expect(throws: Abort.self) {
                try driver.write { txn in
                    _ = try txn.keyspace(named: "ghost", create: true, multiValue: false)
                    throw Abort()
                }
            }
            #expect(try get(driver, "ghost") == nil)
            try driver.write { txn in
                do {
                    try txn.savepoint {
                        _ = try txn.keyspace(named: "inner", create: true, multiValue: false)
                        throw Abort()
                    } as Void
                } catch is Abort {}
            } as Void
            #expect(try get(driver, "inner") == nil)
            try put(driver, "inner", "kept")
            #expect(try get(driver, "inner") == "kept")
        }
    }
}
#endif

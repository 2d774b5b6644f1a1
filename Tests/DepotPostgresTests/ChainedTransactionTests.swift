#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import Testing

/// Calls that end with `COMMIT AND CHAIN` leave their connection in the next transaction
/// (``PostgresSession/chained``), and a read's opening statement also reads the key the
/// connection's last read asked for first (``ReadHint``). Each call must still run with its own
/// characteristics and see its own snapshot.
@Suite("PostgreSQL chained transactions and read hints")
struct ChainedTransactionTests {
    /// `(isolation, read only)` of the transaction `txn` runs in, as the server reports them.
    private static func characteristics(_ txn: any StorageTransaction) throws -> (String, Bool) {
        let transaction = try #require(txn as? PostgresTransaction)
        // Opens the transaction as the driver's own first statement would (a write sends its
        // opening statements with its first statement).
        try transaction.started()
        let session = transaction.session
        let serializable = try session.integers("SELECT (current_setting('transaction_isolation') = 'serializable')::int::bigint").first
        let repeatable = try session.integers("SELECT (current_setting('transaction_isolation') = 'repeatable read')::int::bigint").first
        let readOnly = try session.integers("SELECT (current_setting('transaction_read_only') = 'on')::int::bigint").first
        let isolation = serializable == 1 ? "serializable" : repeatable == 1 ? "repeatable read" : "read committed"
        return (isolation, readOnly == 1)
    }

    /// One connection, calls of every kind in turn: each runs with its own isolation and access
    /// mode, whichever call chained the transaction it starts in.
    @Test(arguments: [PostgresConfiguration.WriteIsolation.readCommitted, .serializable])
    func everyCallRunsWithItsOwnCharacteristics(isolation: PostgresConfiguration.WriteIsolation) throws {
        try PostgresTestServer.withDriver(configure: {
            $0.maximumConnections = 1
            $0.writeIsolation = isolation
        }) { driver in
            let written = isolation == .serializable ? "serializable" : "read committed"
            for round in 0..<3 {
                let write = try driver.write { try Self.characteristics($0) }
                let secondWrite = try driver.write { try Self.characteristics($0) }
                let read = try driver.read { try Self.characteristics($0) }
                let secondRead = try driver.read { try Self.characteristics($0) }
                #expect(write.0 == written && !write.1, "write, round \(round)")
                #expect(secondWrite.0 == written && !secondWrite.1, "write after write, round \(round)")
                #expect(read.0 == "repeatable read" && read.1, "read after write, round \(round)")
                #expect(secondRead.0 == "repeatable read" && secondRead.1, "read after read, round \(round)")
            }
        }
    }

    /// A write after a write on the same connection sees the first one's commit, and a write
    /// that rolls back leaves nothing behind for the next call on that connection.
    @Test func aChainedWriteSeesTheLastCommitAndARollbackEndsTheChain() throws {
        struct Refused: Error {}
        try PostgresTestServer.withDriver(configure: { $0.maximumConnections = 1 }) { driver in
            let key: [UInt8] = [1, 2, 3]
            func put(_ byte: UInt8) throws {
                try driver.write { txn in
                    let space = try #require(try txn.keyspace(named: "chain", create: true, multiValue: false))
                    try key.withUnsafeBytes { k in try [byte].withUnsafeBytes { try txn.put($0, forKey: k, in: space) } }
                }
            }
            func value() throws -> [UInt8]? {
                try driver.read { txn in
                    guard let space = try txn.keyspace(named: "chain", create: false, multiValue: false) else { return nil }
                    return try key.withUnsafeBytes { try txn.withValue(forKey: $0, in: space) { [UInt8]($0) } }
                }
            }
            try put(1)
            try put(2)
            #expect(try value() == [2])
            #expect(throws: Refused.self) {
                try driver.write { txn in
                    let space = try #require(try txn.keyspace(named: "chain", create: true, multiValue: false))
                    try key.withUnsafeBytes { k in try [9].withUnsafeBytes { try txn.put($0, forKey: k, in: space) } }
                    throw Refused()
                }
            }
            #expect(try value() == [2])
            try put(3)
            #expect(try value() == [3])
        }
    }

    /// The hinted key's value always comes from the read's own snapshot: changed, deleted, or
    /// in a keyspace dropped and created again by another driver, the next read on the
    /// connection that took the hint sees what is committed.
    @Test func aHintedReadSeesTheLatestCommit() throws {
        let schema = PostgresTestServer.uniqueSchema()
        let reader = try PostgresTestServer.driver(schema: schema) { $0.maximumConnections = 1 }
        defer { reader.close() }
        let writer = try PostgresTestServer.driver(schema: schema)
        defer {
            try? writer.dropSchema()
            writer.close()
        }
        let key = Array("schema/version".utf8)
        func write(_ value: [UInt8]?, dropFirst: Bool = false) throws {
            try writer.write { txn in
                if dropFirst, let old = try txn.keyspace(named: "hinted", create: false, multiValue: false) { try txn.drop(old) }
                let space = try #require(try txn.keyspace(named: "hinted", create: true, multiValue: false))
                if let value {
                    try key.withUnsafeBytes { k in try value.withUnsafeBytes { try txn.put($0, forKey: k, in: space) } }
                } else {
                    _ = try key.withUnsafeBytes { try txn.delete(forKey: $0, in: space) }
                }
            }
        }
        /// The stable value the reader sees, and whether its opening statement carried the hint.
        func read() throws -> (value: [UInt8]?, hinted: Bool) {
            try reader.read { txn in
                let space = try #require(try txn.keyspace(named: "hinted", create: false, multiValue: false))
                let value = try txn.stableValue(forKey: key, in: space)
                return (value, try #require(txn as? PostgresTransaction).sentHint != nil)
            }
        }
        try write([1])
        #expect(try read().value == [1])
        let hinted = try read()
        #expect(hinted.value == [1])
        #expect(hinted.hinted, "the second read on the connection reads the key with its epoch")
        try write([2])
        #expect(try read().value == [2])
        try write(nil)
        #expect(try read().value == nil)
        try write([3])
        #expect(try read().value == [3])
        // A new keyspace under the same name (new ID, new epoch): the hint is not used.
        try write([4], dropFirst: true)
        #expect(try read().value == [4])
        #expect(try read().value == [4])
        try write([5])
        let last = try read()
        #expect(last.value == [5])
        #expect(last.hinted)
    }
    /// A write takes the shared locks of the keyspaces its connection's last write used in its
    /// first lock statement (``WriteHint``); a keyspace dropped and created again meanwhile by
    /// another driver is still written under its new ID, and a count after such a lock checks
    /// that the keyspace exists.
    @Test func aWriteLocksItsConnectionsLastKeyspacesAhead() throws {
        let schema = PostgresTestServer.uniqueSchema()
        let writer = try PostgresTestServer.driver(schema: schema) { $0.maximumConnections = 1 }
        defer { writer.close() }
        let other = try PostgresTestServer.driver(schema: schema)
        defer {
            try? other.dropSchema()
            other.close()
        }
        func space(_ txn: any StorageTransaction, _ name: String) throws -> Keyspace {
            try #require(try txn.keyspace(named: name, create: true, multiValue: false))
        }
        /// Inserts `i` into `a` and puts it into `b`; the keyspaces locked ahead, and `b`'s count.
        func write(_ i: UInt8) throws -> (ahead: Set<Int32>, count: Int) {
            try writer.write { txn in
                let a = try space(txn, "a"), b = try space(txn, "b")
                _ = try [i].withUnsafeBytes { k in try [i].withUnsafeBytes { v in try txn.putIfAbsent(v, forKey: k, in: a) { _ in } } }
                let ahead = try #require(txn as? PostgresTransaction).heldKeyspaces.unverified
                try [i].withUnsafeBytes { k in try [i].withUnsafeBytes { try txn.put($0, forKey: k, in: b) } }
                return (ahead, try txn.count(b))
            }
        }
        #expect(try write(1) == ([], 1))
        let second = try write(2)
        #expect(!second.ahead.isEmpty, "the second write locks b ahead")
        #expect(second.count == 2)
        try other.write { txn in
            try txn.drop(try space(txn, "b"))
            try [99].withUnsafeBytes { k in try [99].withUnsafeBytes { try txn.put($0, forKey: k, in: try space(txn, "b")) } }
        }
        // The hint names the dropped keyspace's ID: b is written under its new one.
        #expect(try write(3).count == 2)
        #expect(try write(4).count == 3)
        let stored = try other.read { txn in try txn.count(try #require(try txn.keyspace(named: "b", create: false, multiValue: false))) }
        #expect(stored == 3)
    }
    /// With a read's chain and a write's chain idle, a read takes the connection with the
    /// read's and a write the one with the write's (no `SET TRANSACTION`), whatever the order
    /// they came back in.
    @Test func aCallTakesTheConnectionChainedForItsKind() throws {
        try PostgresTestServer.withDriver(configure: { $0.maximumConnections = 2 }) { driver in
            func connection(_ txn: any StorageTransaction) throws -> ObjectIdentifier {
                ObjectIdentifier(try #require(txn as? PostgresTransaction).session.connection)
            }
            func put(_ txn: any StorageTransaction) throws {
                let space = try #require(try txn.keyspace(named: "kinds", create: true, multiValue: false))
                try [1].withUnsafeBytes { k in try [1].withUnsafeBytes { try txn.put($0, forKey: k, in: space) } }
            }
            // A write on one connection with a read inside it on the other: the read's
            // connection comes back first, the write's last (so it would be taken first).
            let (writing, reading) = try driver.write { txn in
                try put(txn)
                return (try connection(txn), try driver.read { try connection($0) })
            }
            #expect(writing != reading)
            for _ in 0..<3 {
                #expect(try driver.read { try connection($0) } == reading)
                #expect(try driver.write { txn in
                    try put(txn)
                    return try connection(txn)
                } == writing)
            }
        }
    }
}
#endif

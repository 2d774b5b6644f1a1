#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import Testing

/// Named prepared statements (``PostgresConfiguration/preparesStatements``): a connection runs
/// the driver's fixed statements by name after their first use, with the same results.
@Suite("PostgreSQL prepared statements")
struct PreparedStatementTests {
    /// The driver's own statements this connection's server session holds prepared (the
    /// server's `pg_prepared_statements`, which lists protocol-level statements too).
    private static func preparedCount(_ driver: PostgresDriver, schema: String) throws -> Int64 {
        try driver.read { txn in
            let session = try #require(txn as? PostgresTransaction).session
            return try session.integers("SELECT count(*) FROM pg_prepared_statements WHERE NOT from_sql AND statement LIKE $1",
                                        .of("%\"\(schema)\".entries%")).first ?? 0
        }
    }

    /// The name a statement runs under, written on the stack for each statement, is the name
    /// it was prepared under.
    @Test(arguments: [0, 7, 9, 10, 99, 100, 12_345, Int.max])
    func theNameWrittenOnTheStackIsTheNamePreparedUnder(index: Int) {
        let written = PreparedStatements.withName(index) { String(cString: $0) }
        #expect(written == PreparedStatements.name(index))
        #expect(written == "depot_\(index)")
    }

    /// Parameters are sent from one buffer of bytes: an empty value stays
    /// empty (not NULL), NULL stays NULL, and values larger than the buffer so far, or after
    /// larger ones, come back byte for byte.
    @Test func parametersKeepTheirBytesWhenTheBufferIsReused() throws {
        try PostgresTestServer.withDriver(configure: { $0.maximumConnections = 1 }) { driver in
            // Up to 2.2 MB, each after values of other sizes: read in place from the parameters'
            // bytes, each at its own offset.
            let sizes = [0, 1, 5_000, 3, 70_000, 2_200_000, 0, 17, 1_500_000, 9]
            try driver.read { txn in
                let session = try #require(txn as? PostgresTransaction).session
                for (index, size) in sizes.enumerated() {
                    let value = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
                    let echoed = try session.values(Statement("SELECT $1::bytea", .of(Bytea(value))))
                    #expect(echoed == [value], "value of \(size) bytes")
                    var parameters = Parameters()
                    parameters.appendNull(type: 17)
                    parameters.append(type: 17, value)
                    let nulls = try session.integers(Statement("SELECT ($1::bytea IS NULL)::int::bigint + 2 * length($2::bytea)::bigint",
                                                               parameters))
                    #expect(nulls == [1 + 2 * Int64(size)], "NULL and \(size) bytes")
                    // Values after an empty one and a NULL keep their places in the bytes.
                    let mixed = Parameters.of(Bytea([UInt8]()), Int64(size), Bytea(value), "é\(size)")
                    var withNull = mixed
                    withNull.appendNull(type: 25)
                    withNull += .of(Int32(-7))
                    let echoedAll = try session.wait(session.submit([Statement(
                        "SELECT length($1::bytea)::bigint, $2::bigint, $3::bytea, $4::text, ($5::text IS NULL), $6::int",
                        withNull)]) { rows in rows })
                    #expect(echoedAll.count == 1)
                    if let row = echoedAll.first {
                        #expect(try row.integer(at: 0) == 0)
                        #expect(try row.integer(at: 1) == Int64(size))
                        #expect(try row.bytes(at: 2) == value)
                        #expect(try row.bytes(at: 3) == Array("é\(size)".utf8))
                        #expect(try row.boolean(at: 4))
                        #expect(try row.integer(at: 5) == -7)
                    }
                }
            }
        }
    }

    /// One connection: after a few document writes and gets, the point read and the put are
    /// prepared on it, and every get still returns what was written.
    @Test func theDriversStatementsArePreparedAfterTheirFirstUse() throws {
        try PostgresTestServer.withDriver(configure: { $0.maximumConnections = 1 }) { driver in
            let store = try Store(driver: driver)
            let deadline = ContinuousClock.now + .seconds(10)
            var round = 0
            var prepared: Int64 = 0
            // Preparation answers after the statement's first use: poll, with a deadline.
            while prepared < 2 && ContinuousClock.now < deadline {
                round += 1
                try store.write { tx in try tx.park(staff(round)) }
                let read = try store.read { tx in try tx.retrieve(Staff.self, id: staff(round).id) }
                #expect(read == staff(round))
                prepared = try Self.preparedCount(driver, schema: driver.configuration.schema)
            }
            #expect(prepared >= 2, "statements on entries prepared after \(round) rounds: \(prepared)")
            // Later rounds run by name: the same answers.
            for i in 1...round {
                #expect(try store.read { tx in try tx.retrieve(Staff.self, id: staff(i).id) } == staff(i))
            }
            #expect(try store.read { tx in try tx.retrieveAll(Staff.self).count } == round)
        }
    }

    /// A write's `COMMIT AND CHAIN` is one of the driver's fixed statements: after the first
    /// writes on a connection (and no read), it runs by name, so the server no longer parses it
    /// per commit.
    @Test func aWritesCommitIsPreparedAfterItsFirstUse() throws {
        try PostgresTestServer.withDriver(configure: { $0.maximumConnections = 1 }) { driver in
            var ready = false
            var writes = 0
            // Preparation answers after the statement's first use: write again until it has.
            while !ready && writes < 10 {
                writes += 1
                ready = try driver.write { txn in
                    let space = try #require(try txn.keyspace(named: "commits", create: true, multiValue: false))
                    try [UInt8](repeating: UInt8(writes), count: 8).withUnsafeBytes { key in
                        try [UInt8](repeating: 1, count: 4).withUnsafeBytes { try txn.put($0, forKey: key, in: space) }
                    }
                    return try #require(txn as? PostgresTransaction).session.connection.prepared.isReady("COMMIT AND CHAIN")
                }
            }
            #expect(ready, "COMMIT AND CHAIN prepared after \(writes) writes")
        }
    }

    /// `preparesStatements = false` (behind a transaction-mode pooler): nothing is prepared.
    @Test func noStatementIsPreparedWhenTurnedOff() throws {
        try PostgresTestServer.withDriver(configure: {
            $0.maximumConnections = 1
            $0.preparesStatements = false
        }) { driver in
            let store = try Store(driver: driver)
            for i in 1...5 {
                try store.write { tx in try tx.park(staff(i)) }
                #expect(try store.read { tx in try tx.retrieve(Staff.self, id: staff(i).id) } == staff(i))
            }
            #expect(try Self.preparedCount(driver, schema: driver.configuration.schema) == 0)
        }
    }

    /// A transaction that fails and rolls back leaves the prepared statements usable: the
    /// writes after it, by name, commit.
    @Test func aRolledBackWriteLeavesThePreparedStatementsUsable() throws {
        struct Refused: Error {}
        try PostgresTestServer.withDriver(configure: { $0.maximumConnections = 1 }) { driver in
            let store = try Store(driver: driver)
            for i in 1...5 { try store.write { tx in try tx.park(staff(i)) } }
            #expect(throws: Refused.self) {
                try store.write { tx in
                    try tx.park(staff(6))
                    throw Refused()
                }
            }
            for i in 7...10 { try store.write { tx in try tx.park(staff(i)) } }
            let ids = try store.read { tx in try tx.retrieveAll(Staff.self).map(\.id) }
            #expect(Set(ids) == Set([1, 2, 3, 4, 5, 7, 8, 9, 10].map { staff($0).id }))
        }
    }

    /// A connection's prepared statements are found by their exact text: two texts of the same
    /// length and one of another each run as their own statement (the right answer by name),
    /// and a text never prepared has none.
    @Test func eachTextRunsItsOwnPreparedStatement() throws {
        try PostgresTestServer.withDriver(configure: { $0.maximumConnections = 1 }) { driver in
            try driver.read { txn in
                let session = try #require(txn as? PostgresTransaction).session
                let prepared = session.connection.prepared
                // The three texts: two of one length, one longer.
                let texts = ["SELECT 1::bigint", "SELECT 2::bigint", "SELECT 30::bigint"]
                #expect(!prepared.isReady(texts[0]), "nothing is prepared before its first use")
                for (i, sql) in texts.enumerated() {
                    // The first use runs unnamed and prepares it in the same pipeline.
                    #expect(try session.integers(Statement(prepared: sql)) == [[1, 2, 30][i]])
                    for (j, other) in texts.enumerated() {
                        #expect(prepared.isReady(other) == (j <= i), "after the first use of \(i + 1) of the texts, '\(other)'")
                        if j <= i { #expect(try session.integers(Statement(prepared: other)) == [[1, 2, 30][j]], "'\(other)' by name") }
                    }
                }
                #expect(!prepared.isReady("SELECT 3::bigint"), "a text of a known length never prepared")
            }
        }
    }

    @Test func theURLParameterTurnsPreparationOff() throws {
        #expect(try PostgresConfiguration(url: "postgres://u@h/db", environment: [:]).preparesStatements)
        #expect(try !PostgresConfiguration(url: "postgres://u@h/db?prepare_statements=false", environment: [:]).preparesStatements)
        #expect(throws: PostgresDriverError.invalidConfiguration("prepare_statements must be true or false")) {
            try PostgresConfiguration(url: "postgres://u@h/db?prepare_statements=maybe", environment: [:])
        }
    }
}
#endif

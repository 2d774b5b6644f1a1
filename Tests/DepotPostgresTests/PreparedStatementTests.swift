#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import PostgresNIO
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
    /// length and one of another each run as their own statement, and a text never prepared
    /// has none.
    @Test func eachTextRunsItsOwnPreparedStatement() throws {
        try PostgresTestServer.withDriver(configure: { $0.maximumConnections = 1 }) { driver in
            try driver.read { txn in
                let session = try #require(txn as? PostgresTransaction).session
                let connection = session.connection, prepared = session.prepared
                // The three texts: two of one length, one longer.
                let texts = ["SELECT 1::bigint", "SELECT 2::bigint", "SELECT 30::bigint"]
                func onLoop<T: Sendable>(_ body: @escaping @Sendable () -> T) throws -> T {
                    try connection.eventLoop.submit(body).wait()
                }
                func value(of sql: String) throws -> Int64? {
                    guard let query = try onLoop({ prepared.ready(sql) }) else { return nil }
                    return try query.execute([]).wait().first?.binary(Int64.self, at: 0)
                }
                #expect(try value(of: texts[0]) == nil, "nothing is prepared before its first use")
                for (i, sql) in texts.enumerated() {
                    try onLoop { prepared.prepare(sql, on: connection) }
                    // Preparation answers later: poll, with a deadline.
                    let deadline = ContinuousClock.now + .seconds(10)
                    while try onLoop({ prepared.ready(sql) == nil }) && ContinuousClock.now < deadline { usleep(2_000) }
                    for (j, other) in texts.enumerated() {
                        let expected: Int64? = j <= i ? [1, 2, 30][j] : nil
                        #expect(try value(of: other) == expected, "after preparing \(i + 1) of the texts, '\(other)'")
                    }
                }
                #expect(try value(of: "SELECT 3::bigint") == nil, "a text of a known length never prepared")
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

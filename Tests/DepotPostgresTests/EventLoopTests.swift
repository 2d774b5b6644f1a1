#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import Synchronization
import Testing

/// The connection pool's event loops (``PostgresConfiguration/eventLoopThreads``).
@Suite("PostgreSQL event loops")
struct EventLoopTests {
    @Test func eventLoopThreadsOutsideOneTo64AreRefused() throws {
        var configuration = try PostgresConfiguration(url: "postgres://u@h/db", environment: [:])
        for bad in [0, -1, 65] {
            configuration.eventLoopThreads = bad
            #expect(throws: PostgresDriverError.invalidConfiguration("eventLoopThreads must be from 1 to 64")) { try configuration.validate() }
        }
        configuration.eventLoopThreads = 4
        try configuration.validate()
    }

    /// Connections spread over four loops (whatever the machine's cores): 16 threads writing
    /// documents at once, every write stored once, and no call refused as made from a loop.
    @Test func writersOnConnectionsOfSeveralLoopsAllCommit() throws {
        try PostgresTestServer.withDriver(configure: {
            $0.eventLoopThreads = 4
            $0.maximumConnections = 8
        }) { driver in
            let store = try Store(driver: driver)
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 16) { writer in
                for i in 0..<5 {
                    do {
                        try store.write { tx in try tx.park(staff(writer * 100 + i)) }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty)
            #expect(try store.read { tx in try tx.retrieveAll(Staff.self).count } == 80)
        }
    }
}
#endif

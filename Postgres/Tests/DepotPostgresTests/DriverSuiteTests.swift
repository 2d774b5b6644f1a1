import Depot
@testable import DepotPostgres
import Foundation
import Testing

/// The root package's "Every storage driver" checks (Tests/DepotTests/Drivers), run against
/// PostgreSQL through `Store(driver:)`.
@Suite("Every storage driver, on PostgreSQL", .enabled(if: PostgresTestServer.isAvailable, "DEPOT_POSTGRES_URL is not set"))
struct DriverSuiteTests {
    @Test func documentsReferencesAndOrder() throws {
        try PostgresTestServer.withDriver { driver in
            let store = try Store(driver: driver)
            try store.write { tx in
                try tx.park(sampleEmployee("e2", department: Department(id: "d", name: "Ops")))
                try tx.park(sampleEmployee("e1"))
                try tx.park([Counter(id: 10, value: 1), Counter(id: -3, value: 2), Counter(id: 2, value: 3)])
            }
            try store.read { tx throws in
                #expect(try tx.retrieve(Employee.self, id: "e2")?.department?.name == "Ops")
                #expect(try tx.retrieveAll(Employee.self).map(\.id) == ["e1", "e2"])
                #expect(try tx.retrieveAll(Counter.self).map(\.id) == [-3, 2, 10])
                #expect(try tx.count(Department.self) == 1)
                #expect(try tx.exists(Employee.self, id: "e1"))
            }
            try store.write { tx in _ = try tx.delete(Employee.self, id: "e1") }
            #expect(try store.retrieveAll(Employee.self).map(\.id) == ["e2"])
        }
    }

    @Test func aliasesIndexesQueriesAndSync() throws {
        try PostgresTestServer.withDriver { driver in
            let store = try Store(driver: driver)
            try store.write { tx in
                for i in 0..<40 { try tx.park(staff(i)) }
                try tx.alias("B").park(staff(99))
                try tx.park(Task2(id: "t", title: "x"))
            }
            try store.read { tx throws in
                let result = try tx.execute(FetchRequest<Staff>().matching(\.salary, .equalTo(staff(5).salary)))
                #expect(result.plan.usedIndex)
                #expect(result.documents.map(\.id) == (0..<40).filter { staff($0).salary == staff(5).salary })
                let prefix = try tx.fetch(FetchRequest<Staff>().matching(\.name, .hasPrefix("Grace")).sorted(by: SortDescriptor(\.id)))
                #expect(prefix.map(\.id) == (0..<40).filter { staff($0).name.hasPrefix("Grace") })
                #expect(try tx.alias("B").count(Staff.self) == 1)
                #expect(try tx.retrieve(Task2.self, withSyncStatus: .undetermined).map(\.id) == ["t"])
            }
            #expect(try store.aliases() == ["B", "default"])
            #expect(throws: DepotError.self) {
                try store.write { tx in try tx.park(Staff(id: 500, name: "X", email: staff(1).email, salary: 1, company: "Y")) }
            }
            let id = try store.uniqueIDs.next()
            #expect(try store.uniqueIDs.next() > id)
        }
    }

    @Test func changeSetsAreDelivered() throws {
        try PostgresTestServer.withDriver { driver in
            let store = try Store(driver: driver)
            let observer = RecordingObserver()
            store.addObserver(observer)
            try store.write { tx in try tx.park(sampleEmployee("a")) }
            try store.write { tx in try tx.park(sampleEmployee("a", salary: 2)) }
            #expect(observer.sets.map { $0.created(Employee.self) } == [["a"], []])
            #expect(observer.sets.last?.updated(Employee.self) == ["a"])
        }
    }

    @Test func rollbackAndSavepoints() throws {
        struct Boom: Error {}
        try PostgresTestServer.withDriver { driver in
            let store = try Store(driver: driver)
            #expect(throws: Boom.self) {
                try store.write { tx in
                    try tx.park(sampleEmployee("partial"))
                    throw Boom()
                }
            }
            #expect(try !store.exists(Employee.self, id: "partial"))
            try store.write { tx in
                _ = try? tx.savepoint { try tx.park(sampleEmployee("undone")); throw Boom() }
                try tx.park(sampleEmployee("kept"))
            }
            #expect(try !store.exists(Employee.self, id: "undone") && store.exists(Employee.self, id: "kept"))
        }
    }

    @Test func keyValueKit() throws {
        try PostgresTestServer.withDriver { driver in
            let store = try Store(driver: driver)
            let kv = store.keyValue(maxEntries: 100, maxBytes: 1 << 20)
            kv["name"] = "Ada"
            try kv.save()
            let again = try Store(driver: driver).keyValue(maxEntries: 100, maxBytes: 1 << 20)
            let name: String? = again["name"]
            #expect(name == "Ada")
            try again.deletePermanently("name")
            let gone: String? = try Store(driver: driver).keyValue(maxEntries: 100, maxBytes: 1 << 20)["name"]
            #expect(gone == nil)
        }
    }

    /// Two drivers on one schema stand for two hosts: the watcher of one reports the other's
    /// commits (the change log lives in the shared tables).
    @Test func changesOfAnotherHostAreReported() throws {
        let schema = PostgresTestServer.uniqueSchema()
        let hostA = try PostgresTestServer.driver(schema: schema)
        let hostB = try PostgresTestServer.driver(schema: schema)
        defer {
            try? hostA.dropSchema()
            hostA.close()
            hostB.close()
        }
        let storeA = try Store(driver: hostA)
        let storeB = try Store(driver: hostB)
        let observer = RecordingObserver()
        storeB.addObserver(observer)
        let watcher = try storeB.watchExternalChanges(every: .milliseconds(20))
        defer { watcher.stop() }
        // Writers look for watchers at most once a second: keep writing until one is logged.
        var i = 0
        let seen = try eventually(within: 15) {
            i += 1
            try storeA.write { tx in try tx.park(sampleEmployee("x\(i)")) }
            return observer.sets.contains { $0.isExternal && !$0.created(Employee.self).isEmpty }
        }
        #expect(seen)
    }
}

import DepotCore
import Foundation

private func employee(_ id: String, salary: Int = 100, department: ConformanceDepartment? = nil) -> ConformanceEmployee {
    ConformanceEmployee(id: id, name: "Employee \(id)", salary: salary, department: department)
}

extension DriverConformance {
    static var documentChecks: [Check] {
        [
            Check(name: "documents, references and ID order through a Store", needs: []) { driver, e in
                let store = try Store(driver: driver)
                try store.write { tx in
                    try tx.park(employee("e2", department: ConformanceDepartment(id: "d", name: "Ops")))
                    try tx.park(employee("e1"))
                    try tx.park([ConformanceCounter(id: 10, value: 1), ConformanceCounter(id: -3, value: 2), ConformanceCounter(id: 2, value: 3)])
                }
                try store.read { tx in
                    try e.expect(try tx.retrieve(ConformanceEmployee.self, id: "e2")?.department?.name == "Ops", "a referenced document must load with its parent")
                    try e.expect(try tx.retrieveAll(ConformanceEmployee.self).map(\.id) == ["e1", "e2"], "string IDs must come back in order")
                    let counters = try tx.retrieveAll(ConformanceCounter.self).map(\.id)
                    try e.expect(counters == [-3, 2, 10], "integer IDs must sort numerically, got \(counters)")
                    try e.expect(try tx.count(ConformanceDepartment.self) == 1, "the reference must be stored once")
                }
                try store.write { tx in _ = try tx.delete(ConformanceEmployee.self, id: "e1") }
                try e.expect(try store.retrieveAll(ConformanceEmployee.self).map(\.id) == ["e2"], "a deleted document must be gone")
            },
            Check(name: "aliases, indexes, queries, unique indexes, sync status and unique IDs", needs: []) { driver, e in
                let store = try Store(driver: driver)
                try store.write { tx in
                    for i in 0..<30 { try tx.park(ConformanceStaff.make(i)) }
                    try tx.alias("B").park(ConformanceStaff.make(99))
                    try tx.park(ConformanceTask(id: "t", title: "x"))
                }
                try store.read { tx in
                    let salary = ConformanceStaff.make(5).salary
                    let result = try tx.execute(FetchRequest<ConformanceStaff>().matching(\.salary, .equalTo(salary)))
                    try e.expect(result.plan.usedIndex, "an equality query on an indexed field must use the index")
                    let expected = (0..<30).filter { ConformanceStaff.make($0).salary == salary }
                    try e.expect(result.documents.map(\.id) == expected, "the index query must return \(expected), got \(result.documents.map(\.id))")
                    let prefix = try tx.fetch(FetchRequest<ConformanceStaff>().matching(\.name, .hasPrefix("Grace")).sorted(by: SortDescriptor(\.id)))
                    try e.expect(prefix.map(\.id) == (0..<30).filter { ConformanceStaff.make($0).name.hasPrefix("Grace") }, "a prefix query must match a scan")
                    try e.expect(try tx.alias("B").count(ConformanceStaff.self) == 1, "aliases must be isolated")
                    try e.expect(try tx.retrieve(ConformanceTask.self, withSyncStatus: .undetermined).map(\.id) == ["t"], "the sync-status index must list the task")
                }
                try e.expect(try store.aliases() == ["B", "default"], "aliases() must list both aliases")
                try e.expectThrows("a unique index violation must throw") {
                    _ = try store.write { tx in try tx.park(ConformanceStaff(id: 500, name: "X", email: ConformanceStaff.make(1).email, salary: 1)) }
                }
                let id = try store.uniqueIDs.next()
                try e.expect(try store.uniqueIDs.next() > id, "unique IDs must increase")
            },
            Check(name: "change sets tell created from updated", needs: []) { driver, e in
                let store = try Store(driver: driver)
                let observer = ConformanceObserver()
                store.addObserver(observer)
                try store.write { tx in try tx.park(employee("a")) }
                try store.write { tx in try tx.park(employee("a", salary: 2)) }
                try store.write { tx in _ = try tx.delete(ConformanceEmployee.self, id: "a") }
                let sets = observer.sets
                try e.expect(sets.count == 3, "one change set per commit: expected 3, got \(sets.count)")
                try e.expect(sets[0].created(ConformanceEmployee.self) == ["a"] && sets[1].created(ConformanceEmployee.self).isEmpty, "the first park creates")
                try e.expect(sets[1].updated(ConformanceEmployee.self) == ["a"], "the second park updates")
                try e.expect(sets[2].deleted(ConformanceEmployee.self) == ["a"], "the delete is reported")
            },
            Check(name: "a throwing write and savepoints follow the capabilities", needs: []) { driver, e in
                struct Abort: Error {}
                let store = try Store(driver: driver)
                do { try store.write { tx in try tx.park(employee("partial")); throw Abort() } } catch is Abort {}
                let stayed = try store.exists(ConformanceEmployee.self, id: "partial")
                let transactional = driver.capabilities.contains(.transactions)
                try e.expect(stayed == !transactional, transactional ? "with transactions a throwing write must leave nothing"
                                                                      : "without transactions what was done before the throw must stay")
                if driver.capabilities.contains(.savepoints) {
                    try store.write { tx in
                        _ = try? tx.savepoint { try tx.park(employee("undone")); throw Abort() }
                        try tx.park(employee("kept"))
                    }
                    try e.expect(try !store.exists(ConformanceEmployee.self, id: "undone") && store.exists(ConformanceEmployee.self, id: "kept"),
                                 "a throwing savepoint must undo only its own writes")
                } else {
                    try e.expectThrows("without the savepoints capability, a savepoint must throw") { try store.write { tx in try tx.savepoint {} } }
                }
            },
            Check(name: "the key/value kit saves, reads and removes", needs: []) { driver, e in
                let store = try Store(driver: driver)
                let kv = store.keyValue()
                kv["name"] = "Ada"
                kv["n"] = 7
                try kv.save()
                let fresh = store.keyValue()
                try e.expect((fresh["name"] as String?) == "Ada" && (fresh["n"] as Int?) == 7, "saved values must read back from storage")
                try kv.removeAllPermanently()
                try e.expect((store.keyValue()["name"] as String?) == nil, "removeAllPermanently must remove the entries from storage")
            },
        ]
    }
}

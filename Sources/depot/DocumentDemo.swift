import Depot
import DepotLMDB
import Foundation

struct DemoDepartment: Document {
    static var collection: String { "Department" }
    var id: String
    var name: String
}

struct DemoEmployee: Document {
    static var collection: String { "Employee" }
    var id: Int
    var name: String
    var salary: Int
    var department: DemoDepartment
}

/// Prints every change set it is told about.
final class PrintingObserver: StoreObserver, @unchecked Sendable {
    // @unchecked Sendable: `count` is only touched on the committing thread of the demo.
    var count = 0
    func store(_ store: Store, didCommit changes: ChangeSet) {
        count += 1
        for c in changes.collections {
            let parts = [("created", c.created), ("updated", c.updated), ("deleted", c.deleted)]
                .filter { !$0.1.isEmpty }
                .map { "\($0.0) \($0.1.prefix(5).map(Self.show).joined(separator: ","))\($0.1.count > 5 ? "… (\($0.1.count) in all)" : "")" }
            demoLine("    change set: \(c.alias)/\(c.collection): \(parts.joined(separator: "; "))")
        }
    }
    static func show(_ v: DocumentValue) -> String {
        switch v {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .uint(let u): return String(u)
        default: return "\(v)"
        }
    }
}

extension Demo {
    func documentTour() throws {
        demoLine("\n3. Documents (Depot)")
        let path = try demoFolder("documents", replace: true)
        let store = try Store(path: path)
        let observer = PrintingObserver()
        store.addObserver(observer)
        let sales = DemoDepartment(id: "sales", name: "Sales")
        let research = DemoDepartment(id: "research", name: "Research")
        try step("park 3 employees; their departments become records") {
            try store.write { tx in
                try tx.park(DemoEmployee(id: 1, name: "Ada", salary: 120, department: research))
                try tx.park(DemoEmployee(id: 2, name: "Grace", salary: 110, department: research))
                try tx.park(DemoEmployee(id: 10, name: "Linus", salary: 90, department: sales))
            }
        }
        try store.write { tx in try tx.park(DemoDepartment(id: "research", name: "Research & Development")) }
        let ada = try store.retrieve(DemoEmployee.self, id: 1)
        demoLine("    Ada's department, read through the reference: \(ada?.department.name ?? "-")")
        struct Rollback: Error {}
        _ = try? store.write { tx in
            try tx.park(DemoEmployee(id: 99, name: "Mallory", salary: 1, department: sales))
            throw Rollback()
        }
        demoLine("    rollback: employee 99 \(try store.exists(DemoEmployee.self, id: 99) ? "PRESENT (bug!)" : "absent"), no change set sent")
        let archive = try store.alias("Archive")
        try archive.write { tx in try tx.park(DemoEmployee(id: 1, name: "Ada (2019)", salary: 80, department: research)) }
        demoLine("    alias 'Archive' holds \(try archive.count(DemoEmployee.self)) employee; 'default' holds \(try store.count(DemoEmployee.self))")
        let n = 20_000
        try step("park \(n) employees in one transaction") {
            try store.write { tx in
                for i in 1000..<(1000 + n) {
                    try tx.park(DemoEmployee(id: i, name: "E\(i)", salary: i % 200, department: i % 2 == 0 ? sales : research))
                }
            }
        }
        let total = try step("retrieve all \(n + 3) employees, references resolved") { try store.retrieveAll(DemoEmployee.self).count }
        demoLine("    \(total) employees; \(observer.count) change sets delivered")
        demoLine("    export: depot export --path \(path) --collection Employee | head")
    }
}

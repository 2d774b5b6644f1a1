import Depot
import Foundation

extension Demo {
    func seedTour() throws {
        demoLine("\n4. Seeding and queries")
        let fixture = ["Fixtures/CorporateMayhem/Main.seed.json", "../Fixtures/CorporateMayhem/Main.seed.json"]
            .first { FileManager.default.fileExists(atPath: $0) }
        guard let fixture else {
            demoLine("    (skipped: run the demo from the repository root to seed Fixtures/CorporateMayhem)")
            return
        }
        let path = try demoFolder("seeded", replace: true)
        let store = try Store(path: path)
        let summary = try step("seed CorporateMayhem in one transaction") {
            try store.seed(from: URL(fileURLWithPath: fixture))
        }
        let counts = summary.documentsPerCollection.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        demoLine("    \(counts) from \(summary.filesRead) files; \(summary.generatedIDs) identifiers generated")
        let rich = try store.read { tx in
            try tx.query(collection: "Employee", conditions: [FieldCondition(field: "employeeSalary", op: .greaterOrEqual, value: .int(130_000))],
                         sort: [FieldSort(field: "employeeSalary", descending: true)])
        }
        demoLine("    employees earning 130,000 or more: " + rich.documents.compactMap { $0.document["employeeName"]?.stringValue }.joined(separator: ", "))
        let foo = try store.read { tx in
            try tx.query(collection: "Company", conditions: [FieldCondition(field: "companyName", op: .prefix, value: .string("Foo"))])
        }
        if let company = foo.documents.first {
            demoLine("    \(company.document["companyName"]?.stringValue ?? "?") got generated ID \(company.id.stringValue ?? "?") and \(company.document["employees"]?.elements?.count ?? 0) employees")
        }
        demoLine("    try: depot query --path \(path) --collection Employee --where employeeSalary '>' 100000 --sort employeeName")
    }
}

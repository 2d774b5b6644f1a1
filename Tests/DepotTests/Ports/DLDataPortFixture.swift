import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

// DLData's CorporateMayhem model and seeded store for DLDataPortTests.swift (ported from
// dagerydoo/DLData's tests, DLData/Tests/Tests/*.m).

// MARK: - DLData's CorporateMayhem model, as a Depot user would declare it

struct KPCompany: Document, Equatable {
    static var collection: String { "Company" }
    var id: String
    var companyName: String
    var employees: [KPEmployee]
    enum CodingKeys: String, CodingKey { case id = "companyID", companyName, employees }
}

struct KPEmployee: Document, Equatable {
    static var collection: String { "Employee" }
    var id: String
    var employeeName: String
    var employeeSalary: Int
    var employeePhoto: Data?
    enum CodingKeys: String, CodingKey { case id = "employeeID", employeeName, employeeSalary, employeePhoto }
    static var indexes: [DocumentIndex<KPEmployee>] { [.init(\.employeeSalary, name: "employeeSalary")] }
}

/// A seeded store shaped like DLData's test fixture: two companies, one employee at the first
/// and five (one manager, four staff in a second file) at "Foo Inc.", every ID generated.
/// Salaries: 300 at Diabolical Labs; 100,000,000 and 0...3 at Foo Inc.
final class KPCorporateStore: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; used from one test at a time.
    let folder: TemporaryFolder
    let store: Store
    let seedURL: URL

    static let wellPaidFloor = 100
    static let ridiculousFloor = 1_000_000

    init(seed: Bool = true) throws {
        let folder = TemporaryFolder("kits-port")
        self.folder = folder
        store = try Store(path: folder.sub("store"))
        seedURL = try Self.writeSeedTree(in: URL(fileURLWithPath: folder.sub("seed")))
        store.registerSeedType(KPCompany.self)
        store.registerSeedType(KPEmployee.self)
        store.registerFetchRequest("wellPaidEmployees", for: KPEmployee.self) { _ in
            FetchRequest<KPEmployee>().matching(\.employeeSalary, .greaterThan(KPCorporateStore.wellPaidFloor))
        }
        store.registerFetchRequest("ridiculouslySalariedEmployees", for: KPEmployee.self) { _ in
            FetchRequest<KPEmployee>().matching(\.employeeSalary, .greaterThan(KPCorporateStore.ridiculousFloor))
        }
        store.registerFetchRequest("companyWellPaidEmployees", for: KPEmployee.self,
                                   variables: ["company": .document(KPCompany.self)]) { vars in
            let company = try vars.document("company", as: KPCompany.self)
            let staff = Set(company.employees.map(\.id))
            return FetchRequest<KPEmployee>()
                .matching(\.employeeSalary, .greaterThan(KPCorporateStore.wellPaidFloor))
                .filter { staff.contains($0.id) }
        }
        if seed { try seedDataStore() }
    }

    @discardableResult
    func seedDataStore() throws -> SeedSummary { try store.seed(from: seedURL) }

    func allCompanies() throws -> [KPCompany] { try store.read { try $0.retrieveAll(KPCompany.self) } }
    func allEmployees() throws -> [KPEmployee] { try store.read { try $0.retrieveAll(KPEmployee.self) } }

    func company(named name: String) throws -> KPCompany? {
        try store.read { try $0.fetchOne(FetchRequest<KPCompany>().filter { $0.companyName == name }) }
    }

    /// The request "employees whose company is named `name`" (DLData: `company.companyName == %@`).
    func employeesOfCompany(named name: String) throws -> FetchRequest<KPEmployee> {
        let staff = Set(try company(named: name)?.employees.map(\.id) ?? [])
        return FetchRequest<KPEmployee>().filter { staff.contains($0.id) }
    }

    private static func writeSeedTree(in root: URL) throws -> URL {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let files: [String: String] = [
            "corporate.seed.json": #"{"seedlings": [{"seedFile": "diabolical.seed.json"}, {"seedFile": "foo.seed.json"}]}"#,
            "diabolical.seed.json": #"""
                {"Company": {"companyName": "Diabolical Labs, LLC", "companyID": "",
                             "employees": {"seedlings": [{"seedFile": "diabolical-staff.seed.json"}]}}}
                """#,
            "diabolical-staff.seed.json": #"{"Employee": {"employeeName": "Tess Mercer", "employeeSalary": 300, "employeeID": ""}}"#,
            "foo.seed.json": #"""
                {"Company": {"companyName": "Foo Inc.", "companyID": "",
                             "employees": {"seedlings": [{"seedFile": "foo-people.seed.json"}]}}}
                """#,
            "foo-people.seed.json": #"{"seedlings": [{"seedFile": "foo-board.seed.json"}, {"seedFile": "foo-floor.seed.json"}]}"#,
            "foo-board.seed.json": #"{"Employee": {"employeeName": "Walter Boss", "employeeSalary": 100000000, "employeeID": ""}}"#,
            "foo-floor.seed.json": #"""
                {"Employee": [
                  {"employeeName": "Ann Lowe", "employeeSalary": 1, "employeeID": ""},
                  {"employeeName": "Bea Meager", "employeeSalary": 2, "employeeID": ""},
                  {"employeeName": "Cal Scant", "employeeSalary": 3, "employeeID": ""},
                  {"employeeName": "Dee Unpaid", "employeeSalary": 0, "employeeID": ""}
                ]}
                """#,
        ]
        for (name, text) in files {
            try Data(text.utf8).write(to: root.appendingPathComponent(name))
        }
        return root.appendingPathComponent("corporate.seed.json")
    }
}


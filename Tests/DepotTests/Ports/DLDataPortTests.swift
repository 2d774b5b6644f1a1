import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

// Ports of dagerydoo/DLData's own test cases (DLData/Tests/Tests/*.m, GHUnit) to Depot.

// MARK: - DLData

@Suite("Kits port: DLData")
struct KitsPortDLDataTests {
    // dagerydoo/DLData DLDataPurgeTest.testDataPurge
    @Test func testDataPurge() throws {
        let corp = try KPCorporateStore()
        try purge(corp)
    }

    private func purge(_ corp: KPCorporateStore) throws {
        #expect(try corp.allCompanies().count > 0, "nothing to purge")
        #expect(try corp.allEmployees().count > 0, "nothing to purge")
        try corp.store.clearAlias(corp.store.alias)
        #expect(try corp.allCompanies().isEmpty)
        #expect(try corp.allEmployees().isEmpty)
    }

    // dagerydoo/DLData DLDataPurgeTest.testDataPurgeAndReSeed
    @Test func testDataPurgeAndReSeed() throws {
        let corp = try KPCorporateStore()
        try purge(corp)
        try corp.seedDataStore()
        #expect(try corp.allCompanies().count > 0, "no companies after reseeding")
        #expect(try corp.allEmployees().count > 0, "no employees after reseeding")
    }

    // dagerydoo/DLData DLDataSeederTest.testDataSeeding
    @Test func testDataSeeding() throws {
        let corp = try KPCorporateStore()
        let companies = try corp.allCompanies()
        let employees = try corp.allEmployees()
        #expect(companies.count == 2)
        #expect(employees.count == 6)
        var perCompany: [String: [KPEmployee]] = [:]
        for company in companies {
            perCompany[company.companyName] = try corp.store.read { try $0.fetch(try corp.employeesOfCompany(named: company.companyName)) }
        }
        #expect(perCompany.count == 2)
        #expect(perCompany["Diabolical Labs, LLC"]?.count == 1)
        #expect(perCompany["Foo Inc."]?.count == 5)
        for (name, staff) in perCompany {
            let company = try #require(try corp.company(named: name))
            #expect(company.employees.count == staff.count, "employee count of \(name)")
            // DLData checks the inverse (employee.company); Depot's seeded relationship is the
            // company's array of references: every member resolves to a stored employee.
            #expect(Set(company.employees.map(\.id)) == Set(staff.map(\.id)))
        }
        let ids = companies.map(\.id) + employees.map(\.id)
        #expect(Set(ids).count == 8, "generated IDs are unique")
        #expect(ids.allSatisfy { !$0.isEmpty })
    }

    // dagerydoo/DLData DLEntityCreationTest.testEntityCreation
    @Test func testEntityCreation() throws {
        let corp = try KPCorporateStore(seed: false)
        let tx = try corp.store.beginTransaction()
        let id = DocumentValue.string(UniqueIDs.string(for: try tx.nextUniqueID()))
        let employee = DynamicObject(entity: "Employee", fields: [("employeeID", id)])
        #expect(employee.idField == "employeeID")
        try tx.park(employee)
        #expect(try tx.retrieve(dynamic: "Employee", id: id) != nil, "the new entity is in the transaction")
        tx.rollback() // DLData's tearDown rolls back
        #expect(try corp.store.read { try $0.retrieve(dynamic: "Employee", id: id) } == nil)
    }

    // dagerydoo/DLData DLEntityDeletionTest.testEntityDeletion
    @Test func testEntityDeletion() throws {
        let corp = try KPCorporateStore()
        let companies = try corp.allCompanies()
        #expect(companies.count == 2)
        let last = try #require(companies.last)
        try corp.store.write { tx throws in #expect(try tx.delete(last)) }
        #expect(try corp.allCompanies().count == 1)
    }

    // dagerydoo/DLData DLEntityDeletionTest.testCascadingDeletion
    @Test func testCascadingDeletion() throws {
        let corp = try KPCorporateStore()
        let employeeCount = try corp.allEmployees().count
        let doomed = try #require(try corp.allCompanies().last)
        let doomedStaff = doomed.employees.count
        #expect(doomedStaff > 0)
        // Core Data's model cascades Company.employees: the owner-side rule.
        corp.store.registerCascade(from: KPCompany.self, via: \.employees)
        try corp.store.write { tx in _ = try tx.delete(doomed) }
        #expect(try corp.allEmployees().count == employeeCount - doomedStaff, "the company's employees go with it")
    }

    // dagerydoo/DLData DLFetchTests.testFetchOne
    @Test func testFetchOne() throws {
        let corp = try KPCorporateStore()
        let company = try #require(try corp.store.read { try $0.fetchOne(KPCompany.self) })
        #expect(["Foo Inc.", "Diabolical Labs, LLC"].contains(company.companyName))
    }

    // dagerydoo/DLData DLFetchTests.testFetchSansPredicateAndSort
    @Test func testFetchSansPredicateAndSort() throws {
        let corp = try KPCorporateStore()
        #expect(try corp.store.read { try $0.fetch(FetchRequest<KPEmployee>()) }.count == 6)
    }

    // dagerydoo/DLData DLFetchTests.testFetchWithPredicateSansSort
    @Test func testFetchWithPredicateSansSort() throws {
        let corp = try KPCorporateStore()
        let foo = try #require(try corp.company(named: "Foo Inc."))
        let employees = try corp.store.read { try $0.fetch(try corp.employeesOfCompany(named: "Foo Inc.")) }
        #expect(employees.count == 5)
        for employee in employees { #expect(foo.employees.contains(employee), "\(employee.employeeName) works at Foo Inc.") }
    }

    // dagerydoo/DLData DLFetchTests.testFetchWithPredicateAndSort
    @Test func testFetchWithPredicateAndSort() throws {
        let corp = try KPCorporateStore()
        let foo = try #require(try corp.company(named: "Foo Inc."))
        let request = try corp.employeesOfCompany(named: "Foo Inc.").sorted(by: SortDescriptor(\.employeeName, order: .reverse))
        let employees = try corp.store.read { try $0.fetch(request) }
        #expect(employees.count == 5)
        for employee in employees { #expect(foo.employees.contains(employee)) }
        for (earlier, later) in zip(employees, employees.dropFirst()) {
            #expect(earlier.employeeName > later.employeeName, "descending by name")
        }
    }

    // dagerydoo/DLData DLFetchTests.testUnqualifiedFetchCount
    @Test func testUnqualifiedFetchCount() throws {
        let corp = try KPCorporateStore()
        #expect(try corp.store.read { try $0.count(KPEmployee.self) } == 6)
    }

    // dagerydoo/DLData DLFetchTests.testQualifiedFetchCount
    @Test func testQualifiedFetchCount() throws {
        let corp = try KPCorporateStore()
        #expect(try corp.store.read { try $0.count(try corp.employeesOfCompany(named: "Foo Inc.")) } == 5)
    }

    // dagerydoo/DLData DLFetchTests.testFetchTemplates
    @Test func testFetchTemplates() throws {
        let corp = try KPCorporateStore()
        try corp.store.read { tx throws in
            let wellPaid = try tx.fetchRequest(named: "wellPaidEmployees", as: KPEmployee.self)
            #expect(try tx.fetch(wellPaid).count == 2)
            let ridiculous = try tx.fetchRequest(named: "ridiculouslySalariedEmployees", as: KPEmployee.self)
            #expect(try tx.fetch(ridiculous).count == 1)
        }
    }

    // dagerydoo/DLData DLFetchTests.testFetchTemplateCounts
    @Test func testFetchTemplateCounts() throws {
        let corp = try KPCorporateStore()
        try corp.store.read { tx throws in
            #expect(try tx.count(named: "wellPaidEmployees", as: KPEmployee.self) == 2)
            #expect(try tx.count(named: "ridiculouslySalariedEmployees", as: KPEmployee.self) == 1)
        }
    }

    // dagerydoo/DLData DLFetchTests.testFetchByName
    @Test func testFetchByName() throws {
        let corp = try KPCorporateStore()
        #expect(try corp.store.read { try $0.fetch(named: "wellPaidEmployees", as: KPEmployee.self) }.count == 2)
    }

    // dagerydoo/DLData DLFetchTests.testFetchWithSubstituteByName
    @Test func testFetchWithSubstituteByName() throws {
        let corp = try KPCorporateStore()
        let foo = try #require(try corp.store.read { try $0.fetchOne(KPCompany.self, where: #Predicate { $0.companyName == "Foo Inc." }) })
        let employees = try corp.store.read {
            try $0.fetch(named: "companyWellPaidEmployees", as: KPEmployee.self, substitutions: ["company": foo])
        }
        #expect(employees.count == 1)
    }

    // dagerydoo/DLData DLUndoRedoTests.testBasicGroupUndoRedo
    @Test func testBasicGroupUndoRedo() throws {
        let corp = try KPCorporateStore()
        let history = corp.store.enableUndo() // DLData: dataManagerSupportsUndo → YES
        #expect(try corp.allCompanies().count == 2)
        let stepsBefore = history.undoCount
        let id = try corp.store.uniqueIDs.nextString()
        // DLData's beginUndoGroup posts NSUndoManagerDidOpenUndoGroupNotification; Depot's group
        // is a closure with no notification: the group counts as exactly one undo step.
        _ = try history.group {
            try corp.store.write { tx in try tx.park(KPCompany(id: id, companyName: "The Monolith, Ltd", employees: [])) }
        }
        #expect(history.undoCount == stepsBefore + 1, "the group is one step")
        #expect(try corp.allCompanies().count == 3)
        #expect(try history.undo())
        #expect(try corp.allCompanies().count == 2)
        #expect(try history.redo())
        #expect(try corp.allCompanies().count == 3)
    }

    // dagerydoo/DLData DLUniqueIDGeneratorTest.testBaseUniqueID
    @Test func testBaseUniqueID() throws {
        let corp = try KPCorporateStore(seed: false)
        #expect(try corp.store.uniqueIDs.next() > 0)
    }

    // dagerydoo/DLData DLUniqueIDGeneratorTest.testUniqueIDWithCommits
    @Test func testUniqueIDWithCommits() throws {
        let corp = try KPCorporateStore(seed: false)
        let ids = corp.store.uniqueIDs
        let first = try ids.next()
        let second = try ids.next()
        #expect(first > 0 && second > 0)
        #expect(first != second)
        try corp.store.write { tx in try tx.park(KPCompany(id: "commit", companyName: "c", employees: [])) } // commitAllStores
        let third = try ids.next()
        #expect(third > 0)
        #expect(third != first && third != second)
    }

    // dagerydoo/DLData DLUniqueIDGeneratorTest.testManyUniqueIDs
    @Test func testManyUniqueIDs() throws {
        let corp = try KPCorporateStore(seed: false)
        var seen = Set<UInt64>()
        for _ in 0..<10_000 { seen.insert(try corp.store.uniqueIDs.next()) }
        #expect(seen.count == 10_000, "no duplicates")
    }

    // dagerydoo/DLData DLValueTransformerTest.testImageValueTransformer
    @Test func testImageValueTransformer() throws {
        let corp = try KPCorporateStore()
        var someone = try #require(try corp.allEmployees().last)
        #expect(someone.employeePhoto == nil)
        // DLData stores a UIImage through a value transformer as PNG data; Depot stores Data as is.
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        #expect(!png.isEmpty)
        someone.employeePhoto = png
        try corp.store.write { tx in try tx.park(someone) }
        let company = try #require(try corp.allCompanies().first { $0.employees.contains { $0.id == someone.id } })
        let same = try #require(company.employees.first { $0.employeeName == someone.employeeName })
        #expect(same.employeeName == someone.employeeName)
        #expect(same.id == someone.id)
        #expect(same.employeePhoto?.count == png.count)
        #expect(same.employeePhoto == png)
    }
}


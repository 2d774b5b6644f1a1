// DLData's names (Sources/DepotCore/Compatibility/DLData.swift): each forward is called by its
// DLData name and checked against the Depot call it forwards to, on the CorporateMayhem store
// of the DLData ports (DLDataPortFixture.swift: salaries 300; 100,000,000 and 0...3).

import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

@Suite("Compatibility: DLData")
struct DLDataCompatibilityTests {
    // MARK: Fetches

    @Test func fetchAllMatchingForwardsToFetchWhere() throws {
        let corp = try KPCorporateStore()
        let predicate = #Predicate<KPEmployee> { $0.employeeSalary > 2 }
        let sort = [SortDescriptor(\KPEmployee.employeeSalary)]
        try corp.store.read { tx throws in
            let byDLData = try tx.fetchAll(KPEmployee.self, matching: predicate, sortedBy: sort)
            #expect(byDLData == (try tx.fetch(KPEmployee.self, where: predicate, sortedBy: sort)))
            #expect(byDLData.map(\.employeeSalary) == [3, 300, 100_000_000])
        }
    }

    @Test func fetchOneMatchingForwardsToFetchOneWhere() throws {
        let corp = try KPCorporateStore()
        let predicate = #Predicate<KPEmployee> { $0.employeeSalary > 0 }
        let sort = [SortDescriptor(\KPEmployee.employeeSalary)]
        try corp.store.read { tx throws in
            let byDLData = try tx.fetchOne(KPEmployee.self, matching: predicate, sortedBy: sort)
            #expect(byDLData == (try tx.fetchOne(KPEmployee.self, where: predicate, sortedBy: sort)))
            #expect(byDLData?.employeeName == "Ann Lowe")
            #expect(try tx.fetchOne(KPEmployee.self, matching: #Predicate { $0.employeeSalary < 0 }) == nil)
        }
    }

    @Test func fetchCountMatchingForwardsToCountOfRequest() throws {
        let corp = try KPCorporateStore()
        let predicate = #Predicate<KPEmployee> { $0.employeeSalary > 2 }
        try corp.store.read { tx throws in
            #expect(try tx.fetchCount(KPEmployee.self, matching: predicate) == 3)
            #expect(try tx.fetchCount(KPEmployee.self, matching: predicate) == (try tx.count(FetchRequest(predicate: predicate))))
            #expect(try tx.fetchCount(KPEmployee.self, matching: nil) == 6, "no predicate: every employee")
        }
    }

    @Test func executeFetchRequestForwardsToFetch() throws {
        let corp = try KPCorporateStore()
        let request = FetchRequest<KPEmployee>().matching(\.employeeSalary, .greaterThan(KPCorporateStore.wellPaidFloor))
        try corp.store.read { tx throws in
            let byDLData = try tx.executeFetchRequest(request)
            #expect(byDLData == (try tx.fetch(request)))
            #expect(Set(byDLData.map(\.employeeSalary)) == [300, 100_000_000])
        }
    }

    // MARK: Fetch request templates

    @Test func fetchRequestNamedForwardsToFetchRequestNamed() throws {
        let corp = try KPCorporateStore()
        try corp.store.read { tx throws in
            let request = try tx.fetchRequestNamed("wellPaidEmployees", as: KPEmployee.self)
            let core = try tx.fetchRequest(named: "wellPaidEmployees", as: KPEmployee.self)
            #expect(try tx.fetch(request) == (try tx.fetch(core)))
            #expect(try tx.executeFetchRequest(request.limit(1)).count == 1, "adjustable before it runs")
            #expect(throws: DepotError.self) { try tx.fetchRequestNamed("noSuchRequest", as: KPEmployee.self) }
        }
    }

    @Test func executeFetchRequestNamedForwardsToFetchNamed() throws {
        let corp = try KPCorporateStore()
        let foo = try #require(try corp.company(named: "Foo Inc."))
        try corp.store.read { tx throws in
            let byDLData: [KPEmployee] = try tx.executeFetchRequestNamed("companyWellPaidEmployees",
                                                                         substitutionVariables: ["company": foo])
            #expect(byDLData == (try tx.fetch(named: "companyWellPaidEmployees", as: KPEmployee.self,
                                              substitutions: ["company": foo])))
            #expect(byDLData.map(\.employeeName) == ["Walter Boss"])
            #expect(try tx.executeFetchRequestNamed("wellPaidEmployees", as: KPEmployee.self).count == 2)
        }
    }

    @Test func countForRequestNamedForwardsToCountNamed() throws {
        let corp = try KPCorporateStore()
        let foo = try #require(try corp.company(named: "Foo Inc."))
        try corp.store.read { tx throws in
            #expect(try tx.countForRequestNamed("wellPaidEmployees", as: KPEmployee.self) == 2)
            #expect(try tx.countForRequestNamed("wellPaidEmployees", as: KPEmployee.self)
                    == (try tx.count(named: "wellPaidEmployees", as: KPEmployee.self)))
            #expect(try tx.countForRequestNamed("companyWellPaidEmployees", as: KPEmployee.self,
                                                substitutionVariables: ["company": foo]) == 1)
        }
    }

    // MARK: Deletion

    @Test func deleteEntityForwardsToDelete() throws {
        let corp = try KPCorporateStore()
        let walter = try #require(try corp.allEmployees().first { $0.employeeName == "Walter Boss" })
        try corp.store.write { tx throws in
            #expect(try tx.deleteEntity(walter))
            #expect(try tx.retrieve(KPEmployee.self, id: walter.id) == nil)
            #expect(try tx.deleteEntity(walter) == false, "gone: as Depot's delete, false")
            let object = DynamicObject(entity: "Office", id: "o1", fields: [("floor", .int(3))])
            try tx.park(object)
            #expect(try tx.deleteEntity(object))
            #expect(try tx.retrieve(dynamic: "Office", id: "o1") == nil)
        }
        #expect(try corp.allEmployees().count == 5)
    }

    // MARK: Store management

    @Test func seedDataStoreForwardsToSeed() throws {
        let corp = try KPCorporateStore(seed: false)
        #expect(try corp.allCompanies().isEmpty)
        let summary = try corp.store.seedDataStore(corp.seedURL)
        #expect(summary.documentsPerCollection["Company"] == 2)
        #expect(try corp.allCompanies().count == 2)
        #expect(try corp.allEmployees().count == 6)
    }

    @Test func purgeDataStoreForwardsToClearAlias() throws {
        let corp = try KPCorporateStore()
        #expect(try corp.store.purgeDataStore() == 8)
        #expect(try corp.allCompanies().isEmpty && corp.allEmployees().isEmpty)
        #expect(try corp.store.read { try $0.collections() }.contains("Employee"), "collections stay known, as clearAlias keeps them")
        try corp.seedDataStore()
        #expect(try corp.allEmployees().count == 6, "re-seeded after the purge")
    }

    @Test func commitForwardsToSave() throws {
        let corp = try KPCorporateStore(seed: false)
        corp.store.autosave = false
        try corp.store.park(KPEmployee(id: "e1", employeeName: "Eve", employeeSalary: 5))
        #expect(corp.store.hasUnsavedChanges)
        try corp.store.commit()
        #expect(!corp.store.hasUnsavedChanges)
        #expect(try corp.store.read { try $0.retrieve(KPEmployee.self, id: "e1") }?.employeeName == "Eve", "committed")
        corp.store.autosave = true
    }

    @Test func undoRedoAndGroupsForwardToUndoHistory() throws {
        let corp = try KPCorporateStore(seed: false)
        let store = corp.store
        #expect(try store.undo() == false, "undo not enabled: nothing happens")
        store.beginUndoGroup() // no history: nothing to group
        store.endUndoGroup()
        let history = store.enableUndo()
        store.beginUndoGroup()
        try store.write { try $0.park(KPEmployee(id: "e1", employeeName: "Eve", employeeSalary: 5)) }
        try store.write { try $0.park(KPEmployee(id: "e2", employeeName: "Max", employeeSalary: 6)) }
        store.endUndoGroup()
        #expect(history.undoCount == 1, "the two writes are one group")
        #expect(try store.undo())
        #expect(try corp.allEmployees().isEmpty, "the whole group undone")
        #expect(history.canRedo)
        #expect(try store.redo())
        #expect(try corp.allEmployees().count == 2)
        #expect(try store.redo() == false, "nothing left to redo")
    }

    @Test func generateUniqueIDForwardsToNext() throws {
        let corp = try KPCorporateStore(seed: false)
        let ids = corp.store.uniqueIDs
        let first = try ids.generateUniqueID()
        let second = try ids.next()
        let third = try ids.generateUniqueID()
        #expect(first < second && second < third, "one counter: increasing, never reused")
    }
}

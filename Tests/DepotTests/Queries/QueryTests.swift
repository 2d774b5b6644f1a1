import Foundation
import Testing
import DepotTestSupport
@testable import Depot
@testable import DepotCore
import DepotLMDB

struct Staff: Document, Equatable {
    static var collection: String { "Staff" }
    var id: Int
    var name: String
    var email: String
    var salary: Int
    var company: String
    static var indexes: [DocumentIndex<Staff>] {
        [.init(\.salary), .init(\.email, unique: true), .init(\.name), .init(\.company)]
    }
}

/// The same collection seen without indexes (as before an index was declared).
struct PlainStaff: Document {
    static var collection: String { "Staff" }
    var id: Int
    var name: String
    var email: String
    var salary: Int
    var company: String
}

func staff(_ i: Int) -> Staff {
    Staff(id: i, name: ["Ada", "Alan", "Grace", "Edsger", "Barbara"][i % 5] + " \(i)", email: "p\(i)@example.com",
          salary: (i * 37) % 1000, company: i % 3 == 0 ? "Foo Inc." : "Bar Ltd.")
}

@Suite("Queries")
struct QueryTests {
    let folder = TemporaryFolder()
    let store: Store

    init() throws {
        store = try Store(path: folder.path)
        try store.write { tx in for i in 0..<300 { try tx.park(staff(i)) } }
    }

    @Test func predicateSortLimitOffset() throws {
        let all = (0..<300).map(staff)
        let expected = all.filter { $0.salary > 500 && $0.name.hasPrefix("A") }.sorted { ($0.salary, $0.id) < ($1.salary, $1.id) }
        let got = try store.read { tx in
            try tx.fetch(Staff.self, where: #Predicate { $0.salary > 500 && $0.name.starts(with: "A") },
                         sortedBy: [SortDescriptor(\.salary), SortDescriptor(\.id)])
        }
        #expect(got == expected)
        let page = try store.read { tx in
            try tx.fetch(Staff.self, where: #Predicate { $0.salary > 500 && $0.name.starts(with: "A") },
                         sortedBy: [SortDescriptor(\.salary), SortDescriptor(\.id)], limit: 5, offset: 3)
        }
        #expect(page == Array(expected.dropFirst(3).prefix(5)))
        let top = try store.read { tx in try tx.fetchOne(Staff.self, sortedBy: [SortDescriptor(\.salary, order: .reverse), SortDescriptor(\.id)]) }
        #expect(top == all.sorted { ($0.salary, -$0.id) > ($1.salary, -$1.id) }.first)
        let closure = try store.read { tx in try tx.fetch(Staff.self) { $0.id % 100 == 0 } }
        #expect(closure.map(\.id) == [0, 100, 200])
        let counted = try store.read { tx in try tx.count(FetchRequest<Staff>(predicate: #Predicate { $0.company == "Foo Inc." })) }
        #expect(counted == 100)
    }

    /// A negative limit returned nothing and a negative offset counted as 0, without a word.
    @Test func aNegativeLimitOrOffsetIsAnInvalidQuery() throws {
        try store.read { tx throws in
            for request in [FetchRequest<Staff>().limit(-1), FetchRequest<Staff>().offset(-5)] {
                let error = #expect(throws: DepotError.self) { _ = try tx.execute(request) }
                #expect(error?.code == .invalidQuery, "\(String(describing: error))")
            }
            #expect(try tx.execute(FetchRequest<Staff>().limit(0)).documents.isEmpty)
        }
    }

    @Test func limitStreamsWithoutReadingEverything() throws {
        let result = try store.read { tx in try tx.execute(FetchRequest<Staff>().limit(7)) }
        #expect(result.documents.map(\.id) == Array(0..<7))
        #expect(result.plan.rowsExamined == 7)
        #expect(!result.plan.usedIndex)
    }

    @Test func equalityRangeAndPrefixUseIndexes() throws {
        let all = (0..<300).map(staff)
        try store.read { tx throws in
            let eq = try tx.execute(FetchRequest<Staff>().matching(\.salary, .equalTo(333)))
            #expect(eq.plan.usedIndex)
            #expect(eq.documents.map(\.id) == all.filter { $0.salary == 333 }.map(\.id))
            #expect(eq.plan.rowsExamined == eq.documents.count)

            let range = try tx.execute(FetchRequest<Staff>().matching(\.salary, .atLeast(990)).sorted(by: SortDescriptor(\.id)))
            #expect(range.plan.usedIndex)
            #expect(range.documents.map(\.id) == all.filter { $0.salary >= 990 }.map(\.id))
            #expect(range.plan.rowsExamined < 20)

            let below = try tx.execute(FetchRequest<Staff>().matching(\.salary, .lessThan(5)).sorted(by: SortDescriptor(\.id)))
            #expect(below.documents.map(\.id) == all.filter { $0.salary < 5 }.map(\.id))
            #expect(below.plan.usedIndex)

            let prefix = try tx.execute(FetchRequest<Staff>().matching(\.name, .hasPrefix("Grace")).sorted(by: SortDescriptor(\.id)))
            #expect(prefix.plan.usedIndex)
            #expect(prefix.documents.map(\.id) == all.filter { $0.name.hasPrefix("Grace") }.map(\.id))
            #expect(prefix.plan.rowsExamined == 60)

            let unique = try tx.execute(FetchRequest<Staff>().matching(\.email, .equalTo("p42@example.com")))
            #expect(unique.documents.map(\.id) == [42])
            if case .index(let name, _) = unique.plan.strategy { #expect(name == "email") } else { Issue.record("expected the email index") }

            let scan = try tx.execute(FetchRequest<Staff>().matching(\.salary, .notEqualTo(333)))
            #expect(!scan.plan.usedIndex)
            #expect(scan.plan.rowsExamined == 300)
        }
    }

    @Test func indexesFollowUpdatesAndDeletes() throws {
        try store.write { tx in
            var s = staff(1)
            s.salary = 5000
            try tx.park(s)
            _ = try tx.delete(Staff.self, id: 2)
        }
        try store.read { tx throws in
            #expect(try tx.fetch(FetchRequest<Staff>().matching(\.salary, .equalTo(5000))).map(\.id) == [1])
            #expect(try tx.fetch(FetchRequest<Staff>().matching(\.salary, .equalTo(staff(1).salary))).isEmpty)
            #expect(try tx.fetch(FetchRequest<Staff>().matching(\.email, .equalTo("p2@example.com"))).isEmpty)
        }
        // The email of a deleted document is free again.
        try store.write { tx in try tx.park(Staff(id: 999, name: "New", email: "p2@example.com", salary: 1, company: "X")) }
    }

    @Test func uniqueViolationIsTypedAndRollsBack() throws {
        let error = #expect(throws: DepotError.self) {
            try store.write { tx in
                try tx.park(Staff(id: 1000, name: "Dup", email: "fresh@example.com", salary: 1, company: "X"))
                try tx.park(Staff(id: 1001, name: "Dup", email: "p7@example.com", salary: 1, company: "X"))
            }
        }
        #expect(error == .uniqueIndexViolation(alias: "default", collection: "Staff", index: "email", id: "1001", conflictingID: "7"))
        #expect(!(error?.description.contains("p7@example.com") ?? true), "messages never repeat stored values")
        #expect(try store.count(Staff.self) == 300)
        #expect(try store.read { try $0.fetch(FetchRequest<Staff>().matching(\.email, .equalTo("fresh@example.com"))) }.isEmpty)
    }

    @Test func addingAnIndexToExistingDataBuildsIt() throws {
        let other = TemporaryFolder()
        let plainStore = try Store(path: other.path)
        try plainStore.write { tx in
            for i in 0..<50 {
                let s = staff(i)
                try tx.park(PlainStaff(id: s.id, name: s.name, email: s.email, salary: s.salary, company: s.company))
            }
        }
        // Read-only: the index is not built yet, so the query scans (and is still right).
        let before = try plainStore.read { try $0.execute(FetchRequest<Staff>().matching(\.salary, .equalTo(staff(3).salary))) }
        #expect(!before.plan.usedIndex)
        #expect(before.documents.map(\.id) == [3])
        // The first write that touches the type builds it.
        try plainStore.write { tx in try tx.park(staff(50)) }
        let after = try plainStore.read { try $0.execute(FetchRequest<Staff>().matching(\.salary, .equalTo(staff(3).salary))) }
        #expect(after.plan.usedIndex)
        #expect(after.documents.map(\.id) == (0...50).filter { staff($0).salary == staff(3).salary })
    }

    @Test func namedFetchRequests() throws {
        store.registerFetchRequest("wellPaid", for: Staff.self) { _ in
            FetchRequest<Staff>().matching(\.salary, .greaterThan(900))
        }
        store.registerFetchRequest("companyWellPaid", for: Staff.self, variables: ["company": .string, "floor": .int]) { vars in
            FetchRequest<Staff>()
                .matching(\.company, .equalTo(try vars["company", as: String.self]))
                .matching(\.salary, .greaterThan(try vars["floor", as: Int.self]))
        }
        let all = (0..<300).map(staff)
        try store.read { tx throws in
            #expect(try tx.count(named: "wellPaid", as: Staff.self) == all.filter { $0.salary > 900 }.count)
            let foo = try tx.fetch(named: "companyWellPaid", as: Staff.self, substitutions: ["company": "Foo Inc.", "floor": 800])
            #expect(Set(foo.map(\.id)) == Set(all.filter { $0.company == "Foo Inc." && $0.salary > 800 }.map(\.id)))
            let adjusted = try tx.fetchRequest(named: "wellPaid", as: Staff.self).sorted(by: SortDescriptor(\.salary, order: .reverse)).limit(2)
            #expect(try tx.fetch(adjusted).map(\.salary) == Array(all.map(\.salary).sorted(by: >).prefix(2)))
            #expect(throws: DepotError.unknownFetchRequest("nope")) { _ = try tx.fetch(named: "nope", as: Staff.self) }
            #expect(throws: DepotError.missingSubstitution(request: "companyWellPaid", variable: "company")) {
                _ = try tx.fetch(named: "companyWellPaid", as: Staff.self, substitutions: ["floor": 1])
            }
            #expect(throws: DepotError.mistypedSubstitution(request: "companyWellPaid", variable: "floor", expected: "int", actual: "String")) {
                _ = try tx.fetch(named: "companyWellPaid", as: Staff.self, substitutions: ["company": "Foo Inc.", "floor": "800"])
            }
            #expect(throws: DepotError.self) { _ = try tx.fetch(named: "wellPaid", as: PlainStaff.self) }
        }
        #expect(store.fetchRequestNames == ["companyWellPaid", "wellPaid"])
    }
}

/// A member whose optional email is unique (nil values are exempt from uniqueness).
struct OptionalEmailMember: Document, Equatable {
    var id: Int
    var email: String?
    static var indexes: [DocumentIndex<OptionalEmailMember>] { [.init(\.email, unique: true)] }
}

@Suite("Queries on nil through a unique index")
struct UniqueIndexNilQueryTests {
    let folder = TemporaryFolder()

    /// A unique index holds no entry for nil, yet the planner chose it for a condition on nil:
    /// such queries found nothing (typed, schemaless, counts). A scan serves them now.
    @Test func aConditionOnNilIsNotServedByAUniqueIndex() throws {
        let store = try Store(path: folder.path)
        try store.write { tx in
            for (id, email) in [(1, nil), (2, "a@x"), (3, nil), (4, "b@x")] as [(Int, String?)] {
                try tx.park(OptionalEmailMember(id: id, email: email))
            }
        }
        try store.read { tx in
            let request = FetchRequest<OptionalEmailMember>().matching(\.email, .equalTo(nil))
            let found = try tx.execute(request)
            #expect(found.map(\.id).sorted() == [1, 3])
            #expect(!found.plan.usedIndex, "\(found.plan)")
            #expect(try tx.count(request) == 2)
            let schemaless = try tx.query(collection: OptionalEmailMember.collection,
                                          conditions: [FieldCondition(field: "email", op: .equal, value: .null)])
            #expect(schemaless.documents.count == 2)
            // A non-nil value still uses the index.
            let one = try tx.execute(FetchRequest<OptionalEmailMember>().matching(\.email, .equalTo("a@x")))
            #expect(one.map(\.id) == [2] && one.plan.usedIndex)
        }
    }
}

struct Task2: Syncable, Equatable {
    var id: String
    var title: String
    var syncStatus: SyncStatus = .undetermined
}

@Suite("Sync status and unique IDs")
struct SyncAndIDTests {
    let folder = TemporaryFolder()
    let store: Store
    init() throws { store = try Store(path: folder.path) }

    /// GarageStorage's rule: a Syncable's own status is stored as given (also `.undetermined`);
    /// other types are stored as not synced.
    @Test func parkingStoresTheObjectsOwnStatusAndIndexesIt() throws {
        try store.write { tx in
            for i in 0..<10 { try tx.park(Task2(id: "t\(i)", title: "T\(i)")) }
            try tx.park(sampleEmployee("e1"))
        }
        try store.read { tx throws in
            #expect(try tx.syncStatus(of: Task2.self, id: "t1") == .undetermined)
            #expect(try tx.syncStatus(of: Employee.self, id: "e1") == .notSynced)
            #expect(try tx.retrieve(Task2.self, id: "t1")?.syncStatus == .undetermined)
            #expect(try tx.syncStatus(of: Task2.self, id: "missing") == nil)
        }
        let missing = try store.write { tx in try tx.setSyncStatus(.synced, for: Task2.self, ids: ["t1", "t2", "ghost"]) }
        #expect(missing == ["ghost"])
        try store.read { tx throws in
            #expect(try tx.retrieve(Task2.self, withSyncStatus: .synced).map(\.id) == ["t1", "t2"])
            #expect(try tx.retrieve(Task2.self, withSyncStatus: .undetermined).count == 8)
            #expect(try tx.retrieve(Task2.self, id: "t2")?.syncStatus == .synced)
            #expect(try tx.retrieve(Employee.self, withSyncStatus: .notSynced).map(\.id) == ["e1"])
            let all = try tx.documents(withSyncStatus: .synced)
            #expect(all.map(\.collection) == ["Task2", "Task2"])
            #expect(all.map(\.id) == [.string("t1"), .string("t2")])
        }
        // Parking again marks it notSynced; a Syncable keeps a status it sets itself.
        try store.write { tx in
            try tx.park(Task2(id: "t1", title: "changed"))
            try tx.park(Task2(id: "t3", title: "sent", syncStatus: .syncing))
            _ = try tx.delete(Task2.self, id: "t2")
        }
        try store.read { tx throws in
            #expect(try tx.retrieve(Task2.self, withSyncStatus: .synced).isEmpty)
            #expect(try tx.retrieve(Task2.self, withSyncStatus: .syncing).map(\.id) == ["t3"])
            #expect(try tx.retrieve(Employee.self, id: "e1") != nil, "status changes keep content")
        }
    }

    @Test func uniqueIDsNeverRepeat() async throws {
        let generator = store.uniqueIDs
        let first = try generator.next()
        let second = try generator.next()
        #expect(second > first)
        let inTxn = try await store.write { tx in try tx.nextUniqueID() }
        #expect(inTxn > second)
        // Many threads at once: all distinct.
        let ids = try await withThrowingTaskGroup(of: [UInt64].self) { group in
            for _ in 0..<8 { group.addTask { try (0..<500).map { _ in try generator.next() } } }
            var all: [UInt64] = []
            for try await chunk in group { all += chunk }
            return all
        }
        #expect(Set(ids).count == 4000)
        #expect(!ids.contains(first) && !ids.contains(inTxn))
        #expect(UniqueIDs.string(for: 42) == "00000000000000000042")
        #expect(try generator.nextString().count == 20)
    }

    @Test func uniqueIDsSurviveRestarts() throws {
        let path = folder.sub("restart")
        var seen: Set<UInt64> = []
        var last: UInt64 = 0
        for _ in 0..<3 {
            let s = try Store(path: path)
            for _ in 0..<10 {
                let id = try s.write { tx in try tx.nextUniqueID() }
                #expect(id > last)
                last = id
                #expect(seen.insert(id).inserted)
            }
            try s.environment.close()
        }
    }
}

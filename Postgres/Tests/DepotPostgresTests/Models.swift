import Depot
import Foundation

// Copies of the root package's test models (Tests/DepotTests) used by the shared driver checks.

struct Department: Document, Equatable {
    var id: String
    var name: String
}

struct Address: Codable, Equatable {
    var street: String
    var zip: String
}

struct Employee: Document, Equatable {
    var id: String
    var name: String
    var salary: Int
    var address: Address
    var department: Department?
    var mentors: [Department] = []
    var byRole: [String: Department] = [:]
}

struct Counter: Document, Equatable {
    var id: Int64
    var value: Int
}

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

struct Task2: Syncable, Equatable {
    var id: String
    var title: String
    var syncStatus: SyncStatus = .undetermined
}

func sampleEmployee(_ id: String, salary: Int = 100, department: Department? = nil) -> Employee {
    Employee(id: id, name: "Employee \(id)", salary: salary, address: Address(street: "Street \(id)", zip: "0\(id)"), department: department)
}

func staff(_ i: Int) -> Staff {
    Staff(id: i, name: ["Ada", "Alan", "Grace", "Edsger", "Barbara"][i % 5] + " \(i)", email: "p\(i)@example.com",
          salary: (i * 37) % 1000, company: i % 3 == 0 ? "Foo Inc." : "Bar Ltd.")
}

final class RecordingObserver: StoreObserver, @unchecked Sendable {
    // @unchecked Sendable: `_sets` is guarded by `lock`.
    private let lock = NSLock()
    private var _sets: [ChangeSet] = []
    var sets: [ChangeSet] { lock.withLock { _sets } }
    func store(_ store: Store, didCommit changes: ChangeSet) { lock.withLock { _sets.append(changes) } }
}

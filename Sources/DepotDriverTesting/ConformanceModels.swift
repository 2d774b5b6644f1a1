import DepotCore
import Foundation

// The documents the conformance suite stores (collection names prefixed so that they cannot
// clash with an application's).

struct ConformanceDepartment: Document, Equatable {
    static var collection: String { "conformance.Department" }
    var id: String
    var name: String
}

struct ConformanceEmployee: Document, Equatable {
    static var collection: String { "conformance.Employee" }
    var id: String
    var name: String
    var salary: Int
    var department: ConformanceDepartment?
}

struct ConformanceCounter: Document, Equatable {
    static var collection: String { "conformance.Counter" }
    var id: Int64
    var value: Int
}

struct ConformanceStaff: Document, Equatable {
    static var collection: String { "conformance.Staff" }
    var id: Int
    var name: String
    var email: String
    var salary: Int
    static var indexes: [DocumentIndex<ConformanceStaff>] { [.init(\.salary), .init(\.email, unique: true), .init(\.name)] }

    static func make(_ i: Int) -> ConformanceStaff {
        ConformanceStaff(id: i, name: ["Ada", "Alan", "Grace", "Edsger", "Barbara"][i % 5] + " \(i)",
                         email: "p\(i)@example.com", salary: (i * 37) % 100)
    }
}

struct ConformanceTask: Syncable, Equatable {
    static var collection: String { "conformance.Task" }
    var id: String
    var title: String
    var syncStatus: SyncStatus = .undetermined
}

/// Records change sets from any thread.
final class ConformanceObserver: StoreObserver, @unchecked Sendable {
    // @unchecked Sendable: `sets` is only touched with `lock` held.
    private let lock = NSLock()
    private var recorded: [ChangeSet] = []
    var sets: [ChangeSet] { lock.withLock { recorded } }
    func store(_ store: Store, didCommit changes: ChangeSet) { lock.withLock { recorded.append(changes) } }
}

#if Postgres
import Depot
import Foundation

/// The document the replica test writes on the primary and reads on the standby (the driver
/// suite's own models live in `DepotDriverTesting`).
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

func staff(_ i: Int) -> Staff {
    Staff(id: i, name: ["Ada", "Alan", "Grace", "Edsger", "Barbara"][i % 5] + " \(i)", email: "p\(i)@example.com",
          salary: (i * 37) % 1000, company: i % 3 == 0 ? "Foo Inc." : "Bar Ltd.")
}
#endif

// Context for DocC snippets marked `<!-- snippet: context Employees -->` (scripts/check-snippets.sh):
// the types and values the articles' fragments take for granted.
import Depot
import Foundation

struct Company: Document {
    var id: String
    var name: String
}

struct Employee: Document {
    var id: Int
    var name: String
    var salary: Int
    var email: String
    var company: Reference<Company>
    static var indexes: [DocumentIndex<Employee>] { [.init(\.salary), .init(\.name), .init(\.company)] }
}

let store = try Store(path: "./data")
let acme = Company(id: "acme", name: "Acme")
let ada = Employee(id: 1, name: "Ada", salary: 120, email: "ada@example.com", company: Reference(acme))
let grace = Employee(id: 2, name: "Grace", salary: 130, email: "grace@example.com", company: Reference(acme))

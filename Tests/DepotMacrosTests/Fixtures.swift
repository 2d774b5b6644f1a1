#if Macros
import Depot
import DepotMacros
import Foundation

/// The 5-field document of the benchmarks, with generated code.
@BinaryCodable
struct Person: Document, Equatable {
    var id: String
    var name: String
    var age: Int
    var email: String?
    var tags: [String]
}

/// The same fields through `Codable` only, in the same collection.
struct PlainPerson: Document, Equatable {
    static var collection: String { "Person" }
    var id: String
    var name: String
    var age: Int
    var email: String?
    var tags: [String]
}

/// A struct without generated code, stored inline.
struct Address: Codable, Equatable {
    var street: String
    var zip: Int?
}

/// Every scalar the writer handles directly, their optionals, and generic fields.
@BinaryCodable
public struct Everything: Document, Equatable {
    public var id: UUID
    var flag: Bool
    var small: Int8
    var medium: Int32?
    var big: Int64
    var unsigned: UInt
    var byte: UInt8?
    var ratio: Float
    var score: Double?
    var when: Date
    var other: UUID?
    var address: Address
    var previous: [Address]
    var counts: [String: Int]
    var blob: Data
    var site: URL?
    var nested: [[Int]]
    var maybe: Optional<String>
}

/// Renamed keys and a property left out of `CodingKeys`.
@BinaryCodable
struct Renamed: Document, Equatable {
    var id: String
    var fullName: String
    var nickName: String?
    var cached: Int = 0

    enum CodingKeys: String, CodingKey {
        case id
        case fullName = "full_name"
        case nickName = "nick"
    }
}

/// A referenced document without generated code.
struct Department: Document, Equatable {
    var id: String
    var title: String
}

/// Eager and lazy references from a type with generated code.
@BinaryCodable
struct Employee: Document, Equatable {
    var id: Int
    var name: String
    var department: Department?
    var mentor: Reference<Employee>?
    var colleagues: [Reference<Employee>]
}

/// `Employee` through `Codable` only.
struct PlainEmployee: Document, Equatable {
    static var collection: String { "Employee" }
    var id: Int
    var name: String
    var department: Department?
    var mentor: Reference<Employee>?
    var colleagues: [Reference<Employee>]
}

/// A field added later, with a default for older records.
@BinaryCodable
struct Rated: Document, Equatable {
    static var fieldDefaults: [String: DocumentValue] { ["rating": .int(3)] }
    var id: String
    var title: String
    var rating: Int
}

/// `Rated` as first shipped, without `rating`.
struct OldRated: Document {
    static var collection: String { "Rated" }
    var id: String
    var title: String
}

/// A fresh folder removed when released.
final class Scratch {
    let path = NSTemporaryDirectory() + "depot-macros-\(UUID().uuidString)"
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A generic document (its key table is computed: generic types have no static storage).
@BinaryCodable
struct Box<Content: Codable & Equatable & Sendable>: Document, Equatable {
    var id: String
    var content: Content
    var count: Int?
}

/// An eager reference to a document that has generated code too.
@BinaryCodable
struct Team: Document, Equatable {
    var id: String
    var lead: Person
    var members: [Person]
}
#endif

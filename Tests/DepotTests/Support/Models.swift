import DepotLMDB
import DepotTestSupport
import Foundation
@testable import Depot
@testable import DepotCore

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

struct Small: Document, Equatable {
    var id: UInt8
    var label: String
}

struct Tagged: Document, Equatable {
    static var collection: String { "tagged-things" }
    var id: UUID
    var tags: [String]
}

struct Note: Codable, Equatable {
    var text: String
    var stars: Int
}

/// Every Codable shape the format must carry.
struct Everything: Document, Equatable {
    enum Kind: Codable, Equatable { case plain, withValue(Int), labeled(name: String, score: Double) }
    var id: String
    var int8: Int8 = -8, int16: Int16 = -16, int32: Int32 = -32, int64: Int64 = .min
    var uint8: UInt8 = 255, uint16: UInt16 = 65535, uint32: UInt32 = .max, uint64: UInt64 = .max
    var float: Float = 1.5, double: Double = -0.000123, infinite: Double = .infinity
    var bool = true
    var text = "héllo 👩‍💻 e\u{301}"
    var empty = ""
    var optionalSome: Int? = 3
    var optionalNone: Int? = nil
    var arrayOfOptionals: [Int?] = [1, nil, 3]
    var nested: [[String]] = [["a"], [], ["b", "c"]]
    var stringDict: [String: Int] = ["one": 1, "two": 2]
    var intDict: [Int: String] = [1: "one", -5: "minus five"]
    var date = Date(timeIntervalSinceReferenceDate: 123_456.789)
    var data = Data([0, 1, 2, 255])
    var uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    var url = URL(string: "https://example.com/a?b=c")!
    var decimal = Decimal(string: "12345.6789")!
    var kinds: [Kind] = [.plain, .withValue(7), .labeled(name: "x", score: 2.5)]
    var address = Address(street: "Main", zip: "12345")
}

class Animal: Codable {
    var name: String
    init(name: String) { self.name = name }
    enum CodingKeys: String, CodingKey { case name }
}

final class Dog: Animal, @unchecked Sendable {
    var breed: String
    init(name: String, breed: String) {
        self.breed = breed
        super.init(name: name)
    }
    enum DogKeys: String, CodingKey { case breed }
    required init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: DogKeys.self)
        breed = try c.decode(String.self, forKey: .breed)
        try super.init(from: c.superDecoder())
    }
    override func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: DogKeys.self)
        try c.encode(breed, forKey: .breed)
        try super.encode(to: c.superEncoder())
    }
}

struct Kennel: Document {
    var id: Int
    var dog: Dog
}

/// Flips the bits `mask` of the byte `fromEnd` bytes before the end of the stored record of
/// `id` in `collection` (default alias), through the raw binding: a damaged record.
func damageStoredRecord(_ store: Store, collection: String, id: String, fromEnd: Int, mask: UInt8 = 0x01) throws {
    try store.environment.write { txn in
        let db = try txn.openDatabase("depot.doc/default/\(collection)", key: StringCodec.self, value: BytesCodec.self, create: false)
        guard var bytes = try txn.get(id, in: db), bytes.count >= fromEnd else {
            throw DepotError.storageInconsistent("no stored record \(collection)/\(id) to damage")
        }
        bytes[bytes.count - fromEnd] ^= mask
        try txn.put(bytes, forKey: id, in: db)
    }
}

extension DocumentTransaction {
    /// The LMDB transaction under this one without the public escape hatch's refusal of Depot's
    /// own databases: for tests that damage stored records on purpose.
    var rawLMDBForTests: Transaction? { context.baseTransaction as? Transaction }
}

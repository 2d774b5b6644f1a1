#if !DEPOT_COMPARE_NO_DOCUMENTS
import Depot
import DepotMacros
#endif
import DepotLMDB
import Foundation

#if !DEPOT_COMPARE_NO_DOCUMENTS
extension Person: Identifiable, Document {}

/// A document type whose `age` the get workloads sum.
protocol AgeCarrying { var age: Int { get } }
extension Person: AgeCarrying {}
extension CodablePerson: AgeCarrying {}
extension IndexedPerson: AgeCarrying {}

/// The same document with a unique index on `email`, for the indexed-query workload and the
/// insert with one unique index (kept apart so that the insert workload measures plain documents).
@BinaryCodable
struct IndexedPerson: Document {
    var id: String
    var name: String
    var age: Int
    var email: String
    var tags: [String]
    static var indexes: [DocumentIndex<IndexedPerson>] { [.init(\.email, unique: true)] }
    init(_ p: Person) { id = p.id; name = p.name; age = p.age; email = p.email; tags = p.tags }
}
#endif

/// The Depot document layer (module `Depot`) in the comparison: the "documents" column.
///
/// Contract, for every function: do the work, return the elapsed nanoseconds of the measured part
/// (use `now()`, the monotonic clock of the C baseline), and add something derived from every
/// result into `checksum` so that nothing can be optimized away. `folder` is a fresh, not yet
/// existing folder per round (the runner deletes it afterwards); the store opens there with
/// durable defaults.
enum DocumentWorkloads {
    /// Document insert: every person as a document in ONE transaction, begin to durable commit.
    static func insert<D: Document>(_ people: [D], folder: String) throws -> UInt64? {
        #if DEPOT_COMPARE_NO_DOCUMENTS
        return nil
        #else
        let store = try Store(path: folder)
        let start = now()
        try store.write { tx in for p in people { try tx.park(p) } }
        return now() - start
        #endif
    }

    #if !DEPOT_COMPARE_NO_DOCUMENTS
    /// `doc_write_txn`: the store opened now; the measured part parks each document in a
    /// write transaction of its own (clock read before and after, as every workload).
    static func insertEach<D: Document>(_ people: [D], folder: String) throws -> () throws -> Void {
        let store = try Store(path: folder)
        return {
            let start = now()
            for p in people { try store.write { tx in try tx.park(p) } }
            _ = now() - start
        }
    }
    #endif

    /// Document get by ID in random order, one read transaction, decoded.
    static func get(ids: [String], folder: String, checksum: inout Int) throws -> UInt64? {
        try get(Person.self, ids: ids, folder: folder, checksum: &checksum)
    }

    /// Document get by ID of documents of type `type` (`age` summed into `checksum`).
    static func get<D: Document & AgeCarrying>(_ type: D.Type, ids: [String], folder: String, checksum: inout Int) throws -> UInt64?
        where D.ID == String {
        #if DEPOT_COMPARE_NO_DOCUMENTS
        return nil
        #else
        let store = try Store(path: folder)
        var sum = 0
        // Untimed pass so that page faults of the fresh map are not counted (as for the others).
        try store.read { tx in for id in ids { sum &+= try tx.retrieve(D.self, id: id)?.age ?? 0 } }
        sum = 0
        let start = now()
        try store.read { tx in
            for id in ids { sum &+= try tx.retrieve(D.self, id: id)?.age ?? 0 }
        }
        let elapsed = now() - start
        checksum &+= sum
        return elapsed
        #endif
    }

    #if !DEPOT_COMPARE_NO_DOCUMENTS
    /// Every document of type `type` in key order, decoded, in one read transaction (after an
    /// untimed pass that faults the map in); `count` documents expected.
    static func scan<D: Document & AgeCarrying>(_ type: D.Type, count: Int, folder: String, checksum: inout UInt64) throws -> UInt64 {
        let store = try Store(path: folder)
        var sum = 0
        try store.read { tx in try tx.forEach(D.self) { sum &+= $0.age; return true } }
        sum = 0
        var seen = 0
        let start = now()
        try store.read { tx in
            try tx.forEach(D.self) { sum &+= $0.age; seen += 1; return true }
        }
        let elapsed = now() - start
        guard seen == count else { throw BenchError("scan saw \(seen) of \(count) documents") }
        checksum &+= UInt64(bitPattern: Int64(sum))
        return elapsed
    }

    /// Every person in key order as a view into its stored bytes (`forEachView`), reading one
    /// field (`age`) of each, in one read transaction (after an untimed pass); `count` expected.
    static func scanViews(count: Int, folder: String, checksum: inout UInt64) throws -> UInt64 {
        let store = try Store(path: folder)
        var sum = 0
        try store.read { tx in try tx.forEachView(Person.self) { sum &+= try $0.age; return true } }
        sum = 0
        var seen = 0
        let start = now()
        try store.read { tx in
            try tx.forEachView(Person.self) { sum &+= try $0.age; seen += 1; return true }
        }
        let elapsed = now() - start
        guard seen == count else { throw BenchError("view scan saw \(seen) of \(count) documents") }
        checksum &+= UInt64(bitPattern: Int64(sum))
        return elapsed
    }
    #endif

    /// One field (`age`) of each document by ID in random order, one read transaction, through
    /// a projection: the record is checked and walked in place, only the field is decoded.
    static func getField(ids: [String], folder: String, checksum: inout Int) throws -> UInt64? {
        #if DEPOT_COMPARE_NO_DOCUMENTS
        return nil
        #else
        let store = try Store(path: folder)
        var sum = 0
        try store.read { tx in for id in ids { sum &+= try tx.field(\Person.age, of: id) ?? 0 } } // fault the map in
        sum = 0
        let start = now()
        try store.read { tx in
            for id in ids { sum &+= try tx.field(\Person.age, of: id) ?? 0 }
        }
        let elapsed = now() - start
        checksum &+= sum
        return elapsed
        #endif
    }

    /// Codec: encode + decode through the generated binary codec (`@BinaryCodable`).
    static func codecRoundTrip(_ people: [Person], iterations: Int, checksum: inout Int) throws -> UInt64? {
        #if DEPOT_COMPARE_NO_DOCUMENTS
        return nil
        #else
        let encoder = BinaryEncoder()
        let decoder = BinaryDecoder()
        var buffer: [UInt8] = []
        buffer.reserveCapacity(256)
        var sum = 0
        let start = now()
        for i in 0..<iterations {
            buffer.removeAll(keepingCapacity: true)
            try encoder.encodeGenerated(people[i % people.count], into: &buffer)
            sum &+= try decoder.decodeGenerated(Person.self, from: buffer).age
        }
        let elapsed = now() - start
        checksum &+= sum
        return elapsed
        #endif
    }

    #if !DEPOT_COMPARE_NO_DOCUMENTS
    /// Codec: encode + decode through the `Codable` conformance (no macro): what a user writes
    /// first. Into one reused buffer, as ``codecRoundTrip(_:iterations:checksum:)`` does with the
    /// generated codec: the two differ only in the codec.
    static func codableRoundTrip(_ people: [CodablePerson], iterations: Int, checksum: inout Int) throws -> UInt64? {
        let encoder = BinaryEncoder()
        let decoder = BinaryDecoder()
        var buffer: [UInt8] = []
        buffer.reserveCapacity(256)
        var sum = 0
        let start = now()
        for i in 0..<iterations {
            buffer.removeAll(keepingCapacity: true)
            try encoder.encode(people[i % people.count], into: &buffer)
            sum &+= try decoder.decode(CodablePerson.self, from: buffer).age
        }
        let elapsed = now() - start
        checksum &+= sum
        return elapsed
    }
    #endif

    /// Indexed equality query vs a full scan over the same documents: `queries` lookups by
    /// email. Returns (ns per indexed query, ns per scanned query), checksum of matches.
    static func indexedQuery(_ people: [Person], folder: String, indexedQueries: Int, scanQueries: Int,
                             checksum: inout Int) throws -> (index: UInt64, scan: UInt64)? {
        #if DEPOT_COMPARE_NO_DOCUMENTS
        return nil
        #else
        let store = try Store(path: folder)
        try store.write { tx in for p in people { try tx.park(IndexedPerson(p)) } }
        var sum = 0
        let indexStart = now()
        try store.read { tx in
            for i in 0..<indexedQueries {
                let email = people[(i &* 7919) % people.count].email
                let result = try tx.execute(FetchRequest<IndexedPerson>().matching(\.email, .equalTo(email)))
                guard result.plan.usedIndex else { throw BenchError("the email index was not used") }
                sum &+= result.documents.first?.age ?? 0
            }
        }
        let indexNs = (now() - indexStart) / UInt64(max(1, indexedQueries))
        let scanStart = now()
        try store.read { tx in
            for i in 0..<scanQueries {
                let email = people[(i &* 7919) % people.count].email
                let found = try tx.fetch(IndexedPerson.self, where: #Predicate { $0.email == email })
                sum &+= found.first?.age ?? 0
            }
        }
        let scanNs = (now() - scanStart) / UInt64(max(1, scanQueries))
        checksum &+= sum
        return (indexNs, scanNs)
        #endif
    }

    /// Seeding a generated fixture of `companies` × `employeesPerCompany`: ns per document stored.
    static func seed(companies: Int, employeesPerCompany: Int, fixtureFolder: String, folder: String) throws -> (ns: UInt64, documents: Int)? {
        #if DEPOT_COMPARE_NO_DOCUMENTS
        return nil
        #else
        let (root, _, _) = try SeedFixture.generate(in: URL(fileURLWithPath: fixtureFolder), companies: companies,
                                                    employeesPerCompany: employeesPerCompany, employeesPerFile: 250)
        let store = try Store(path: folder)
        let start = now()
        let summary = try store.seed(from: root)
        let elapsed = now() - start
        return (elapsed, summary.totalDocuments)
        #endif
    }
}

#if !DEPOT_COMPARE_NO_DOCUMENTS
import Depot
import DepotMacros
#endif
import Foundation

/// The document every document workload stores: five fields, `tags` held by GRDB as a JSON text
/// column. Depot reads and writes it through the codec `@BinaryCodable` generates (the same bytes
/// as its `Codable` conformance, which GRDB and the JSON column use).
#if !DEPOT_COMPARE_NO_DOCUMENTS
@BinaryCodable
#endif
struct Person: Codable, Sendable, Hashable {
    var id: String
    var name: String
    var age: Int
    var email: String
    var tags: [String]

    /// `count` people with seeded random 16-hex-digit IDs (so inserts arrive in no key order).
    static func generate(_ count: Int, seed: UInt64) -> [Person] {
        var rng = SplitMix64(seed: seed)
        let tagPool = ["admin", "beta", "swift", "lmdb", "ops", "sales", "eu", "us", "vip", "new"]
        var seen = Set<String>()
        var people: [Person] = []
        people.reserveCapacity(count)
        while people.count < count {
            let r = rng.next()
            let id = String(r, radix: 16).leftPadded(to: 16)
            guard seen.insert(id).inserted else { continue }
            let n = people.count
            let tagCount = Int(r % 4)
            let tags = (0..<tagCount).map { tagPool[Int((r >> (8 * UInt64($0 + 1))) % UInt64(tagPool.count))] }
            people.append(Person(id: id, name: "Person \(n)", age: 18 + Int(r % 70),
                                 email: "person\(n)@example.com", tags: tags))
        }
        return people
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// Keys and pre-encoded JSON values packed into two byte blobs with offsets: the form the C
/// baseline and the raw-binding floor of the document workloads read.
struct PackedRecords {
    var keyBlob: [UInt8] = []
    var keyOffsets: [Int] = [0]
    var valueBlob: [UInt8] = []
    var valueOffsets: [Int] = [0]
    var count: Int { keyOffsets.count - 1 }

    init(people: [Person]) throws {
        let encoder = JSONEncoder()
        for p in people {
            keyBlob.append(contentsOf: p.id.utf8)
            keyOffsets.append(keyBlob.count)
            valueBlob.append(contentsOf: try encoder.encode(p))
            valueOffsets.append(valueBlob.count)
        }
    }

    init(ids: [String]) {
        for id in ids {
            keyBlob.append(contentsOf: id.utf8)
            keyOffsets.append(keyBlob.count)
        }
    }
}

/// The "codec encode+decode" workload with Foundation's JSON coders (column "json").
enum JSONCodecWorkload {
    /// `iterations` round trips (encode one person, decode it back), cycling over `people`.
    /// Returns elapsed ns; adds the decoded ages into `checksum`.
    static func run(_ people: [Person], iterations: Int, checksum: inout Int) throws -> UInt64 {
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        var sum = 0
        let t0 = now()
        for i in 0..<iterations {
            let data = try encoder.encode(people[i % people.count])
            sum &+= try decoder.decode(Person.self, from: data).age
        }
        let elapsed = now() - t0
        checksum &+= sum
        return elapsed
    }
}

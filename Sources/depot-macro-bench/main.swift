// Instructions per operation of the generated codec against `Codable`, under callgrind:
//
//   depot-macro-bench WORKLOAD N [DIR]
//
// WORKLOAD is codec-codable, codec-generated, insert-codable, insert-generated, get-codable or
// get-generated. Only the function `measuredRegion` runs the measured part, so run valgrind with
// `--toggle-collect='*measuredRegion*'` (see scripts/macro-instructions.sh) at two
// sizes and divide the difference by the difference of the sizes: fixed costs cancel out.
// Synchronous on purpose: valgrind cannot run an async main.
#if Macros
import Depot
import DepotMacros
import Foundation

/// The benchmarks' 5-field person (Benchmarks/Sources/depot-compare/Person.swift), generated codec.
@BinaryCodable
struct GeneratedPerson: Document {
    var id: String
    var name: String
    var age: Int
    var email: String
    var tags: [String]
}

/// The same fields through `Codable`.
struct CodablePerson: Document {
    var id: String
    var name: String
    var age: Int
    var email: String
    var tags: [String]
}

/// What the workloads need of both types.
protocol BenchPerson: Document where ID == String {
    init(id: String, name: String, age: Int, email: String, tags: [String])
    var age: Int { get }
}

extension GeneratedPerson: BenchPerson {}
extension CodablePerson: BenchPerson {}

/// SplitMix64, seeded: the same people on every run.
struct SplitMix64 {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func people<P: BenchPerson>(_: P.Type, _ count: Int) -> [P] {
    var rng = SplitMix64(state: 42)
    let pool = ["admin", "beta", "swift", "lmdb", "ops", "sales", "eu", "us", "vip", "new"]
    return (0..<count).map { i in
        let id = String(rng.next(), radix: 16)
        let tags = (0..<Int(rng.next() % 4)).map { _ in pool[Int(rng.next() % UInt64(pool.count))] }
        return P(id: id, name: "Person \(i)", age: Int(rng.next() % 90), email: "person\(i)@example.com", tags: tags)
    }
}

/// The measured part of every workload (callgrind collects inside this function only).
@inline(never)
func measuredRegion(_ body: () throws -> Int) rethrows -> Int { try body() }

func codec<P: BenchPerson>(_ all: [P], generated: (P, inout [UInt8]) throws -> Void,
                           decode: ([UInt8]) throws -> P) throws -> Int {
    var buffer: [UInt8] = []
    buffer.reserveCapacity(256)
    return try measuredRegion {
        var sum = 0
        for p in all {
            buffer.removeAll(keepingCapacity: true)
            try generated(p, &buffer)
            sum &+= try decode(buffer).age
        }
        return sum
    }
}

func insert<P: BenchPerson>(_ all: [P], folder: String) throws -> Int {
    let store = try Store(path: folder)
    return try measuredRegion {
        try store.write { tx in for p in all { try tx.park(p) } }
        return all.count
    }
}

func get<P: BenchPerson>(_ all: [P], folder: String) throws -> Int {
    let store = try Store(path: folder)
    try store.write { tx in for p in all { try tx.park(p) } }
    var rng = SplitMix64(state: 7)
    var ids = all.map(\.id)
    for i in stride(from: ids.count - 1, to: 0, by: -1) { ids.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
    var sum = 0
    try store.read { tx in for id in ids { sum &+= try tx.retrieve(P.self, id: id)?.age ?? 0 } } // fault the map in
    return try measuredRegion {
        try store.read { tx in
            for id in ids { sum &+= try tx.retrieve(P.self, id: id)?.age ?? 0 }
        }
        return sum
    }
}

func run(_ workload: String, _ n: Int, _ folder: String) throws -> Int {
    let encoder = BinaryEncoder(), decoder = BinaryDecoder()
    switch workload {
    case "codec-codable":
        return try codec(people(CodablePerson.self, n), generated: { try encoder.encode($0, into: &$1) },
                         decode: { try decoder.decode(CodablePerson.self, from: $0) })
    case "codec-generated":
        return try codec(people(GeneratedPerson.self, n), generated: { try encoder.encodeGenerated($0, into: &$1) },
                         decode: { try decoder.decodeGenerated(GeneratedPerson.self, from: $0) })
    case "insert-codable": return try insert(people(CodablePerson.self, n), folder: folder)
    case "insert-generated": return try insert(people(GeneratedPerson.self, n), folder: folder)
    case "get-codable": return try get(people(CodablePerson.self, n), folder: folder)
    case "get-generated": return try get(people(GeneratedPerson.self, n), folder: folder)
    default: throw CocoaError(.featureUnsupported)
    }
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 2, let n = Int(arguments[arguments.startIndex + 1]) else {
    FileHandle.standardError.write(Data("usage: depot-macro-bench WORKLOAD N [DIR]\n".utf8))
    exit(2)
}
let folder = arguments.count > 2 ? arguments[arguments.startIndex + 2]
    : NSTemporaryDirectory() + "depot-macro-bench-\(UUID().uuidString)"
var status: Int32 = 0
do {
    print(try run(arguments[arguments.startIndex], n, folder))
} catch {
    FileHandle.standardError.write(Data("depot-macro-bench: \(error)\n".utf8))
    status = 1
}
try? FileManager.default.removeItem(atPath: folder)
exit(status)
#endif

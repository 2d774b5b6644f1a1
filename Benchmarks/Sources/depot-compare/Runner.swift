import CLMDBBench
import Foundation

/// Runs the rounds and collects ns/op samples: `samples[workload][engine]`, one per round.
struct Runner {
    let sizes: Sizes
    let scratch: Scratch
    let engines: [any KVEngine] = [CEngine(), LMDBEngine(), GRDBEngine()]
    let value: [UInt8]
    let people: [Person]
    let packed: PackedRecords
    let ageSum: Int
    var samples: [Workload: [String: [Double]]] = [:]
    /// When set, only these workloads run (append put always runs to fill get and scan).
    var only: Set<Workload>?

    func runs(_ workloads: Workload...) -> Bool {
        guard let only else { return true }
        return workloads.contains { only.contains($0) }
    }

    init(sizes: Sizes, scratch: Scratch) throws {
        self.sizes = sizes
        self.scratch = scratch
        value = benchValue(sizes.valueSize)
        people = Person.generate(sizes.documents, seed: 42)
        packed = try PackedRecords(people: people)
        ageSum = people.reduce(0) { $0 + $1.age }
    }

    mutating func record(_ workload: Workload, _ engine: String, ns: UInt64, ops: Int) {
        samples[workload, default: [:]][engine, default: []].append(Double(ns) / Double(ops))
    }

    /// Rotates the engine order each round so that none always runs first.
    func rotated<T>(_ items: [T], _ round: Int) -> [T] {
        let k = round % items.count
        return Array(items[k...] + items[..<k])
    }

    /// A small pass of every key/value workload, not recorded (page in code and libraries).
    func warmUp() throws {
        let n = 20_000
        let order = shuffledCounters(n, seed: 7)
        for engine in engines {
            let folder = scratch.folder("warm-\(engine.name)")
            _ = try engine.appendPut(folder: folder, n: n, value: value)
            var sum: UInt64 = 0, count: UInt64 = 0
            _ = try engine.randomGet(folder: folder, keys: order, checksum: &sum)
            _ = try engine.scan(folder: folder, count: &count, checksum: &sum)
            scratch.remove(folder)
        }
        var checksum = 0
        _ = try JSONCodecWorkload.run(people, iterations: 2_000, checksum: &checksum)
    }

    mutating func runRound(_ round: Int) throws {
        let n = sizes.kv
        let getOrder = shuffledCounters(n, seed: 1_000 + UInt64(round))
        let putKeys = randomKeys(sizes.randomPut, seed: 2_000 + UInt64(round))
        let expectedGetSum = UInt64(n) * UInt64(value[0])
        let expectedScanSum = UInt64(n) * UInt64(value[value.count - 1])

        // Key/value workloads: append, then random get and scan on what append wrote.
        for engine in rotated(engines, round) where runs(.appendPut, .randomGet, .scan) {
            let folder = scratch.folder("kv-\(engine.name)")
            record(.appendPut, engine.name, ns: try engine.appendPut(folder: folder, n: n, value: value), ops: n)
            var sum: UInt64 = 0
            record(.randomGet, engine.name, ns: try engine.randomGet(folder: folder, keys: getOrder, checksum: &sum), ops: n)
            guard sum == expectedGetSum else { throw BenchError("\(engine.name) random get checksum \(sum) != \(expectedGetSum)") }
            var count: UInt64 = 0
            sum = 0
            record(.scan, engine.name, ns: try engine.scan(folder: folder, count: &count, checksum: &sum), ops: n)
            guard count == UInt64(n), sum == expectedScanSum else {
                throw BenchError("\(engine.name) scan saw \(count) records (checksum \(sum)); expected \(n) (\(expectedScanSum))")
            }
            scratch.remove(folder)
        }
        for engine in rotated(engines, round + 1) where runs(.randomPut) {
            let folder = scratch.folder("put-\(engine.name)")
            record(.randomPut, engine.name, ns: try engine.randomPut(folder: folder, keys: putKeys, value: value), ops: putKeys.count)
            scratch.remove(folder)
        }
        for engine in rotated(engines, round + 2) where runs(.durableSingleWrite) {
            let folder = scratch.folder("durable-\(engine.name)")
            let writes = sizes.durableWrites
            record(.durableSingleWrite, engine.name, ns: try engine.durableSingleWrites(folder: folder, n: writes, value: value), ops: writes)
            scratch.remove(folder)
        }

        if runs(.docInsert, .docGet, .docField) { try runDocuments(round) }

        if runs(.indexedQuery) {
            let folder = scratch.folder("query")
            defer { scratch.remove(folder) }
            var checksum = 0
            if let (index, scan) = try DocumentWorkloads.indexedQuery(people, folder: folder, indexedQueries: sizes.indexedQueries,
                                                                     scanQueries: sizes.scanQueries, checksum: &checksum) {
                record(.indexedQuery, "documents", ns: index, ops: 1)
                record(.indexedQuery, "scan", ns: scan, ops: 1)
            }
        }
        if runs(.seed) {
            let fixture = scratch.folder("seed-fixture"), folder = scratch.folder("seed-store")
            defer { scratch.remove(fixture); scratch.remove(folder) }
            if let (ns, documents) = try DocumentWorkloads.seed(companies: sizes.seedCompanies, employeesPerCompany: sizes.seedEmployees,
                                                               fixtureFolder: fixture, folder: folder) {
                record(.seed, "documents", ns: ns, ops: documents)
            }
        }

        // Codec round trips.
        let iterations = sizes.codecIterations
        for column in rotated(["json", "documents"], round) where runs(.codec) {
            var checksum = 0
            let ns: UInt64? = column == "json"
                ? try JSONCodecWorkload.run(people, iterations: iterations, checksum: &checksum)
                : try DocumentWorkloads.codecRoundTrip(people, iterations: iterations, checksum: &checksum)
            guard let ns else { continue }
            let expected = (0..<iterations).reduce(0) { $0 &+ people[$1 % people.count].age }
            guard checksum == expected else { throw BenchError("\(column) codec checksum \(checksum) != \(expected)") }
            record(.codec, column, ns: ns, ops: iterations)
        }
    }

    mutating func runDocuments(_ round: Int) throws {
        var rng = SplitMix64(seed: 3_000 + UInt64(round))
        let ids = people.map(\.id).shuffled(using: &rng)
        let packedIDs = PackedRecords(ids: ids)
        let m = people.count
        let expectedLengths = UInt64(packed.valueBlob.count)
        for column in rotated(["c", "lmdb", "documents", "grdb"], round) {
            let folder = scratch.folder("doc-\(column)")
            defer { scratch.remove(folder) }
            switch column {
            case "c":
                let insert = try checked(packed.keyBlob.withUnsafeBufferPointer { k in
                    packed.keyOffsets.withUnsafeBufferPointer { ko in
                        packed.valueBlob.withUnsafeBufferPointer { v in
                            packed.valueOffsets.withUnsafeBufferPointer { vo in
                                clmdb_put_blobs(folder, k.baseAddress, ko.baseAddress, v.baseAddress, vo.baseAddress, m)
                            }
                        }
                    }
                }, "put blobs")
                record(.docInsert, column, ns: insert, ops: m)
                var sum: UInt64 = 0
                let get = try checked(packedIDs.keyBlob.withUnsafeBufferPointer { k in
                    packedIDs.keyOffsets.withUnsafeBufferPointer { ko in
                        clmdb_get_blobs(folder, k.baseAddress, ko.baseAddress, m, &sum)
                    }
                }, "get blobs")
                guard sum == expectedLengths else { throw BenchError("c doc get checksum \(sum) != \(expectedLengths)") }
                record(.docGet, column, ns: get, ops: m)
                record(.docField, column, ns: get, ops: m)  // the same raw get: the floor of a one-field read
            case "lmdb":
                let lmdb = LMDBEngine()
                record(.docInsert, column, ns: try lmdb.putBlobs(folder: folder, packed), ops: m)
                var sum: UInt64 = 0
                let get = try lmdb.getBlobs(folder: folder, packedIDs, checksum: &sum)
                guard sum == expectedLengths else { throw BenchError("lmdb doc get checksum \(sum) != \(expectedLengths)") }
                record(.docGet, column, ns: get, ops: m)
            case "documents":
                if let insert = try DocumentWorkloads.insert(people, folder: folder) {
                    record(.docInsert, column, ns: insert, ops: m)
                }
                var sum = 0
                if let get = try DocumentWorkloads.get(ids: ids, folder: folder, checksum: &sum) {
                    guard sum == ageSum else { throw BenchError("documents get checksum \(sum) != \(ageSum)") }
                    record(.docGet, column, ns: get, ops: m)
                }
                sum = 0
                if let field = try DocumentWorkloads.getField(ids: ids, folder: folder, checksum: &sum) {
                    guard sum == ageSum else { throw BenchError("documents field checksum \(sum) != \(ageSum)") }
                    record(.docField, column, ns: field, ops: m)
                }
            default:
                let grdb = GRDBEngine()
                record(.docInsert, column, ns: try grdb.insertDocuments(people, folder: folder), ops: m)
                var sum = 0
                let get = try grdb.getDocuments(ids: ids, folder: folder, checksum: &sum)
                guard sum == ageSum else { throw BenchError("grdb doc get checksum \(sum) != \(ageSum)") }
                record(.docGet, column, ns: get, ops: m)
            }
        }
    }
}

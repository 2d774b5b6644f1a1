import CLMDBBench
import DepotLMDB
import Foundation

/// `depot-compare --callgrind WORKLOAD ENGINE N [DIR]`: runs ONE workload for ONE engine at size
/// `n`, synchronously (no Swift concurrency, so valgrind can run it), and, under
/// `valgrind --tool=callgrind --collect-atstart=no`, counts only the workload's measured region:
/// every clock read toggles collection once this mode switches it on, and each workload reads the
/// clock exactly twice (checked). Set-up (filling the store for gets and scans, untimed warm-up
/// passes) runs before and is not counted. `Benchmarks/scripts/instructions.sh` runs this at two
/// sizes and divides the difference by the difference in operations, so fixed costs (transaction
/// begin and commit, cursor open) cancel out.
enum InstructionMode {
    static let workloads: [Workload] = [.appendPut, .randomPut, .randomGet, .scan, .docInsert, .docGet, .docField, .docScan, .docWriteTxn, .codec]

    static func run(_ arguments: [String]) -> Int32 {
        if arguments.first == readTransaction { return runReadTransactions(Array(arguments.dropFirst())) }
        guard arguments.count >= 3, let workload = Workload(rawValue: arguments[0]), workloads.contains(workload),
              let n = Int(arguments[2]), n > 0
        else {
            log("usage: depot-compare --callgrind WORKLOAD ENGINE N [DIR]; workloads: \(workloads.map(\.rawValue).joined(separator: ", ")), \(readTransaction)")
            return 2
        }
        let engine = arguments[1]
        do {
            let scratch = try Scratch(base: arguments.count > 3 ? arguments[3] : nil)
            defer { scratch.cleanup() }
            let checksum = try measure(workload, engine: engine, n: n, scratch: scratch)
            print("\(workload.rawValue) \(engine) \(n): checksum \(checksum)")
            return 0
        } catch {
            log("depot-compare --callgrind: \(error)")
            return 1
        }
    }

    /// Runs the set-up, switches counting on, runs the measured workload, checks the clock reads.
    static func measure(_ workload: Workload, engine: String, n: Int, scratch: Scratch) throws -> UInt64 {
        let folder = scratch.folder("callgrind-\(engine)")
        let value = benchValue(100)
        var checksum: UInt64 = 0
        var measured: () throws -> Void
        switch (workload, engine) {
        case (.appendPut, _), (.randomPut, _), (.randomGet, _), (.scan, _):
            let engines: [any KVEngine] = [CEngine(), LMDBEngine(), GRDBEngine()]
            guard let kv = engines.first(where: { $0.name == engine }) else { throw unknown(engine, workload) }
            switch workload {
            case .appendPut: measured = { _ = try kv.appendPut(folder: folder, n: n, value: value) }
            case .randomPut:
                let keys = randomKeys(n, seed: 2_000)
                measured = { _ = try kv.randomPut(folder: folder, keys: keys, value: value) }
            case .randomGet:
                _ = try kv.appendPut(folder: folder, n: n, value: value)
                let order = shuffledCounters(n, seed: 1_000)
                measured = { _ = try kv.randomGet(folder: folder, keys: order, checksum: &checksum) }
            default:
                _ = try kv.appendPut(folder: folder, n: n, value: value)
                var count: UInt64 = 0
                measured = {
                    _ = try kv.scan(folder: folder, count: &count, checksum: &checksum)
                    guard count == UInt64(n) else { throw BenchError("scan saw \(count) of \(n) records") }
                }
            }
        case (.docInsert, _), (.docGet, _), (.docField, _), (.docScan, _), (.docWriteTxn, _):
            let people = Person.generate(n, seed: 42)
            var rng = SplitMix64(seed: 3_000)
            let ids = people.map(\.id).shuffled(using: &rng)
            measured = try documents(workload, engine: engine, people: people, ids: ids, folder: folder, checksum: &checksum)
        case (.codec, "documents"), (.codec, "json"), (.codec, "codable"):
            let people = Person.generate(min(n, 1_000), seed: 42)
            #if !DEPOT_COMPARE_NO_DOCUMENTS
            let codable = people.map(CodablePerson.init)
            #endif
            measured = {
                var sum = 0
                switch engine {
                case "json": _ = try JSONCodecWorkload.run(people, iterations: n, checksum: &sum)
                #if !DEPOT_COMPARE_NO_DOCUMENTS
                case "codable": _ = try DocumentWorkloads.codableRoundTrip(codable, iterations: n, checksum: &sum)
                #endif
                default: _ = try DocumentWorkloads.codecRoundTrip(people, iterations: n, checksum: &sum)
                }
                checksum = UInt64(sum)
            }
        default:
            throw unknown(engine, workload)
        }
        let readsBefore = clmdb_bench_clock_reads()
        if clmdb_bench_count_between_clock_reads() == 0 {
            log("warning: built without <valgrind/callgrind.h>: callgrind counts the whole run")
        }
        try measured()
        let reads = clmdb_bench_clock_reads() - readsBefore
        guard reads == 2 else { throw BenchError("\(workload.rawValue)/\(engine) read the clock \(reads) times, expected 2") }
        return checksum
    }

    /// The document workloads: set-up (insert before a get) now, the measured part as a closure.
    static func documents(_ workload: Workload, engine: String, people: [Person], ids: [String], folder: String,
                          checksum: inout UInt64) throws -> () throws -> Void {
        let packed = try PackedRecords(people: people)
        let packedIDs = PackedRecords(ids: ids)
        let m = people.count
        let insert: () throws -> Void
        var get: () throws -> Void
        if workload == .docScan {
            var sum: UInt64 = 0
            switch engine {
            case "c":
                try putBlobsInC(packed, folder: folder)
                return {
                    var count: UInt64 = 0
                    _ = try checked(clmdb_scan_values(folder, &count, &sum), "scan")
                    guard count == UInt64(m) else { throw BenchError("scan saw \(count) of \(m) records") }
                }
            #if !DEPOT_COMPARE_NO_DOCUMENTS
            case "documents":
                _ = try DocumentWorkloads.insert(people, folder: folder)
                return { _ = try DocumentWorkloads.scan(Person.self, count: m, folder: folder, checksum: &sum) }
            case "codable":
                _ = try DocumentWorkloads.insert(people.map(CodablePerson.init), folder: folder)
                return { _ = try DocumentWorkloads.scan(CodablePerson.self, count: m, folder: folder, checksum: &sum) }
            case "view":
                _ = try DocumentWorkloads.insert(people, folder: folder)
                return { _ = try DocumentWorkloads.scanViews(count: m, folder: folder, checksum: &sum) }
            #endif
            default:
                throw unknown(engine, workload)
            }
        }
        if workload == .docWriteTxn {
            switch engine {
            case "c":
                return {
                    let start = now()
                    let ok = packed.keyBlob.withUnsafeBufferPointer { k in
                        packed.keyOffsets.withUnsafeBufferPointer { ko in
                            packed.valueBlob.withUnsafeBufferPointer { v in
                                packed.valueOffsets.withUnsafeBufferPointer { vo in
                                    clmdb_put_blobs_each(folder, k.baseAddress, ko.baseAddress, v.baseAddress, vo.baseAddress, packed.count)
                                }
                            }
                        }
                    }
                    _ = now() - start
                    guard ok == 1 else { throw BenchError("clmdb_put_blobs_each failed") }
                }
            #if !DEPOT_COMPARE_NO_DOCUMENTS
            case "documents": return try DocumentWorkloads.insertEach(people, folder: folder)
            case "codable": return try DocumentWorkloads.insertEach(people.map(CodablePerson.init), folder: folder)
            case "indexed": return try DocumentWorkloads.insertEach(people.map(IndexedPerson.init), folder: folder)
            #endif
            default:
                throw unknown(engine, workload)
            }
        }
        switch engine {
        case "c":
            insert = { try putBlobsInC(packed, folder: folder) }
            get = {
                var sum: UInt64 = 0
                _ = try checked(packedIDs.keyBlob.withUnsafeBufferPointer { k in
                    packedIDs.keyOffsets.withUnsafeBufferPointer { ko in
                        clmdb_get_blobs(folder, k.baseAddress, ko.baseAddress, m, &sum)
                    }
                }, "get blobs")
            }
        case "lmdb":
            insert = { _ = try LMDBEngine().putBlobs(folder: folder, packed) }
            get = {
                var sum: UInt64 = 0
                _ = try LMDBEngine().getBlobs(folder: folder, packedIDs, checksum: &sum)
            }
        case "documents":
            insert = {
                guard try DocumentWorkloads.insert(people, folder: folder) != nil else { throw BenchError("built without documents") }
            }
            get = workload == .docField ? {
                var sum = 0
                _ = try DocumentWorkloads.getField(ids: ids, folder: folder, checksum: &sum)
            } : {
                var sum = 0
                _ = try DocumentWorkloads.get(ids: ids, folder: folder, checksum: &sum)
            }
        #if !DEPOT_COMPARE_NO_DOCUMENTS
        case "codable":
            // The same documents through plain `Codable` (no macro).
            let codable = people.map(CodablePerson.init)
            insert = { guard try DocumentWorkloads.insert(codable, folder: folder) != nil else { throw BenchError("built without documents") } }
            get = {
                var sum = 0
                _ = try DocumentWorkloads.get(CodablePerson.self, ids: ids, folder: folder, checksum: &sum)
            }
        case "indexed":
            // The macro's documents with one unique index (on `email`).
            let indexed = people.map(IndexedPerson.init)
            insert = { guard try DocumentWorkloads.insert(indexed, folder: folder) != nil else { throw BenchError("built without documents") } }
            get = {
                var sum = 0
                _ = try DocumentWorkloads.get(IndexedPerson.self, ids: ids, folder: folder, checksum: &sum)
            }
        #endif
        case "grdb":
            insert = { _ = try GRDBEngine().insertDocuments(people, folder: folder) }
            get = {
                var sum = 0
                _ = try GRDBEngine().getDocuments(ids: ids, folder: folder, checksum: &sum)
            }
        default:
            throw unknown(engine, workload)
        }
        guard workload != .docInsert else { return insert }
        try insert()
        return get
    }

    /// `read_txn`: N read transactions of one get each, on one thread (the request pattern of
    /// `--read-scaling`), for engines c, lmdb, documents and codable; stores of `READ_TXN_RECORDS`
    /// (default 20000) records.
    static let readTransaction = "read_txn"

    static func runReadTransactions(_ arguments: [String]) -> Int32 {
        guard arguments.count >= 2, let engine = ReadScaling.Engine(rawValue: arguments[0]), let n = Int(arguments[1]), n > 0 else {
            log("usage: depot-compare --callgrind read_txn c|lmdb|documents|codable N [DIR]")
            return 2
        }
        do {
            let scratch = try Scratch(base: arguments.count > 2 ? arguments[2] : nil)
            defer { scratch.cleanup() }
            let records = ProcessInfo.processInfo.environment["READ_TXN_RECORDS"].flatMap { Int($0) } ?? 20_000
            let stores = try ReadScaling.prepare(n: records, scratch: scratch)
            _ = try ReadScaling.run(engine, stores: stores, threads: 1, seconds: 0, opsPerThread: min(n, 2_000)) // untimed warm-up
            let readsBefore = clmdb_bench_clock_reads()
            if clmdb_bench_count_between_clock_reads() == 0 {
                log("warning: built without <valgrind/callgrind.h>: callgrind counts the whole run")
            }
            let result = try ReadScaling.run(engine, stores: stores, threads: 1, seconds: 0, opsPerThread: n)
            let reads = clmdb_bench_clock_reads() - readsBefore
            guard reads == 2 else { throw BenchError("read_txn/\(engine) read the clock \(reads) times, expected 2") }
            print("read_txn \(engine.rawValue) \(n): checksum \(result.checksum)")
            return 0
        } catch {
            log("depot-compare --callgrind: \(error)")
            return 1
        }
    }

    /// The C baseline's insert: every packed record in one transaction (`clmdb_put_blobs`).
    static func putBlobsInC(_ packed: PackedRecords, folder: String) throws {
        _ = try checked(packed.keyBlob.withUnsafeBufferPointer { k in
            packed.keyOffsets.withUnsafeBufferPointer { ko in
                packed.valueBlob.withUnsafeBufferPointer { v in
                    packed.valueOffsets.withUnsafeBufferPointer { vo in
                        clmdb_put_blobs(folder, k.baseAddress, ko.baseAddress, v.baseAddress, vo.baseAddress, packed.count)
                    }
                }
            }
        }, "put blobs")
    }

    static func unknown(_ engine: String, _ workload: Workload) -> BenchError {
        BenchError("no engine '\(engine)' for \(workload.rawValue) (engines: \(workload.engines.joined(separator: ", ")))")
    }
}

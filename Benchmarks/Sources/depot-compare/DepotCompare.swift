import ArgumentParser
import CLMDBBench
import Foundation

/// `depot-compare`: the same workloads on C-on-liblmdb ("c"), the DepotLMDB binding ("lmdb"),
/// the Depot document layer ("documents", via `DocumentWorkloads`) and GRDB/SQLite ("grdb"),
/// in interleaved rounds in one process; prints median ns/op and ratios.
/// The entry point is synchronous so that valgrind can run the `--callgrind` mode (it cannot
/// run an async `main`); the wall-clock runner is an `AsyncParsableCommand` started from here.
@main
enum DepotCompareMain {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "--callgrind" {
            exit(InstructionMode.run(Array(arguments.dropFirst())))
        }
        Task.detached {
            await DepotCompare.main()
            exit(0)
        }
        dispatchMain()
    }
}

struct DepotCompare: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "depot-compare",
        abstract: "Compare DepotLMDB, the Depot document layer and GRDB against C on liblmdb."
    )

    @Flag(help: "3 rounds of smaller workloads (under 2 minutes).")
    var quick = false

    @Option(help: "Write the results as JSON to this file.")
    var json: String?

    @Option(help: "Number of rounds (default 5, or 3 with --quick).")
    var rounds: Int?

    @Option(help: "Folder for the scratch databases (default: the system's temporary folder).")
    var dir: String?

    @Flag(help: "Skip the concurrent durable-writes (group commit) measurement.")
    var skipGroupCommit = false

    @Option(help: "Run only these workloads (comma-separated names, e.g. scan,random_get; for profiling).")
    var only: String?

    @Flag(help: "Run only the concurrent durable-writes (group commit) measurement.")
    var groupCommitOnly = false

    @Option(help: "Writer counts of the group-commit measurement (comma-separated; default 1,4,16,64).")
    var writers: String?

    @Flag(help: "With --group-commit-only: commit without fsync (measures the task/writer hand-off, not the disk).")
    var noSync = false

    @Flag(help: "With --group-commit-only: the writers' keys interleave (concurrent writes are neighbours, as with time-ordered IDs) instead of each writer appending in a range of its own.")
    var interleavedKeys = false

    @Option(help: "Writes per group-commit configuration (default 2000, or 400 with --quick).")
    var groupCommitWrites: Int?

    @Flag(help: "Run only the read-scaling measurement: one read transaction per lookup from 1, 2, 4, … threads, for C, the binding and documents.")
    var readScaling = false

    @Option(help: "With --read-scaling: thread counts (comma-separated; default 1, 2, 4, … up to the cores).")
    var threads: String?

    @Option(help: "With --read-scaling: records in each store (default 200000, or 20000 with --quick).")
    var records: Int?

    @Option(help: "With --read-scaling: seconds per point (default 2, or 0.5 with --quick).")
    var seconds: Double?

    mutating func run() async throws {
        // Keep freed heap memory in the process (no trimming back to the OS), so that no engine
        // pays page faults for memory another engine just returned: LMDB mallocs every dirty page.
        clmdb_bench_keep_heap()
        var sizes = Sizes(quick: quick, rounds: rounds)
        if let writers {
            let counts = writers.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !counts.isEmpty, counts.allSatisfy({ $0 > 0 }) else { throw ValidationError("--writers: positive integers, e.g. 16 or 4,16") }
            sizes.groupCommitWriters = counts
        }
        if let groupCommitWrites { sizes.groupCommitWrites = max(1, groupCommitWrites) }
        if noSync && !groupCommitOnly { throw ValidationError("--no-sync is only for --group-commit-only") }
        if interleavedKeys && !groupCommitOnly { throw ValidationError("--interleaved-keys is only for --group-commit-only") }
        if readScaling {
            // 1, 2, 4, … up to the cores, and the core count itself.
            var counts = Array(sequence(first: 1) { $0 * 2 <= Machine.cores ? $0 * 2 : nil })
            if counts.last != Machine.cores { counts.append(Machine.cores) }
            if let threads {
                counts = threads.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
                guard !counts.isEmpty, counts.allSatisfy({ $0 > 0 }) else { throw ValidationError("--threads: positive integers, e.g. 1,2,4") }
            }
            let records = records ?? (quick ? 20_000 : 200_000)
            guard records > 0 else { throw ValidationError("--records: a positive integer") }
            let seconds = seconds ?? (quick ? 0.5 : 2)
            guard seconds > 0 else { throw ValidationError("--seconds: a positive number") }
            let scratch = try Scratch(base: dir)
            defer { scratch.cleanup() }
            try ReadScaling.measure(threadCounts: counts, records: records, seconds: seconds, scratch: scratch, json: json)
            return
        }
        if groupCommitOnly {
            guard !skipGroupCommit else { throw ValidationError("--group-commit-only and --skip-group-commit exclude each other") }
            let scratch = try Scratch(base: dir)
            defer { scratch.cleanup() }
            let rounds = rounds ?? 1
            for round in 0..<rounds {
                let report = try await GroupCommitReport.measure(sizes: sizes, scratch: scratch, noSync: noSync,
                                                                    interleaved: interleavedKeys)
                print("group commit, round \(round + 1)/\(rounds)")
                print(report.table())
            }
            return
        }
        let scratch = try Scratch(base: dir)
        defer { scratch.cleanup() }
        log("depot-compare: \(sizes.rounds) rounds\(quick ? " (quick)" : ""), scratch folder \(scratch.root)")
        log("machine: \(Machine.cores) cores, \(Machine.memoryGiB) GiB, \(Machine.kernel), \(Machine.lmdbVersion)")

        let started = Date()
        var runner = try Runner(sizes: sizes, scratch: scratch)
        if let only {
            let names = only.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
            let chosen = try names.map { name -> Workload in
                guard let w = Workload(rawValue: name), Workload.wallClock.contains(w) else {
                    throw ValidationError("unknown workload '\(name)'; known: \(Workload.wallClock.map(\.rawValue).joined(separator: ", "))")
                }
                return w
            }
            runner.only = Set(chosen)
        }
        try runner.warmUp()
        for round in 0..<sizes.rounds {
            let t0 = now()
            try runner.runRound(round)
            log(String(format: "round %d/%d done in %.1f s", round + 1, sizes.rounds, Double(now() - t0) / 1e9))
        }
        var groupCommit: GroupCommitReport?
        if !skipGroupCommit {
            groupCommit = try await GroupCommitReport.measure(sizes: sizes, scratch: scratch)
        }
        let elapsed = Date().timeIntervalSince(started)

        let report = Report(sizes: sizes, samples: runner.samples, groupCommit: groupCommit)
        print(report.table())
        if let groupCommit { print(groupCommit.table()) }
        print(String(format: "total time: %.1f s (excluding compile)", elapsed))
        if let json {
            let command = (["depot-compare"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
            try report.writeJSON(to: json, command: command, quick: quick, seconds: elapsed)
            log("wrote \(json)")
        }
    }
}

func log(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// How big each workload is.
struct Sizes {
    var rounds: Int
    var kv: Int            // append put, random get and scan
    var randomPut: Int
    var valueSize = 100
    var durableWrites: Int
    var documents: Int
    var codecIterations: Int
    var groupCommitWrites: Int
    var groupCommitWriters = [1, 4, 16, 64]
    var indexedQueries = 2_000
    var scanQueries: Int
    var seedCompanies: Int
    var seedEmployees: Int

    init(quick: Bool, rounds: Int?) {
        if quick {
            self.rounds = rounds ?? 3
            kv = 200_000; randomPut = 200_000; durableWrites = 100
            documents = 20_000; codecIterations = 50_000; groupCommitWrites = 400
            scanQueries = 5; seedCompanies = 10; seedEmployees = 500
        } else {
            self.rounds = rounds ?? 5
            kv = 1_000_000; randomPut = 1_000_000; durableWrites = 300
            documents = 100_000; codecIterations = 200_000; groupCommitWrites = 2_000
            scanQueries = 10; seedCompanies = 100; seedEmployees = 1_000
        }
    }
}

/// The workloads, in report order, with their operation counts and the columns they have.
enum Workload: String, CaseIterable {
    case appendPut = "append_put"
    case randomPut = "random_put"
    case randomGet = "random_get"
    case scan
    case durableSingleWrite = "durable_single_write"
    case docInsert = "doc_insert"
    case docGet = "doc_get"
    case docField = "doc_field"
    /// Instruction mode only: every document in key order, decoded (`tx.forEach`).
    case docScan = "doc_scan"
    /// Instruction mode only: one write transaction per new document (a service's request
    /// pattern: `store.write { park }`), durable commit each.
    case docWriteTxn = "doc_write_txn"
    case codec
    case indexedQuery = "indexed_query"
    case seed = "seed_fixture"

    /// The workloads the wall-clock runner measures (`doc_scan` is counted in instructions only).
    static var wallClock: [Workload] { allCases.filter { $0 != .docScan && $0 != .docWriteTxn } }

    var engines: [String] {
        switch self {
        case .codec: return ["documents", "json"]
        case .indexedQuery: return ["documents", "scan"]
        case .seed: return ["documents"]
        case .docInsert, .docGet: return ["c", "lmdb", "documents", "grdb"]
        case .docField: return ["c", "documents"]
        case .docScan: return ["c", "documents", "codable", "view"]
        case .docWriteTxn: return ["c", "documents", "codable", "indexed"]
        default: return ["c", "lmdb", "grdb"]
        }
    }

    func operations(_ s: Sizes) -> Int {
        switch self {
        case .appendPut, .randomGet, .scan: return s.kv
        case .randomPut: return s.randomPut
        case .durableSingleWrite: return s.durableWrites
        case .docInsert, .docGet, .docField, .docScan, .docWriteTxn: return s.documents
        case .codec: return s.codecIterations
        case .indexedQuery: return s.indexedQueries
        case .seed: return s.seedCompanies * (s.seedEmployees + 1)
        }
    }

    var note: String {
        switch self {
        case .appendPut: return "MDB_APPEND puts of 100-byte values, 8-byte big-endian counter keys, one txn (put loop; commit excluded)"
        case .randomPut: return "puts of random 8-byte keys, one txn (put loop; commit excluded)"
        case .randomGet: return "gets of existing keys in random order, one read txn, zero-copy"
        case .scan: return "cursor walk over every record, one read txn"
        case .durableSingleWrite: return "one durable transaction (fsync) per single-record write, 1 writer"
        case .docInsert: return "insert 5-field documents in one txn incl. durable commit (c/lmdb: raw pre-encoded JSON bytes, the floor)"
        case .docGet: return "get documents by ID in random order, one read txn (c/lmdb: raw bytes, no decoding)"
        case .docField: return "read one field (age) of documents by ID in random order, one read txn, without decoding the rest (c: doc_get's raw get)"
        case .docWriteTxn: return "one write transaction (durable commit) per new 5-field document (c: begin, put of the raw bytes, commit)"
        case .docScan: return "every document in key order, decoded, one read txn (c: a cursor walk reading every byte of each value; view: forEachView reading one field)"
        case .codec: return "encode + decode one 5-field document (json: Foundation JSONEncoder/JSONDecoder)"
        case .indexedQuery: return "equality query by email over the documents: unique index (documents) vs full scan with #Predicate (scan); ns per query"
        case .seed: return "seed the generated fixture (companies × employees in files of 250) in one txn; ns per document"
        }
    }
}

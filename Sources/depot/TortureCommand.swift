import ArgumentParser
import Depot
import DepotLMDB
import Foundation

/// One record of `depot torture --mode documents`: transaction `txn` writes `index` 0..<K, each
/// carrying a CRC-32C of (txn, index, payload).
struct TortureDocument: Document {
    /// `"<txn, 10 digits>/<index, 3 digits>"`: string order is transaction order.
    var id: String
    var txn: UInt64
    var index: Int
    var records: Int
    var payload: [UInt8]
    var checksum: UInt32

    /// The collection's name (shared with stores written by earlier versions).
    static var collection: String { "torture" }
}

/// The marker document written in the same transaction as the records: the last committed txn.
struct TortureMarker: Document {
    static var collection: String { "torture-marker" }
    var id: String
    var txn: UInt64
}

/// The checksum every torture record carries: CRC-32C of txn (u64 LE), index (u32 LE), payload.
func tortureChecksum(txn: UInt64, index: Int, payload: [UInt8]) -> UInt32 {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(12 + payload.count)
    withUnsafeBytes(of: txn.littleEndian) { bytes.append(contentsOf: $0) }
    withUnsafeBytes(of: UInt32(truncatingIfNeeded: index).littleEndian) { bytes.append(contentsOf: $0) }
    bytes.append(contentsOf: payload)
    return CRC32C.checksum(bytes)
}

struct TortureCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "torture",
        abstract: "Load and crash-test writer: commits numbered, checksummed transactions and prints 'ack N' after each commit returns.",
        discussion: """
            Meant to be killed (SIGKILL) at random moments by a test, which then reopens the folder and checks that \
            every acknowledged transaction is present, no unacknowledged one is partly present and every checksum \
            matches (see RELIABILITY.md).

            kv:        database 'torture' (or 'torture-<writer>'), keys '<txn:10>/<index:3>', values \
            txn u64 LE | index u32 LE | records u32 LE | payload | CRC-32C u32 LE of everything before it.
            documents: collection 'torture' of TortureDocument (txn, index, records, payload, checksum) and the \
            marker document 'torture-marker/last' holding the last txn, all in one transaction.
            migration: fills collection 'migrating' with --count documents {id, old, n} (printing 'filled'), then             runs migration 'rename' (old → new, adds 'extra': true to each) and prints 'migrated'.
            Seed imports are crash-tested with `depot seed` itself (one transaction per import).

            Each line 'ack N' is written with one write(2) after transaction N committed (durably). With \
            --retries R, a commit that fails is reported as 'failed N: <error>' and tried again, up to R times \
            (for I/O fault injection: the writer must recover inside the process); at the end, 'reopened K' \
            says how often the environment was opened again after MDB_PANIC. With --async-writers W (kv mode), W \
            tasks commit the transactions through group commit (`try await env.write`), each taking the next \
            number; acks then arrive in any order, so a kill can leave gaps below the last committed number: \
            use it for fault injection, not with SIGKILL.
            """)

    enum Mode: String, ExpressibleByArgument, CaseIterable {
        case kv, documents, migration
    }

    @OptionGroup var location: PathOption
    @Option(help: "kv or documents.") var mode: Mode
    @Option(help: "The first transaction number (default: one after the last committed one).") var start: UInt64?
    @Option(help: "How many transactions to commit before exiting.") var count: Int = 1_000_000
    @Option(help: "Records per transaction.") var records: Int = 8
    @Option(help: "Largest payload in bytes (each record gets a pseudo-random size up to this).") var payloadSize: Int = 512
    @Option(help: "Writer name: kv mode writes database 'torture-<writer>' so processes write disjoint ranges.") var writer: String?
    @Option(help: "Initial map size in bytes (the map grows automatically).") var mapSize: Int?
    @Option(help: "How often to try a failed commit again (kv and documents modes; default 0: stop at the first).")
    var retries: Int = 0
    @Option(help: "kv mode: commit through group commit from this many concurrent tasks (default 0: one synchronous writer).")
    var asyncWriters: Int = 0
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard count >= 0 else { throw ValidationError("--count must be 0 or more, got \(count)") }
        guard (0...1_024).contains(asyncWriters) else { throw ValidationError("--async-writers must be 0 to 1024, got \(asyncWriters)") }
        if asyncWriters > 0 && mode != .kv { throw ValidationError("--async-writers needs --mode kv") }
        guard (0...1_000).contains(retries) else { throw ValidationError("--retries must be 0 to 1000, got \(retries)") }
        guard (1...999).contains(records) else { throw ValidationError("--records must be 1 to 999, got \(records)") }
        try GeneratorLimits.checkValueSize(payloadSize, option: "--payload-size")
        try GeneratorLimits.checkMapSize(mapSize)
        if let start, start == 0 { throw ValidationError("--start must be at least 1") }
        if let start { try Self.checkNumbers(first: start, count: count, mode: mode) }
        if let writer, writer.isEmpty || writer.contains("/") { throw ValidationError("--writer must be a non-empty name without '/'") }
        if let writer { try RawArguments.checkName("torture-" + writer, "--writer's database 'torture-<writer>'") }
    }

    func run() async throws {
        try await reportingErrors {
            var options = EnvironmentOptions()
            options.maxDatabases = 1024
            if let mapSize { options.mapSize = mapSize }
            let env = try Environment.open(path: location.path, options: options)
            switch mode {
            case .kv where asyncWriters > 0: try await runKeyValueConcurrently(env)
            case .kv: try await runKeyValue(env)
            case .documents: try await runDocuments(env)
            case .migration: try runMigration(env)
            }
            // How often the environment was opened again after MDB_PANIC (a failed meta-page write).
            if retries > 0 { Self.progress("reopened", UInt64(env.panicRecoveries)) }
        }
    }

    static func key(txn: UInt64, index: Int) -> String {
        String(format: "%010llu/%03d", txn, index)
    }

    /// Pseudo-random payload of transaction `txn`, record `index`.
    func payload(txn: UInt64, index: Int) -> [UInt8] { Self.payload(txn: txn, index: index, maxSize: payloadSize) }

    static func payload(txn: UInt64, index: Int, maxSize payloadSize: Int) -> [UInt8] {
        var state = txn &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(index) &* 0xBF58_476D_1CE4_E5B9 &+ 1
        func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 11
        }
        let size = payloadSize == 0 ? 0 : Int(next() % UInt64(payloadSize + 1))
        return (0..<size).map { _ in UInt8(truncatingIfNeeded: next()) }
    }

    static func acknowledge(_ txn: UInt64) { progress("ack", txn) }

    /// Prints one progress line: `WORD N` (or `WORD`), or with `--json` the object
    /// `{"WORD": N}` (or `{"event": "WORD"}`); `detail` (a failure's message) as `: detail`, or
    /// the member `"error"`.
    static func progress(_ word: String, _ number: UInt64? = nil, detail: String? = nil) {
        var line: String
        if OutputConvention.json {
            var object: [String: Any] = number.map { [word: NSNumber(value: $0)] } ?? ["event": word]
            if let detail { object["error"] = detail }
            line = (try? JSONOutput.line(object)) ?? "{}"
        } else {
            line = number.map { "\(word) \($0)" } ?? word
            if let detail { line += ": " + detail }
        }
        // Written at once (no buffer a kill could lose); a failed write is not the harness's concern.
        try? StandardOutput.write(line + "\n")
    }

    /// Runs `body` (transaction `txn`'s commit); after a failure, reports it and runs it again up
    /// to `retries` times. Cancellation (another writer gave up) ends it without a retry.
    static func committing(_ txn: UInt64, retries: Int, _ body: () async throws -> Void) async throws {
        var failures = 0
        while true {
            do {
                return try await body()
            } catch {
                guard failures < retries, !(error is CancellationError) else { throw error }
                failures += 1
                progress("failed", txn, detail: userMessage(for: error))
            }
        }
    }

    /// Throws unless transactions `first` … `first + count` all have a number (below 2^64; in
    /// `--mode kv`, of at most 10 digits).
    static func checkNumbers(first: UInt64, count: Int, mode: Mode) throws(ValidationError) {
        guard count >= 0, !first.addingReportingOverflow(UInt64(count)).overflow else {
            throw ValidationError("transaction numbers from \(first) for --count \(count) would pass \(UInt64.max)")
        }
        // Keys are "%010llu/…": numbers past 10 digits would sort before the last one, and a
        // later run would resume at the wrong number.
        guard mode != .kv || first - 1 + UInt64(count) <= 9_999_999_999 else {
            throw ValidationError("--mode kv numbers transactions up to 9999999999 (10 digits, its keys' width); \(first) and --count \(count) go past it")
        }
    }

    /// The key/value database and the first transaction number to write.
    func keyValueTarget(_ env: Environment) throws -> (Database<StringCodec, BytesCodec>, UInt64) {
        let db = try env.openDatabase(writer.map { "torture-\($0)" } ?? "torture", key: StringCodec.self, value: BytesCodec.self)
        let first = try start ?? env.read { txn -> UInt64 in
            var last: UInt64 = 0
            try txn.forEach(in: db, range: .all, reverse: true) { key, _ in
                last = UInt64(key.prefix(10)) ?? 0
                return false
            }
            return last + 1
        }
        do {
            try Self.checkNumbers(first: first, count: count, mode: .kv)
        } catch {
            // The store's last number (no --start): not a usage error, but one with a code.
            throw CLIFailure(code: "numbersExhausted", message: error.message)
        }
        return (db, first)
    }

    /// The values of key/value transaction `n`: txn u64 LE | index u32 LE | records u32 LE |
    /// payload | CRC-32C u32 LE of everything before it.
    func keyValueRecords(txn n: UInt64) -> [[UInt8]] {
        Self.keyValueRecords(txn: n, records: records, payloadSize: payloadSize)
    }

    static func keyValueRecords(txn n: UInt64, records: Int, payloadSize: Int) -> [[UInt8]] {
        (0..<records).map { i -> [UInt8] in
            var value: [UInt8] = []
            withUnsafeBytes(of: n.littleEndian) { value.append(contentsOf: $0) }
            withUnsafeBytes(of: UInt32(i).littleEndian) { value.append(contentsOf: $0) }
            withUnsafeBytes(of: UInt32(records).littleEndian) { value.append(contentsOf: $0) }
            value.append(contentsOf: payload(txn: n, index: i, maxSize: payloadSize))
            withUnsafeBytes(of: CRC32C.checksum(value).littleEndian) { value.append(contentsOf: $0) }
            return value
        }
    }

    private func runKeyValue(_ env: Environment) async throws {
        let (db, first) = try keyValueTarget(env)
        var next = first
        for _ in 0..<count {
            let n = next
            let values = keyValueRecords(txn: n)
            try await Self.committing(n, retries: retries) {
                try env.write { txn in
                    for (i, value) in values.enumerated() { try txn.put(value, forKey: Self.key(txn: n, index: i), in: db) }
                }
            }
            Self.acknowledge(n)
            next += 1
        }
    }

    private func runMigration(_ env: Environment) throws {
        let store = try Store(environment: env)
        let exists = try store.read { tx in try tx.retrieve(dynamic: "migrating", id: .string("0")) != nil }
        if !exists {
            try store.write { tx in
                for i in 0..<count {
                    try tx.park(DynamicObject(entity: "migrating", id: .string(String(i)), fields: [("old", .string("v\(i)")), ("n", .int(Int64(i)))]))
                }
            }
        }
        Self.progress("filled")
        var migrator = Migrator()
        try migrator.register("rename") { m in
            try m.renameField("old", to: "new", in: "migrating")
            try m.addField("extra", default: .bool(true), in: "migrating")
        }
        try migrator.migrate(store)
        Self.progress("migrated")
    }

    private func runDocuments(_ env: Environment) async throws {
        let store = try Store(environment: env)
        let last = try store.read { tx in try tx.retrieve(TortureMarker.self, id: "last")?.txn ?? 0 }
        var next = try start ?? {
            guard last < UInt64.max else { throw CLIFailure(code: "numbersExhausted", message: "the store's last transaction number is \(last): no number is left") }
            return last + 1
        }()
        do {
            try Self.checkNumbers(first: next, count: count, mode: .documents)
        } catch {
            throw CLIFailure(code: "numbersExhausted", message: error.message)
        }
        for _ in 0..<count {
            let n = next
            let documents = (0..<records).map { i -> TortureDocument in
                let bytes = payload(txn: n, index: i)
                return TortureDocument(id: Self.key(txn: n, index: i), txn: n, index: i, records: records, payload: bytes,
                                       checksum: tortureChecksum(txn: n, index: i, payload: bytes))
            }
            try await Self.committing(n, retries: retries) {
                try store.write { tx in
                    try tx.park(documents)
                    try tx.park(TortureMarker(id: "last", txn: n))
                }
            }
            Self.acknowledge(n)
            next += 1
        }
    }
}

/// `depot hold-reader`: opens a read transaction and keeps it until killed (for reader-table tests).
struct HoldReaderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hold-reader",
        abstract: "Open a read transaction, print 'reading N' (its snapshot) and keep it open until killed or --seconds pass.")

    @OptionGroup var location: PathOption
    @Option(help: "Give up and exit after this many seconds.") var seconds: Double = 60
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard seconds.isFinite, seconds >= 0 else { throw ValidationError("--seconds must be a finite number of seconds, 0 or more") }
    }

    func run() throws {
        try reportingErrors {
            let env = try openExisting(location.path)
            let txn = try env.beginTransaction(readOnly: true)
            TortureCommand.progress("reading", UInt64(txn.id))
            Thread.sleep(forTimeInterval: seconds)
            try txn.commit()
        }
    }
}

import ArgumentParser
import DepotLMDB
import Foundation

struct StatCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stat",
        abstract: "Show the LMDB version, the map, the reader table and every named database.")

    @OptionGroup var location: PathOption
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try reportingErrors(json: json) {
            let env = try openExisting(location.path)
            let info = try env.info()
            let main = try env.stat()
            var databases: [(String, DatabaseStat)] = []
            for name in try env.databaseNames() {
                let db = try env.openDatabase(name, create: false)
                databases.append((name, try env.read { try $0.stat(db) }))
            }
            let readers = try (try? env.readersWithPinnedPages())?.filter { $0.transactionID != nil } ?? env.readerList().filter { $0.transactionID != nil }
            if json {
                let report = StatReport(
                    depotVersion: DepotVersion.current, lmdbVersion: Environment.libraryVersion, path: env.path, info: info, pageSize: main.pageSize,
                    maxKeySize: env.maxKeySize,
                    databases: Dictionary(uniqueKeysWithValues: databases), activeReaders: readers)
                print(try JSONOutput.line(report))
                return
            }
            print("Depot version:    \(DepotVersion.current)")
            print("LMDB version:     \(Environment.libraryVersion)")
            print("path:             \(env.path)")
            print("map size:         \(info.mapSize) bytes")
            print("last page:        \(info.lastPageNumber) (\(info.lastPageNumber + 1) pages of \(main.pageSize) bytes in use)")
            print("last transaction: \(info.lastTransactionID)")
            print("readers:          \(info.readersUsed) of \(info.maxReaders) slots used")
            for reader in readers {
                print("  reader pid \(reader.processID) snapshot \(reader.transactionID ?? 0) age \(reader.age ?? 0) commits, pinning \(reader.pinnedPages.map(String.init) ?? "?") freed pages")
            }
            print("max key size:     \(env.maxKeySize) bytes")
            print("databases:        \(databases.count)")
            for (name, stat) in databases {
                print("  \(name): \(stat.entries) entries, depth \(stat.depth), \(stat.leafPages) leaf + \(stat.branchPages) branch + \(stat.overflowPages) overflow pages")
            }
        }
    }
}

/// `depot stat --json` output.
struct StatReport: Encodable {
    var depotVersion: String
    var lmdbVersion: String
    var path: String
    var info: EnvironmentInfo
    var pageSize: Int
    var maxKeySize: Int
    var databases: [String: DatabaseStat]
    var activeReaders: [ReaderSlot]
}

struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Write a consistent copy of the environment into a new folder (safe while others write).")

    @OptionGroup var location: PathOption
    @Option(help: "The destination folder (created; must not hold a data.mdb).") var to: String
    @Flag(help: "Leave out free pages (smaller copy, slower).") var compact = false

    func run() throws {
        try reportingErrors {
            let env = try openExisting(location.path)
            let started = Date()
            try env.copy(to: to, compact: compact)
            let size = (try? FileManager.default.attributesOfItem(atPath: to + "/data.mdb")[.size] as? Int) ?? 0
            print("copied '\(env.path)' to '\(to)' (\(size) bytes\(compact ? ", compacted" : "")) in \(String(format: "%.1f", Date().timeIntervalSince(started) * 1000)) ms")
        }
    }
}

struct FillCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fill",
        abstract: "Write COUNT generated records (for load and performance testing).",
        discussion: "Keys are '<prefix>000000001'…; values are VALUE-SIZE pseudo-random bytes. Writes in transactions of --batch records.")

    @OptionGroup var location: PathOption
    @Option(help: "The named database (created if missing).") var db: String
    @Option(help: "How many records (at most 999999999).") var count: Int
    @Option(help: "Bytes per value (at most 1 GiB: the value is held in memory).") var valueSize: Int = 100
    @Option(help: "Records per transaction.") var batch: Int = 10_000
    @Option(help: "Key prefix.") var keyPrefix: String = "key-"
    @Option(help: "Initial map size in bytes (the map grows automatically).") var mapSize: Int?

    func validate() throws {
        try RawArguments.checkDatabase(db, writing: true)
        guard (0...GeneratorLimits.maxFillCount).contains(count) else {
            throw ValidationError("--count must be 0 to \(GeneratorLimits.maxFillCount), got \(count)")
        }
        try GeneratorLimits.checkValueSize(valueSize, option: "--value-size")
        guard batch > 0 else { throw ValidationError("--batch must be at least 1, got \(batch)") }
        try GeneratorLimits.checkMapSize(mapSize)
    }

    func run() throws {
        try reportingErrors {
            var options = EnvironmentOptions()
            if let mapSize { options.mapSize = mapSize }
            let env = try Environment.open(path: location.path, options: options)
            let database = try env.openDatabase(db, key: StringCodec.self, value: BytesCodec.self)
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15
            var value = [UInt8](repeating: 0, count: valueSize)
            let started = Date()
            var written = 0
            let progress = ProgressLine("fill", unit: "records", totalItems: count, totalBytes: count * valueSize)
            while written < count {
                let n = min(batch, count - written)
                try env.write { txn in
                    for i in 0..<n {
                        for j in 0..<value.count {
                            state = state &* 6364136223846793005 &+ 1442695040888963407
                            value[j] = UInt8(truncatingIfNeeded: state >> 56)
                        }
                        let key = keyPrefix + String(format: "%09d", written + i + 1)
                        try txn.put(value, forKey: key, in: database)
                    }
                }
                written += n
                progress.update(items: written, bytes: written * valueSize, force: written == count)
            }
            progress.finish()
            let seconds = Date().timeIntervalSince(started)
            print("wrote \(count) records of \(valueSize) bytes in \(String(format: "%.3f", seconds)) s; map size now \(try env.info().mapSize) bytes")
        }
    }
}

import ArgumentParser
import Depot
import DepotLMDB
import Foundation
#if Postgres
import DepotPostgres
#endif

struct StatCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stat",
        abstract: "Show the LMDB version, the map, the reader table and every named database (a server: its aliases, collections and documents).",
        discussion: """
            On a PostgreSQL store (--url), stat shows where the store is, how many aliases, collections and \
            documents it holds, and replication: whether the server is a standby, and its lag (on a standby, the \
            age of the last replayed transaction; on a primary, the slowest attached standby's replay lag). \
            The map size is the one recorded in the data file's current meta page, as 'mdb_stat -e' reports it \
            ("Map size"): the size every process opening the file maps at least. (A process that opens the \
            file with a smaller map size maps only the used part, which is not the store's map size.)
            """)

    @OptionGroup var location: StoreOption
    @OptionGroup var output: OutputOptions

    func run() throws {
        try reportingErrors {
            guard case .folder(let path) = try location.location else {
                return try location.withStore(.read) { store in try summarize(store) }
            }
            let env = try openExisting(path)
            var info = try env.info()
            info.mapSize = Self.recordedMapSize(env.path) ?? info.mapSize
            let main = try env.stat()
            var databases: [(String, DatabaseStat)] = []
            for name in try env.databaseNames() {
                let db = try env.openDatabase(name, create: false)
                databases.append((name, try env.read { try $0.stat(db) }))
            }
            let readers = try (try? env.readersWithPinnedPages())?.filter { $0.transactionID != nil } ?? env.readerList().filter { $0.transactionID != nil }
            if output.json {
                let report = StatReport(
                    depotVersion: DepotVersion.current, lmdbVersion: Environment.libraryVersion, path: env.path, info: info, pageSize: main.pageSize,
                    maxKeySize: env.maxKeySize,
                    databases: Dictionary(databases, uniquingKeysWith: { first, _ in first }), activeReaders: readers)
                print(try JSONOutput.line(report))
                return
            }
            print("Depot version:    \(DepotVersion.current)")
            print("LMDB version:     \(Environment.libraryVersion)")
            print("path:             \(env.path)")
            print("map size:         \(info.mapSize) bytes (\(info.mapSize / main.pageSize) pages; as mdb_stat -e's \"Map size\")")
            print("last page:        \(info.lastPageNumber) (\(UInt(info.lastPageNumber) + 1) pages of \(main.pageSize) bytes in use)")
            print("last transaction: \(info.lastTransactionID)")
            // LMDB's count is a high-water mark (slots handed out since the lock file was made,
            // free ones included); the active readers are listed below it.
            print("readers:          \(readers.count) active; \(info.readersUsed) of \(info.maxReaders) slots handed out so far")
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

extension StatCommand {
    /// What `stat` prints for a store on a server (`--json`: one object).
    struct Summary: Encodable {
        var depotVersion = DepotVersion.current
        var location: String
        var aliases = 0
        var collections = 0
        var documents = 0
        /// Whether the server is a standby; nil when the driver does not say.
        var standby: Bool?
        /// On a primary: the standbys attached.
        var standbys: Int?
        /// The replication lag in milliseconds (see the command's discussion); nil when unknown.
        var replicationLagMilliseconds: Double?
    }

    /// Prints where `store` is and how many aliases, collections and documents it holds.
    func summarize(_ store: Store) throws {
        var summary = Summary(location: store.path)
        for name in try store.aliases() {
            summary.aliases += 1
            let counts = try store.alias(name).read { tx in try tx.collections().compactMap { try tx.collectionInfo($0)?.count } }
            summary.collections += counts.count
            summary.documents += counts.reduce(0, +)
        }
        #if Postgres
        if let postgres = store.driver as? PostgresDriver {
            let lag = try postgres.replicationLag()
            summary.standby = lag.isStandby
            summary.standbys = lag.isStandby ? nil : lag.standbys
            summary.replicationLagMilliseconds = lag.lag.map { Double($0.components.seconds) * 1_000 + Double($0.components.attoseconds) / 1e15 }
        }
        #endif
        if output.json {
            print(try JSONOutput.line(summary))
        } else {
            print("Depot version:    \(summary.depotVersion)\nstore:            \(summary.location)\naliases:          \(summary.aliases)\n"
                  + "collections:      \(summary.collections)\ndocuments:        \(summary.documents)")
            if let standby = summary.standby {
                let lag = summary.replicationLagMilliseconds.map { String(format: "%.1f ms", $0) } ?? "none reported"
                print(standby ? "server:           a standby; replay lag \(lag)"
                              : "server:           a primary with \(summary.standbys ?? 0) standby(s); slowest replay lag \(lag)")
            }
        }
    }

    /// The map size recorded in the current meta page of `folder`'s data file (what
    /// `mdb_stat -e` reports), or nil when the meta pages cannot be read.
    static func recordedMapSize(_ folder: String) -> Int? {
        FileValidator.currentMeta(folder: folder).flatMap { Int(exactly: $0.mapSize) }
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
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if to.isEmpty { throw ValidationError("--to must not be empty") }
    }

    func run() throws {
        try reportingErrors {
            let env = try openExisting(location.path)
            let started = Date()
            // The folders above --to are created too, as a store's --path's are (removed again,
            // when still empty, if the copy fails).
            let parent = FilePaths.parent(of: to)
            let above = NewStoreLocation(parent.isEmpty ? "." : parent)
            if !parent.isEmpty && !FileManager.default.fileExists(atPath: parent) {
                try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            do {
                try env.copy(to: to, compact: compact)
            } catch {
                above.removeCreatedFolders()
                throw error
            }
            // Read where LMDB could not register the copy as a reader (a read-only mount) while
            // a writer elsewhere committed: the copy may mix versions. Removed, never kept as a backup.
            do {
                try UnguardedReads.confirmUnchanged()
            } catch {
                _ = unlink(to + "/data.mdb")
                above.removeCreatedFolders()
                throw error
            }
            StandardOutput.noteCommitted("the backup was written to '\(to)'")
            let size = (try? FileManager.default.attributesOfItem(atPath: to + "/data.mdb")[.size] as? Int) ?? 0
            let milliseconds = Date().timeIntervalSince(started) * 1000
            if output.json {
                let absolute = to.hasPrefix("/") ? to : FileManager.default.currentDirectoryPath + "/" + to
                print(try JSONOutput.line(["from": env.path, "to": absolute, "bytes": size, "compacted": compact, "milliseconds": milliseconds] as [String: Any]))
            } else {
                print("copied '\(env.path)' to '\(to)' (\(size) bytes\(compact ? ", compacted" : "")) in \(String(format: "%.1f", milliseconds)) ms")
            }
        }
    }
}

struct FillCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fill",
        abstract: "Write COUNT generated records (for load and performance testing).",
        discussion: "Keys are '<prefix>000000001'…; values are VALUE-SIZE pseudo-random bytes. Writes in transactions of --batch records.")

    @OptionGroup var target: RawDatabase
    @Option(help: "How many records (at most 999999999).") var count: Int
    @Option(help: "Bytes per value (at most 1 GiB: the value is held in memory).") var valueSize: Int = 100
    @Option(help: "Records per transaction.") var batch: Int = 10_000
    @Option(help: "Key prefix.") var keyPrefix: String = "key-"
    @Option(help: "Initial map size in bytes (the map grows automatically).") var mapSize: Int?

    func validate() throws {
        try RawArguments.checkDatabase(target.db, writing: true)
        guard (0...GeneratorLimits.maxFillCount).contains(count) else {
            throw ValidationError("--count must be 0 to \(GeneratorLimits.maxFillCount), got \(count)")
        }
        try GeneratorLimits.checkValueSize(valueSize, option: "--value-size")
        guard batch > 0 else { throw ValidationError("--batch must be at least 1, got \(batch)") }
        try GeneratorLimits.checkMapSize(mapSize)
        // Keys are the prefix and 9 digits (more past 999,999,999): checked as `put` checks a key.
        let longest = keyPrefix.utf8.count + max(9, String(count).count)
        guard longest <= Environment.standardMaxKeySize else {
            throw ValidationError("--key-prefix is \(keyPrefix.utf8.count) bytes: its keys would be \(longest) bytes, and the limit is \(Environment.standardMaxKeySize)")
        }
    }

    func run() throws {
        try reportingErrors {
            var options = EnvironmentOptions()
            if let mapSize { options.mapSize = mapSize }
            let env = try Environment.open(path: target.location.path, options: options)
            let database = try env.openDatabase(target.db, key: StringCodec.self, value: BytesCodec.self)
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15
            var value = [UInt8](repeating: 0, count: valueSize)
            let started = Date()
            var written = 0
            let progress = ProgressLine("fill", unit: "records", totalItems: count, totalBytes: count * valueSize)
            while written < count {
                let n = min(batch, count - written)
                do {
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
                } catch {
                    // The batches before this one are committed: say how many records they hold.
                    throw AfterCommits(error, committed: written,
                                       note: written == 0 ? "no record was committed"
                                           : "the first \(written) records (to key '\(keyPrefix + String(format: "%09d", written))') were committed in earlier transactions; the rest were not")
                }
                written += n
                StandardOutput.noteCommitted("\(written) records were stored")
                progress.update(items: written, bytes: written * valueSize, force: written == count)
            }
            progress.finish()
            let seconds = Date().timeIntervalSince(started)
            // As `stat` reports it: the size recorded in the data file, not this process's map.
            let mapSize = try StatCommand.recordedMapSize(env.path) ?? env.info().mapSize
            if target.output.json {
                print(try JSONOutput.line(["records": count, "valueSize": valueSize, "seconds": seconds, "mapSize": mapSize] as [String: Any]))
            } else {
                print("wrote \(count) records of \(valueSize) bytes in \(String(format: "%.3f", seconds)) s; map size now \(mapSize) bytes")
            }
        }
    }
}

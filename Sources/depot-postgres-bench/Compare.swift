#if Postgres
import Depot
import DepotPostgres
import Foundation

/// `depot-postgres-bench compare [SECONDS]`: the server's own baseline (pgbench, when
/// installed) and Depot, side by side on the same server in one run, with ratios. Each point
/// runs SECONDS (default 3). Needs DEPOT_POSTGRES_URL and the PG* variables (as
/// scripts/with-postgres.sh exports them) for pgbench.
///
/// Each pgbench figure is measured right before the Depot figure it is compared with.
/// - Durable commits/s: pgbench's one-row insert (`INSERT … VALUES (…)` into a table with a
///   bigserial key, `synchronous_commit` as the server has it) against `Store.write` of one
///   document with one index, for 1, 8 and 64 writers in this process with the driver's default
///   pool (``PostgresConfiguration/maximumConnections``, 16: 64 writers share 16 connections,
///   pgbench's clients have one each), 64 writers again with a connection each (what a pool
///   sized to its callers costs), and 4 processes × 16 writers (pgbench: 64 clients), with the
///   default pool each and then a quarter of it each (the four sharing the default's
///   connections, as hosts sharing a server would be configured); then 8 writers again with a change
///   watcher attached (another driver on the schema, as another host would watch: writers then
///   log their changes and notify it), against the same pgbench figure, and how many of the
///   commits the watcher reported.
/// - CPU per commit of each write row, pgbench's and Depot's (``CPUUse``): the client's
///   (pgbench, or this program; of which in the kernel) and the rest of the machine's (the
///   server). Where client and server share a few cores, a commits/s ratio is mostly a ratio
///   of CPU per commit: this says which side spent it.
/// - Read latency: pgbench's one-row `SELECT` by primary key (1 client) against a point read
///   through the driver (read transaction + get) and a document get by ID through `Store`.
///   With `DEPOT_COMPARE_READS_ONLY=1`, only these (no write phases before them).
/// - Standby read latency: the same two reads routed to a streaming replica
///   (``PostgresConfiguration/readReplicas``) when DEPOT_POSTGRES_REPLICA_URL names one (as
///   `DEPOT_POSTGRES_REPLICA=1 scripts/with-postgres.sh` exports), against pgbench's `SELECT`
///   on the primary; skipped, and said so, without one.
enum Compare {
    struct Writers {
        var commits = 0
        var failures = 0
        var retries = 0
        var firstFailure: String?
        /// With a watcher: how many of the commits it reported.
        var reported: Int?
        /// Resident memory gained per commit from a third of the way in to the end (nil where
        /// it cannot be read): near 0 unless the write path keeps something per commit.
        var residentPerCommit: Double?
    }

    static func run(url: String, seconds: Double) throws {
        let pgbench = ["/usr/bin/pgbench", "/usr/lib/postgresql/15/bin/pgbench"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let base = try pgbench.map { try Baseline(pgbench: $0, seconds: seconds) }
        defer { base?.finish() }
        if base == nil { print("pgbench not found: baseline skipped") }
        var configuration = try PostgresConfiguration(url: url)
        let defaultPool = configuration.maximumConnections
        let schema = "bench_" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        var rows: [(String, Double?, Double, String)] = []
        var cpuRows: [(String, String, String)] = []
        func writeRow(_ name: String, _ baseline: (perSecond: Double, commits: Int, cpu: CPUUse)?, _ depot: Writers, _ cpu: CPUUse) {
            rows.append((name, baseline?.perSecond, Double(depot.commits) / seconds, note(depot)))
            cpuRows.append((name, baseline.map { $0.cpu.perCommit($0.commits) } ?? "—", cpu.perCommit(depot.commits)))
        }
        // DEPOT_COMPARE_READS_ONLY=1: the read latencies only (no write phases before them).
        if ProcessInfo.processInfo.environment["DEPOT_COMPARE_READS_ONLY"] == nil {
            for writers in [1, 8, 64] {
                configuration.schema = "\(schema)_w\(writers)"
                configuration.maximumConnections = defaultPool
                let baseline = try base?.inserts(clients: writers)
                let (result, cpu) = try CPUUse.measuring { try measureWriters(configuration, writers: writers, seconds: seconds, firstID: 0) }
                let name = "commits/s, \(writers) writer\(writers == 1 ? "" : "s")"
                writeRow(name, baseline, result, cpu)
                // The same against the same baseline, the document without its index: one row
                // per commit, as pgbench's.
                configuration.schema = "\(schema)_w\(writers)plain"
                let (plain, plainCPU) = try CPUUse.measuring {
                    try measureWriters(configuration, writers: writers, seconds: seconds, firstID: 0, indexed: false)
                }
                writeRow(name + ", no index (one row, as pgbench's)", baseline, plain, plainCPU)
                if writers > defaultPool {
                    // The pool sized to the callers: a connection (and a server backend) each.
                    configuration.schema = "\(schema)_w\(writers)each"
                    configuration.maximumConnections = writers
                    let (each, eachCPU) = try CPUUse.measuring { try measureWriters(configuration, writers: writers, seconds: seconds, firstID: 0) }
                    writeRow(name + ", a connection each (maximumConnections = \(writers))", baseline, each, eachCPU)
                }
            }
            configuration.schema = "\(schema)_p4"
            configuration.maximumConnections = defaultPool
            let baseline = try base?.inserts(clients: 64)
            let (processes, processesCPU) = try CPUUse.measuring { try measureProcesses(configuration, processes: 4, writers: 16, seconds: seconds) }
            writeRow("commits/s, 4 processes × 16 writers (pgbench: 64 clients)", baseline, processes, processesCPU)
            // The processes sharing the server's connections: a pool of a quarter of the default each.
            configuration.schema = "\(schema)_p4shared"
            configuration.maximumConnections = max(1, defaultPool / 4)
            let (shared, sharedCPU) = try CPUUse.measuring { try measureProcesses(configuration, processes: 4, writers: 16, seconds: seconds) }
            writeRow("commits/s, 4 processes × 16 writers, \(configuration.maximumConnections) connections each", baseline, shared, sharedCPU)

            configuration.schema = "\(schema)_w8watch"
            configuration.maximumConnections = 8
            let watchedBaseline = try base?.inserts(clients: 8)
            let (watched, watchedCPU) = try CPUUse.measuring {
                try measureWriters(configuration, writers: 8, seconds: seconds, firstID: 0, watched: true)
            }
            writeRow("commits/s, 8 writers, with a change watcher attached", watchedBaseline, watched, watchedCPU)

        }
        configuration.schema = "\(schema)_r"
        configuration.maximumConnections = 2
        let select = try base?.selectLatency()
        let reads = try measureReads(configuration, seconds: seconds)
        rows.append(("point read (driver.read), ms (lower is better)", select, reads.pointRead, ""))
        rows.append(("point read, snapshot at its statement (driver.readFromFirstOperation), ms", select, reads.firstRead, ""))
        rows.append(("document get by ID (store.retrieve), ms", select, reads.documentGet, ""))
        rows.append(("document get in a read closure (store.read { retrieve }), ms", select, reads.getInRead, ""))
        if let replicaURL = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_REPLICA_URL"], !replicaURL.isEmpty {
            let replica = try PostgresConfiguration(url: replicaURL)
            var routed = configuration
            routed.schema = "\(schema)_rs"
            routed.readReplicas = [.init(host: replica.host, port: replica.port)]
            let standby = try measureReads(routed, seconds: seconds)
            rows.append(("point read on a standby, ms (pgbench: on the primary)", select, standby.pointRead, ""))
            rows.append(("document get by ID on a standby, ms (pgbench: on the primary)", select, standby.documentGet, ""))
        } else {
            print("no standby (DEPOT_POSTGRES_REPLICA_URL is not set): standby reads skipped")
        }

        print("\n| \(seconds) s per point | pgbench | Depot | Depot / pgbench | |")
        print("|---|---|---|---|---|")
        for (name, baseline, depot, note) in rows {
            let ratio = baseline.map { String(format: "%.2f", depot / $0) } ?? "—"
            let digits = name.hasPrefix("commits") ? "%.0f" : "%.3f"
            print("| \(name) | \(baseline.map { String(format: digits, $0) } ?? "—") | \(String(format: digits, depot)) | \(ratio) | \(note) |")
        }
        if !cpuRows.isEmpty {
            print("\nCPU per commit, µs: client (this program, or pgbench; of which in the kernel) / the rest of the machine (the server, its WAL writer, anything else running)")
            print("\n| | pgbench | Depot |")
            print("|---|---|---|")
            for (name, baseline, depot) in cpuRows { print("| \(name) | \(baseline) | \(depot) |") }
        }
        try reportLag(configuration)
        print("(schemas \(schema)_* left in place; drop them with DROP SCHEMA … CASCADE)")
    }

    /// Replication lag after the writes, from the primary and (with DEPOT_POSTGRES_REPLICA_URL,
    /// as `DEPOT_POSTGRES_REPLICA=1 scripts/with-postgres.sh` exports) from the standby.
    static func reportLag(_ primary: PostgresConfiguration) throws {
        func describe(_ lag: PostgresDriver.ReplicationLag) -> String {
            let value = lag.lag.map { String(format: "%.1f ms", Double($0.components.attoseconds) / 1e15 + Double($0.components.seconds) * 1e3) } ?? "none reported"
            return lag.isStandby ? "standby: last replayed transaction \(value) old" : "primary: \(lag.standbys) standby(s), replay lag \(value)"
        }
        let driver = try PostgresDriver(configuration: primary)
        defer { driver.close() }
        print("replication, \(describe(try driver.replicationLag()))")
        guard let url = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_REPLICA_URL"] else { return }
        var standby = try PostgresConfiguration(url: url)
        standby.schema = primary.schema
        let replica = try PostgresDriver(configuration: standby)
        defer { replica.close() }
        print("replication, \(describe(try replica.replicationLag()))")
    }

    /// The retries, the watcher's count, failures, and the resident memory gained per commit
    /// (always when `memory`, else only from 256 bytes: a write path that keeps something).
    static func note(_ result: Writers, memory: Bool = false) -> String {
        var parts = ["\(result.retries) retries"]
        if let reported = result.reported { parts.append("\(reported) of \(result.commits) reported by the watcher") }
        if result.failures > 0 { parts.append("\(result.failures) gave up (first: \(result.firstFailure ?? "?"))") }
        if let grown = result.residentPerCommit, memory || grown >= 256 {
            parts.append(String(format: "resident memory %+.0f bytes per commit", grown))
        }
        return parts.joined(separator: ", ")
    }

    /// `writers` threads of one driver storing one new document per commit for `seconds`: a
    /// ``BenchItem`` (one index), or a ``PlainBenchItem`` (none) when not `indexed`.
    static func measureWriters(_ configuration: PostgresConfiguration, writers: Int, seconds: Double, firstID: Int,
                               startAt: Date? = nil, watched: Bool = false, indexed: Bool = true, tasks: Bool = false) throws -> Writers {
        // The watcher first, so that the writers' first look for watchers finds its lease.
        let watching = watched ? try Watching(configuration) : nil
        defer { watching?.stop() }
        let driver = try PostgresDriver(configuration: configuration)
        defer { driver.close() }
        let store = try Store(driver: driver)
        @Sendable func park(_ id: Int, in tx: DocumentTransaction) throws {
            if indexed { try tx.park(BenchItem(id)) } else { try tx.park(PlainBenchItem(id)) }
        }
        @Sendable func write(_ id: Int) throws { try store.write { tx in try park(id, in: tx) } }
        try write(firstID)
        // Each writer counts its own commits and takes every `writers`-th ID: the harness adds
        // no lock shared by the writers (pgbench's clients share none either).
        let tallies = (0..<writers).map { _ in Locked(Writers()) }
        let retriesBefore = driver.writeRetries
        if let startAt { Thread.sleep(until: startAt) }
        let end = Date().addingTimeInterval(seconds)
        let done = DispatchSemaphore(value: 0)
        @Sendable func count(_ outcome: Result<Void, any Error>, in tally: Locked<Writers>) {
            tally.withLock {
                switch outcome {
                case .success: $0.commits += 1
                case .failure(let error):
                    $0.failures += 1
                    if $0.firstFailure == nil { $0.firstFailure = "\(error)" }
                }
            }
        }
        for (writer, tally) in tallies.enumerated() {
            let ids = stride(from: firstID + 1 + writer, to: Int.max, by: writers)
            if tasks {
                // A service's writers: tasks awaiting the store's async write.
                Task {
                    for id in ids {
                        guard Date() < end else { break }
                        do {
                            _ = try await store.write { tx in try park(id, in: tx) }
                            count(.success(()), in: tally)
                        } catch {
                            count(.failure(error), in: tally)
                        }
                    }
                    done.signal()
                }
                continue
            }
            let thread = Thread {
                for id in ids {
                    guard Date() < end else { break }
                    count(Result { try write(id) }, in: tally)
                }
                done.signal()
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
        @Sendable func total() -> Writers {
            tallies.reduce(into: Writers()) { sum, tally in
                tally.withLock {
                    sum.commits += $0.commits
                    sum.failures += $0.failures
                    if sum.firstFailure == nil { sum.firstFailure = $0.firstFailure }
                }
            }
        }
        // Threads and their allocator arenas are made by a third of the way in: what the
        // process gains after that, per commit, is what the write path keeps.
        Thread.sleep(until: end.addingTimeInterval(-seconds * 2 / 3))
        let early = (bytes: ResidentMemory.bytes(), commits: total().commits)
        for _ in 0..<writers { done.wait() }
        var outcome = total()
        outcome.residentPerCommit = ResidentMemory.perCommit(from: early, to: (ResidentMemory.bytes(), outcome.commits))
        outcome.retries = driver.writeRetries - retriesBefore
        outcome.reported = watching?.reported(atLeast: outcome.commits, firstID: firstID)
        return outcome
    }

    /// A change watcher on another driver, counting the documents it was told were created.
    final class Watching: StoreObserver, @unchecked Sendable {
        // @unchecked Sendable: `created` is guarded by its own lock; `watcher` is only touched by
        // the measuring thread (`init`, `stop`); the rest is immutable.
        private let driver: PostgresDriver
        private let store: Store
        private var watcher: ExternalChangeWatcher?
        private let created = Locked<[Int]>([])

        init(_ configuration: PostgresConfiguration) throws {
            driver = try PostgresDriver(configuration: configuration)
            store = try Store(driver: driver)
            store.addObserver(self)
            watcher = try store.watchExternalChanges()
        }

        func store(_ store: Store, didCommit changes: ChangeSet) {
            let ids = changes.created(BenchItem.self)
            created.withLock { $0 += ids }
        }

        /// How many IDs above `firstID` were reported, once `count` were or after 5 s.
        func reported(atLeast count: Int, firstID: Int) -> Int {
            let end = Date().addingTimeInterval(5)
            while true {
                let seen = created.withLock { $0.filter { $0 > firstID }.count }
                if seen >= count || Date() > end { return seen }
                usleep(10_000)
            }
        }

        func stop() {
            watcher?.stop()
            watcher = nil
            driver.close()
        }
    }

    /// `processes` copies of this program (`writers-child`), each with `writers` threads,
    /// started together on one schema; their results summed.
    static func measureProcesses(_ configuration: PostgresConfiguration, processes: Int, writers: Int, seconds: Double) throws -> Writers {
        // Create the schema and the collection once, before the children race for it.
        _ = try measureWriters(configuration, writers: 1, seconds: 0, firstID: 0)
        let start = Date().addingTimeInterval(3)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var children: [(pid_t, String)] = []
        for index in 0..<processes {
            let output = folder.appendingPathComponent("\(index)").path
            let arguments = [CommandLine.arguments[0], "writers-child", configuration.schema, String(writers), String(seconds),
                             String((index + 1) * 100_000_000), String(start.timeIntervalSince1970), output,
                             String(configuration.maximumConnections)]
            children.append((try spawn(arguments), output))
        }
        var total = Writers()
        for (pid, output) in children {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            let fields = ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: " ").compactMap { Int($0) }
            guard fields.count == 3 else {
                total.failures += 1
                total.firstFailure = total.firstFailure ?? "a child process reported nothing (status \(status))"
                continue
            }
            total.commits += fields[0]
            total.failures += fields[1]
            total.retries += fields[2]
        }
        return total
    }

    /// The child side of ``measureProcesses``: arguments schema, writers, seconds, first ID,
    /// start time, output file and, optionally, the pool's size (else the driver's default).
    static func child(_ arguments: [String], url: String) throws {
        let pool = arguments.count == 7 ? Int(arguments[6]) : nil
        guard arguments.count == 6 || (pool ?? 0) > 0, let writers = Int(arguments[1]), let seconds = Double(arguments[2]),
              let firstID = Int(arguments[3]), let start = Double(arguments[4]) else {
            throw PostgresDriverError.invalidConfiguration("usage: writers-child SCHEMA WRITERS SECONDS FIRST_ID START_TIME OUTPUT [POOL]")
        }
        var configuration = try PostgresConfiguration(url: url)
        configuration.schema = arguments[0]
        if let pool { configuration.maximumConnections = pool }
        let result = try measureWriters(configuration, writers: writers, seconds: seconds, firstID: firstID,
                                        startAt: Date(timeIntervalSince1970: start))
        try "\(result.commits) \(result.failures) \(result.retries)".write(toFile: arguments[5], atomically: true, encoding: .utf8)
    }

    /// Mean latencies in ms: a point read through the driver (in a transaction, and as its own
    /// snapshot), a document get by ID (`Store.retrieve`: one wait, see
    /// `StorageCapabilities.pipelinedReads`), and the same get inside a read closure
    /// (`store.read { retrieve }`: the version check, then the get).
    static func measureReads(_ configuration: PostgresConfiguration, seconds: Double) throws -> Reads {
        let driver = try PostgresDriver(configuration: configuration)
        defer { driver.close() }
        let store = try Store(driver: driver)
        try store.write { tx in for id in 0..<1000 { try tx.park(BenchItem(id)) } }
        let key = [UInt8](repeating: 7, count: 8)
        try driver.write { txn in
            guard let space = try txn.keyspace(named: "reads", create: true, multiValue: false) else { return }
            try key.withUnsafeBytes { k in try [UInt8](repeating: 0xab, count: 100).withUnsafeBytes { try txn.put($0, forKey: k, in: space) } }
        }
        if !configuration.readReplicas.isEmpty {
            // The documents and the entry reach the standby with the WAL: wait for the entry,
            // written last (30 s at most).
            let until = Date().addingTimeInterval(30)
            while try driver.read({ txn in try txn.keyspace(named: "reads", create: false, multiValue: false) }) == nil {
                guard Date() < until else { throw PostgresDriverError.invalidConfiguration("the standby did not replay the documents within 30 s") }
                usleep(10_000)
            }
        }
        func mean(_ body: (Int) throws -> Void) rethrows -> Double {
            var count = 0
            let start = ContinuousClock.now, end = Date().addingTimeInterval(seconds / 2)
            while Date() < end {
                try body(count)
                count += 1
            }
            let elapsed = ContinuousClock.now - start
            return (Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15) / Double(max(1, count))
        }
        return Reads(
            pointRead: try mean { _ in _ = try driver.read { txn in try Self.pointRead(txn, key) } },
            firstRead: try mean { _ in _ = try driver.readFromFirstOperation { txn in try Self.pointRead(txn, key) } },
            documentGet: try mean { i in _ = try store.retrieve(BenchItem.self, id: i % 1000) },
            getInRead: try mean { i in _ = try store.read { tx in try tx.retrieve(BenchItem.self, id: i % 1000) } })
    }

    /// Mean latencies in ms of ``measureReads(_:seconds:)``.
    struct Reads {
        /// `driver.read { get }`: its snapshot taken when it begins.
        var pointRead: Double
        /// `driver.readFromFirstOperation { get }`: its snapshot is the get's own statement.
        var firstRead: Double
        /// `store.retrieve`.
        var documentGet: Double
        /// `store.read { retrieve }`.
        var getInRead: Double
    }

    /// The point read of the `reads` keyspace's entry `key`: its size, or nil.
    static func pointRead(_ txn: any StorageTransaction, _ key: [UInt8]) throws -> Int? {
        try txn.keyspace(named: "reads", create: false, multiValue: false).flatMap { space in
            try key.withUnsafeBytes { try txn.withValue(forKey: $0, in: space) { $0.count } }
        }
    }

    /// Starts `arguments[0]` with `arguments`, inheriting the environment.
    static func spawn(_ arguments: [String]) throws -> pid_t {
        var pid: pid_t = 0
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let result = posix_spawn(&pid, arguments[0], nil, nil, &argv, environ)
        guard result == 0 else { throw PostgresDriverError.invalidConfiguration("could not start \(arguments[0]) (errno \(result))") }
        return pid
    }
}
#endif

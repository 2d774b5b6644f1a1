import Depot
import DepotLMDB
import Foundation
import Testing
import DepotTestSupport

/// Whether strace exists and may trace here (containers often forbid ptrace).
let straceUsable: Bool = {
    guard let strace = which("strace") else { return false }
    return (try? runProcess(strace, ["-o", "/dev/null", "/bin/true"]).status) == 0
}()

@Suite("Durability audit")
struct DurabilityTests {
    /// Counts the calls of each syscall in an `strace -c` summary.
    static func syscallCounts(_ summary: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in summary.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 5, let name = fields.last, ["fdatasync", "fsync", "msync"].contains(String(name)),
                  let calls = Int(fields[3]) else { continue }
            counts[String(name)] = calls
        }
        return counts
    }

    @Test(.enabled(if: straceUsable, "strace is missing or may not trace here: the fsync audit is skipped (apt-get install strace)"))
    func everyCommittedWriteIsFlushedToDisk() throws {
        let exe = try #require(depotExecutable())
        let strace = try #require(which("strace"))
        let folder = TemporaryFolder("depot-durability")
        let summary = folder.sub("strace.txt")
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        // 25 write transactions of one record each, plus one that creates the database.
        let transactions = 26
        let result = try runProcess(strace, ["-f", "-c", "-o", summary, "-e", "trace=fdatasync,fsync,msync",
                                             exe.path, "fill", "--path", folder.sub("env"), "--db", "d", "--count", "25", "--batch", "1"])
        #expect(result.status == 0, "\(result.err)")
        let counts = Self.syscallCounts(try String(contentsOfFile: summary, encoding: .utf8))
        let flushes = (counts["fdatasync"] ?? 0) + (counts["fsync"] ?? 0)
        #expect(flushes >= transactions, "expected at least one fdatasync/fsync per committed write transaction (\(transactions)), counted \(counts)")
        print("durability audit: \(transactions) write transactions, \(counts) under strace")
    }

    @Test func defaultFlagsAreDurable() {
        for options in [EnvironmentOptions(), StoreOptions().environment, EnvironmentOptions(mapSize: 1 << 20, readOnly: true)] {
            let flags = options.environmentFlags
            for (name, bit) in [("MDB_NOSYNC", 0x10000), ("MDB_NOMETASYNC", 0x40000), ("MDB_WRITEMAP", 0x80000), ("MDB_MAPASYNC", 0x100000)] {
                #expect(flags & UInt32(bit) == 0, "\(name) must not be set by default")
            }
            #expect(options.unsafeDurability.isEmpty)
        }
        // And they are set only when asked for by name.
        var unsafe = EnvironmentOptions()
        unsafe.unsafeDurability = [.noSync]
        #expect(unsafe.environmentFlags & 0x10000 != 0)
    }
}

@Suite("Several processes at once")
struct MultiProcessTests {
    @Test func fourProcessesWritingDisjointRangesLoseNothing() throws {
        let exe = try #require(depotExecutable())
        let folder = TemporaryFolder("depot-multi")
        let env = try Environment.open(path: folder.path)
        let writers = (1...4).map { "w\($0)" }
        let children = try writers.map { name in
            try ChildProcess(exe, ["torture", "--path", folder.path, "--mode", "kv", "--writer", name, "--count", "40",
                                   "--records", "\(tortureRecords)", "--payload-size", "300"])
        }
        var acknowledged: [String: Int] = [:]
        for (name, child) in zip(writers, children) {
            let result = child.finish()
            #expect(result.status == 0 && !result.killed, "\(name): \(result.err)")
            acknowledged[name] = result.lines.filter { $0.hasPrefix("ack ") }.count
        }
        var total = 0
        for name in writers {
            let db = try env.openDatabase("torture-\(name)", key: StringCodec.self, value: BytesCodec.self, create: false)
            let count = try env.read { try $0.count(db) }
            #expect(count == (acknowledged[name] ?? 0) * tortureRecords, "\(name)")
            #expect(try CrashSafetyTests.verifyKeyValue(env, start: 1, database: "torture-\(name)") == UInt64(acknowledged[name] ?? 0))
            total += count
        }
        #expect(total == acknowledged.values.reduce(0, +) * tortureRecords)
        #expect(acknowledged.values.reduce(0, +) == 160)
    }
}

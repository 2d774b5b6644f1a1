import Depot
import DepotLMDB
import Foundation
import Testing
import DepotTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The same shape as `depot torture --mode documents` writes (the codec matches fields by name).
struct TortureDocument: Document {
    static var collection: String { "torture" }
    var id: String
    var txn: UInt64
    var index: Int
    var records: Int
    var payload: [UInt8]
    var checksum: UInt32
}

struct TortureMarker: Document {
    static var collection: String { "torture-marker" }
    var id: String
    var txn: UInt64
}

func tortureKey(_ txn: UInt64, _ index: Int) -> String { String(format: "%010llu/%03d", txn, index) }

func tortureChecksum(txn: UInt64, index: Int, payload: [UInt8]) -> UInt32 {
    var bytes: [UInt8] = []
    withUnsafeBytes(of: txn.littleEndian) { bytes.append(contentsOf: $0) }
    withUnsafeBytes(of: UInt32(truncatingIfNeeded: index).littleEndian) { bytes.append(contentsOf: $0) }
    bytes.append(contentsOf: payload)
    return CRC32C.checksum(bytes)
}

/// How many times each crash test kills its writer (`DEPOT_TORTURE_KILLS` overrides, for long runs).
let tortureKills = ProcessInfo.processInfo.environment["DEPOT_TORTURE_KILLS"].flatMap(Int.init) ?? 200

/// Records per torture transaction.
let tortureRecords = 8

/// What one kill loop did.
struct KillLoopFigures: CustomStringConvertible {
    var kills = 0
    var acknowledged = 0
    var committedUnacknowledged = 0
    var lastTransaction: UInt64 = 0
    var milliseconds = 0.0
    var description: String {
        "\(kills) SIGKILLs, \(acknowledged) acknowledged transactions, \(committedUnacknowledged) committed but killed before their ack, last txn \(lastTransaction), \(String(format: "%.1f", milliseconds / 1000)) s"
    }
}

/// Starts `depot torture` again and again, kills it with SIGKILL a random moment after its first
/// acknowledgement, and after every kill calls `verify(start, acknowledged)`, which checks the
/// transactions from `start` on and returns the last one present.
func killLoop(mode: String, seed: UInt64, kills: Int, extra: [String] = [], folder: String,
              verify: (UInt64, [UInt64]) throws -> UInt64) throws -> KillLoopFigures {
    let exe = try #require(depotExecutable(), "the depot executable must be built")
    var rng = SeededRandom(seed: seed)
    var figures = KillLoopFigures()
    var lastPresent: UInt64 = 0
    let started = DispatchTime.now()
    for round in 0..<kills {
        let start = lastPresent + 1
        let child = try ChildProcess(exe, ["torture", "--path", folder, "--mode", mode, "--start", "\(start)",
                                           "--records", "\(tortureRecords)", "--payload-size", "1500"] + extra)
        let first = child.readLine()
        // Kill 0–24 ms after the first commit: mid-transaction, mid-commit, mid-fsync, mid-ack.
        usleep(UInt32(rng.below(25_000)))
        child.killNow()
        let result = child.finish()
        guard let first else {
            Issue.record("round \(round): the writer printed nothing; stderr: \(result.err)")
            break
        }
        try #require(result.killed, "round \(round): the writer exited by itself (status \(result.status)): \(result.err)")
        figures.kills += 1
        let acks = ([first] + result.lines).compactMap { line -> UInt64? in
            line.hasPrefix("ack ") ? UInt64(line.dropFirst(4)) : nil
        }
        #expect(acks == Array(start..<start + UInt64(acks.count)), "acks come in order from --start")
        lastPresent = try verify(start, acks)
        #expect(lastPresent >= (acks.last ?? 0), "round \(round): an acknowledged commit is missing")
        figures.acknowledged += acks.count
        figures.committedUnacknowledged += Int(lastPresent - (acks.last ?? start - 1))
    }
    figures.lastTransaction = lastPresent
    figures.milliseconds = milliseconds(since: started)
    return figures
}

@Suite("Crash safety: SIGKILL at random moments", .serialized)
struct CrashSafetyTests {
    /// Checks key/value torture transactions from `start` on: every one present is complete
    /// (all records, contiguous numbering) and every value's checksum matches. Returns the last.
    static func verifyKeyValue(_ env: Environment, start: UInt64, database: String = "torture") throws -> UInt64 {
        guard try env.databaseNames().contains(database) else { return start - 1 }
        let db = try env.openDatabase(database, key: StringCodec.self, value: BytesCodec.self, create: false)
        var seen: [UInt64: [Int]] = [:]
        try env.read { txn in
            try txn.forEachRaw(in: db, range: .from(tortureKey(start, 0))) { key, value in
                let keyText = String(decoding: key, as: UTF8.self)
                guard value.count >= 20 else {
                    Issue.record("\(keyText): value of \(value.count) bytes is too short")
                    return true
                }
                let stored = value.loadUnaligned(fromByteOffset: value.count - 4, as: UInt32.self).littleEndian
                let actual = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: value[..<(value.count - 4)]))
                #expect(stored == actual, "\(keyText): checksum mismatch")
                let n = value.loadUnaligned(fromByteOffset: 0, as: UInt64.self).littleEndian
                let i = Int(value.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian)
                let records = Int(value.loadUnaligned(fromByteOffset: 12, as: UInt32.self).littleEndian)
                #expect(keyText == tortureKey(n, i) && records == tortureRecords, "\(keyText): record says txn \(n) index \(i)")
                seen[n, default: []].append(i)
                return true
            }
        }
        let present = seen.keys.sorted()
        #expect(present == Array(start..<start + UInt64(present.count)), "transactions present from \(start): \(present)")
        for (n, indexes) in seen where indexes != Array(0..<tortureRecords) {
            Issue.record("transaction \(n) is partly present: records \(indexes)")
        }
        return present.last ?? start - 1
    }

    /// The same for document torture transactions, plus the marker written in each transaction.
    static func verifyDocuments(_ store: Store, start: UInt64) throws -> UInt64 {
        try store.read { tx in
            var seen: [UInt64: [Int]] = [:]
            try tx.forEach(TortureDocument.self, reverse: true) { doc in
                if doc.txn < start { return false }
                #expect(doc.checksum == tortureChecksum(txn: doc.txn, index: doc.index, payload: doc.payload), "\(doc.id): checksum mismatch")
                #expect(doc.id == tortureKey(doc.txn, doc.index) && doc.records == tortureRecords, "\(doc.id): wrong fields")
                seen[doc.txn, default: []].insert(doc.index, at: 0)
                return true
            }
            let present = seen.keys.sorted()
            #expect(present == Array(start..<start + UInt64(present.count)), "transactions present from \(start): \(present)")
            for (n, indexes) in seen where indexes != Array(0..<tortureRecords) {
                Issue.record("transaction \(n) is partly present: records \(indexes)")
            }
            let last = present.last ?? start - 1
            let marker = try tx.retrieve(TortureMarker.self, id: "last")?.txn ?? 0
            #expect(marker == last, "the marker (same transaction) says \(marker), the records say \(last)")
            return last
        }
    }

    @Test func keyValueCommitsSurviveSIGKILL() throws {
        let folder = TemporaryFolder("depot-torture-kv")
        let env = try Environment.open(path: folder.path)
        let figures = try killLoop(mode: "kv", seed: 0x5EED_0001, kills: tortureKills, folder: folder.path) { start, _ in
            try Self.verifyKeyValue(env, start: start)
        }
        #expect(figures.kills == tortureKills)
        // A final full pass over everything ever written.
        #expect(try Self.verifyKeyValue(env, start: 1) == figures.lastTransaction)
        print("crash safety (kv): \(figures)")
    }

    @Test func documentCommitsSurviveSIGKILL() throws {
        let folder = TemporaryFolder("depot-torture-doc")
        let store = try Store(path: folder.path)
        let figures = try killLoop(mode: "documents", seed: 0x5EED_0002, kills: tortureKills, folder: folder.path) { start, _ in
            try Self.verifyDocuments(store, start: start)
        }
        #expect(figures.kills == tortureKills)
        #expect(try Self.verifyDocuments(store, start: 1) == figures.lastTransaction)
        #expect(try store.count(TortureDocument.self) == Int(figures.lastTransaction) * tortureRecords)
        print("crash safety (documents): \(figures)")
    }

    /// Large transactions (the shape of a bulk import: 400 documents of up to 1.5 KB, ~300 KB per
    /// commit) are all or nothing too.
    @Test func largeTransactionsAreAllOrNothing() throws {
        let folder = TemporaryFolder("depot-torture-bulk")
        let store = try Store(path: folder.path)
        let exe = try #require(depotExecutable())
        var rng = SeededRandom(seed: 0x5EED_0003)
        var last: UInt64 = 0
        for round in 0..<20 {
            let child = try ChildProcess(exe, ["torture", "--path", folder.path, "--mode", "documents", "--start", "\(last + 1)",
                                               "--records", "400", "--payload-size", "1500"])
            _ = child.readLine()
            usleep(UInt32(rng.below(60_000)))
            child.killNow()
            let result = child.finish()
            #expect(result.killed, "round \(round): \(result.err)")
            let acks = result.lines.compactMap { $0.hasPrefix("ack ") ? UInt64($0.dropFirst(4)) : nil }
            let present = try store.read { tx -> [UInt64: Int] in
                var seen: [UInt64: Int] = [:]
                try tx.forEach(TortureDocument.self, reverse: true) { doc in
                    if doc.txn <= last { return false }
                    #expect(doc.checksum == tortureChecksum(txn: doc.txn, index: doc.index, payload: doc.payload))
                    seen[doc.txn, default: 0] += 1
                    return true
                }
                return seen
            }
            for (n, count) in present { #expect(count == 400, "transaction \(n) has \(count) of 400 documents") }
            let newLast = present.keys.max() ?? last
            #expect(newLast >= acks.last ?? 0)
            last = newLast
        }
    }

    /// A seed import is one transaction: `depot seed` killed at a random moment leaves its
    /// alias either wholly seeded (every record, every checksum) or absent.
    @Test func seedImportIsAllOrNothingAfterSIGKILL() throws {
        let exe = try #require(depotExecutable())
        let folder = TemporaryFolder("depot-torture-seed")
        let (root, _, employees) = try SeedFixture.generate(in: URL(fileURLWithPath: folder.sub("fixture")), companies: 20,
                                                            employeesPerCompany: 300, employeesPerFile: 100)
        let storePath = folder.sub("store")
        // One undisturbed import to learn how long one takes; kills then fall anywhere in it.
        let started = DispatchTime.now()
        let full = try runProcess(exe, ["seed", "--path", storePath, "--alias", "timing", root.path])
        #expect(full.status == 0, "\(full.err)")
        let window = max(20_000, Int(milliseconds(since: started) * 1_000 * 1.3))
        var rng = SeededRandom(seed: 0x5EED_0004)
        var complete = 0, absent = 0
        for round in 0..<30 {
            let alias = "round\(round)"
            let child = try ChildProcess(exe, ["seed", "--path", storePath, "--alias", alias, root.path])
            usleep(UInt32(rng.below(window)))
            child.killNow()
            let result = child.finish()
            let store = try Store(path: storePath).alias(alias)
            let found = try store.read { tx -> [String: Int] in
                var counts: [String: Int] = [:]
                for collection in try tx.collections() {
                    // query reads every record through its checksum.
                    counts[collection] = try tx.query(collection: collection, conditions: []).documents.count
                }
                return counts
            }
            if found.isEmpty {
                absent += 1
                #expect(result.killed || result.status != 0 || !result.lines.isEmpty, "round \(round): \(result.err)")
            } else {
                complete += 1
                #expect(found == ["Company": 20, "Employee": employees], "round \(round): a partial seed \(found)")
            }
        }
        print("seed crash loop: 30 kills, \(complete) imports complete, \(absent) absent, none partial")
        #expect(complete + absent == 30)
    }

    /// A migration killed at random moments leaves the store at the previous version or the next,
    /// never in between, and the next run resumes it.
    @Test func migrationIsAllOrNothingAfterSIGKILL() throws {
        let exe = try #require(depotExecutable())
        let documents = 3_000
        var rng = SeededRandom(seed: 0x5EED_0005)
        var before = 0, after = 0, resumed = 0
        var migrator = Migrator()
        try migrator.register("rename") { _ in }
        /// Whether every document is there with exactly the fields of one version and its values.
        func expectState(_ store: Store, migrated: Bool, _ label: String) throws {
            let objects = try store.read { tx in try tx.retrieveAll(dynamic: "migrating") }
            #expect(objects.count == documents, "\(label): every document is there")
            for object in objects {
                let fields = Set(object.fields.map(\.key)).subtracting(["id"])
                guard case .int(let n)? = object.fields.first(where: { $0.key == "n" })?.value else {
                    Issue.record("\(label): a document lost its number")
                    continue
                }
                if migrated {
                    #expect(fields == ["n", "new", "extra"], "\(label): migrated entirely")
                    #expect(object.fields.first { $0.key == "new" }?.value == .string("v\(n)"), "\(label): the value moved with its field")
                    #expect(object.fields.first { $0.key == "extra" }?.value == .bool(true))
                } else {
                    #expect(fields == ["n", "old"], "\(label): not migrated at all")
                    #expect(object.fields.first { $0.key == "old" }?.value == .string("v\(n)"))
                }
            }
        }
        for round in 0..<12 {
            let folder = TemporaryFolder("depot-migration-kill")
            let child = try ChildProcess(exe, ["torture", "--path", folder.path, "--mode", "migration", "--count", "\(documents)"])
            #expect(child.readLine() == "filled", "round \(round)")
            // Round 0 kills at once, inside the migration's transaction, so that the resume
            // branch below always runs; the others at random moments.
            let delay = rng.below(400_000)
            if round > 0 { usleep(UInt32(delay)) }
            child.killNow()
            _ = child.finish()
            let store = try Store(path: folder.path)
            let applied = try migrator.appliedMigrations(in: store)
            if applied == ["rename"] {
                after += 1
                try expectState(store, migrated: true, "round \(round)")
            } else {
                before += 1
                #expect(applied.isEmpty)
                try expectState(store, migrated: false, "round \(round)")
                // The next run resumes and completes it.
                let again = try runProcess(exe, ["torture", "--path", folder.path, "--mode", "migration", "--count", "\(documents)"])
                #expect(again.status == 0 && again.out.contains("migrated"), "round \(round): \(again.err)")
                #expect(try migrator.appliedMigrations(in: store) == ["rename"], "round \(round): the resumed run recorded it")
                try expectState(store, migrated: true, "round \(round), resumed")
                resumed += 1
            }
        }
        #expect(resumed >= 1 && resumed == before, "the resume branch ran for every interrupted migration")
        #expect(before + after == 12)
        print("migration crash loop: 12 kills, \(after) after the migration, \(before) before it (all resumed), none between")
    }
}

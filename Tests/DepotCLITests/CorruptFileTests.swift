import Depot
import DepotLMDB
import Foundation
import Testing
import DepotTestSupport

/// Damaged copies of a real environment. Files that pass the meta-page validation are opened
/// and read only by `depot verify` (whose own child process does the reading), never by the test
/// process: a damaged page may crash whoever reads it.
@Suite("Corrupt and foreign files")
final class CorruptFileTests {
    let folder = TemporaryFolder("depot-corrupt")
    let pageSize = 4096
    let base: [UInt8]
    let exe: URL

    init() throws {
        exe = try #require(depotExecutable(), "the depot executable must be built")
        let source = folder.sub("source")
        for mode in ["documents", "kv"] {
            let fill = try runProcess(exe, ["torture", "--path", source, "--mode", mode, "--count", "30", "--payload-size", "600"])
            #expect(fill.status == 0, "\(fill.err)")
        }
        let backup = try runProcess(exe, ["backup", "--path", source, "--to", folder.sub("base"), "--compact"])
        #expect(backup.status == 0, "\(backup.err)")
        base = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder.sub("base/data.mdb"))))
    }

    var pages: Int { base.count / pageSize }

    /// Writes `data` (and optionally `lock`) into a fresh folder and returns its path.
    func copy(_ name: String, _ data: [UInt8], lock: [UInt8]? = nil) throws -> String {
        let dir = folder.sub(name)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Data(data).write(to: URL(fileURLWithPath: dir + "/data.mdb"))
        if let lock { try Data(lock).write(to: URL(fileURLWithPath: dir + "/lock.mdb")) }
        return dir
    }

    func patched(_ offset: Int, _ bytes: [UInt8]) -> [UInt8] {
        var data = base
        data.replaceSubrange(offset..<offset + bytes.count, with: bytes)
        return data
    }

    func le32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
    func le64(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }

    /// Runs `depot verify`; returns the exit status and all it printed.
    func verify(_ dir: String) throws -> (status: Int32, text: String) {
        let result = try runToEnd(exe, ["verify", "--path", dir])
        #expect(result.out.utf8.count + result.err.utf8.count < 64 << 10, "the report stays short")
        return (result.status, result.out + result.err)
    }

    /// Offset of the meta page LMDB uses (the higher transaction ID; the first on a tie).
    var currentMeta: Int {
        func txnid(_ page: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(base[page + 144 + $1]) << (8 * $1) } }
        return txnid(pageSize) > txnid(0) ? pageSize : 0
    }

    /// Damage that the meta-page validation catches before `mdb_env_open` maps the file.
    var metaDamage: [(name: String, data: [UInt8], message: String, code: LMDBError)] {
        let meta1 = pageSize
        return [
            ("magic", patched(16, le32(0x1234_5678)), "no LMDB magic", .invalid),
            ("version", patched(meta1 + 20, le32(7)), "data version 7", .versionMismatch),
            ("page size", patched(40, le32(3000)), "page size 3000", .corrupted),
            ("last page", patched(currentMeta + 136, le64(UInt64(pages + 10))), "beyond the file", .corrupted),
            ("main root", patched(currentMeta + 128, le64(UInt64(pages + 50))), "root page", .corrupted),
            ("meta flags", patched(10, [0, 0]), "not flagged as a meta page", .corrupted),
            ("truncated", Array(base.prefix(base.count / 2)), "beyond the file", .corrupted),
            ("tiny", Array(base.prefix(700)), "too small", .invalid),
            ("foreign", Array("this is not a database, just a text file that happens to be called data.mdb\n".utf8) + [UInt8](repeating: 0x20, count: 8192), "no LMDB magic", .invalid),
        ]
    }

    @Test func metaPageDamageIsRejectedBeforeLMDBMapsTheFile() throws {
        for (name, data, message, code) in metaDamage {
            let dir = try copy("meta-\(name)", data)
            // In this process: the validator refuses the file before mdb_env_open sees it.
            let error = #expect(throws: LMDBError.self, "\(name)") { _ = try Environment.open(path: dir) }
            #expect(error?.code == code.code, "\(name): \(String(describing: error))")
            #expect(error?.description.contains(message) == true, "\(name): \(String(describing: error))")
            #expect((try? Data(contentsOf: URL(fileURLWithPath: dir + "/data.mdb"))).map([UInt8].init) == data, "\(name): the file is left as it was")
            // And through depot verify.
            let report = try verify(dir)
            #expect(report.status == 1, "\(name): \(report.text)")
            #expect(report.text.contains(message), "\(name): \(report.text)")
        }
    }

    /// The meta page LMDB does not use is never read (the next commit overwrites it): roots or a
    /// last page past the file there — what LMDB leaves after a failed meta-page write — are no
    /// reason to refuse the file.
    @Test func theMetaPageLMDBDoesNotUseMayPointAnywhere() throws {
        let stale = pageSize - currentMeta
        let data = patched(stale + 128, le64(UInt64(pages + 50)))
        let dir = try copy("meta-stale", data)
        let report = try verify(dir)
        #expect(report.status == 0, "\(report.text)")
        let write = try runToEnd(exe, ["put", "--path", dir, "--db", "extra", "k", "v"])
        #expect(write.status == 0, "the next commit overwrites the stale page: \(write.err)")
        #expect(try verify(dir).status == 0)
    }

    /// LMDB opens with the newest meta page but then reads page `transaction ID % 2` for every
    /// transaction: a current page whose ID points at the other, damaged page is refused too.
    @Test func aCurrentMetaPageWhoseIDPointsAtTheOtherPageIsRefused() throws {
        func txnid(_ page: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(base[page + 144 + $1]) << (8 * $1) } }
        let other = pageSize - currentMeta
        var data = patched(currentMeta + 144, le64(txnid(currentMeta) + 1))
        data.replaceSubrange(other + 136..<other + 144, with: le64(UInt64(pages + 100)))
        data.replaceSubrange(other + 128..<other + 136, with: le64(UInt64(pages + 50)))
        let dir = try copy("meta-parity", data)
        let report = try verify(dir)
        #expect(report.status == 1, "\(report.text)")
        #expect(report.text.contains("meta page \(other / pageSize)"), "\(report.text)")
        let get = try runToEnd(exe, ["get", "--path", dir, "--db", "torture", "x"])
        #expect(get.status == 1 && get.err.contains("damaged"), "refused before LMDB reads it: \(get.err)")
    }

    @Test func pristineCopyEmptyFileAndJunkLockFile() throws {
        let pristine = try verify(try copy("pristine", base))
        #expect(pristine.status == 0, "\(pristine.text)")
        #expect(pristine.text.contains("ok: 4 databases"))
        #expect(pristine.text.contains("241 document checksums verified"), "\(pristine.text)")

        let empty = try verify(try copy("empty", []))
        #expect(empty.status == 1)
        #expect(empty.text.contains("is empty (0 bytes)"))

        // A lock file of junk: LMDB rebuilds the lock file when no process has it open.
        var rng = SeededRandom(seed: 0x10C4)
        let junk = (0..<8192).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        let lock = try verify(try copy("junk-lock", base, lock: junk))
        #expect(lock.status == 0, "\(lock.text)")
        let missing = try runProcess(exe, ["verify", "--path", folder.sub("nowhere")])
        #expect(missing.status == 1 && missing.err.contains("no environment"))
    }

    @Test func damagedRecordIsNamedByDatabaseAndKey() throws {
        // The stored bytes of one document, found in the file and one byte flipped.
        let source = try Store(path: folder.sub("source"))
        let record = try source.environment.read { txn -> [UInt8] in
            let db = try txn.openDatabase("depot.doc/default/torture", key: StringCodec.self, value: BytesCodec.self, create: false)
            return try #require(try txn.get(tortureKey(5, 3), in: db))
        }
        let at = try #require(firstIndex(of: record, in: base), "the record is stored contiguously")
        var data = base
        data[at + record.count / 2] ^= 0x10
        let report = try verify(try copy("record", data))
        #expect(report.status == 1)
        #expect(report.text.contains("database 'depot.doc/default/torture' key '\(tortureKey(5, 3))'"), "\(report.text)")
        #expect(report.text.contains("checksum"))
        #expect(report.text.contains("1 problem(s)"))
    }

    func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] && Array(haystack[i..<i + needle.count]) == needle {
            return i
        }
        return nil
    }

    /// Damaged page headers: every zeroed page and every page whose `lower` bound points past
    /// the page is reported, as a problem LMDB found or as a crash of the verifier child.
    @Test func damagedPageHeadersAreReportedNeverCrashTheCaller() throws {
        var outcomes: [String: Int] = [:]
        for page in 2..<pages {
            for (kind, offset, bytes) in [("zeroed", 0, [UInt8](repeating: 0, count: pageSize)), ("lower", 12, [0xFF, 0x0F])] {
                let report = try verify(try copy("page-\(page)-\(kind)", patched(page * pageSize + offset, bytes)))
                #expect(report.status == 1, "page \(page) \(kind): \(report.text)")
                let crashed = report.text.contains("the verifier crashed with signal")
                #expect(crashed || report.text.contains("damaged:"), "page \(page) \(kind): \(report.text)")
                outcomes[crashed ? "verifier crashed" : "LMDB reported", default: 0] += 1
            }
        }
        print("page headers: \(2 * (pages - 2)) damaged copies: \(outcomes)")
    }

    /// 16 random bytes at a random place: each case ends with a verdict (sound, damaged, or the
    /// verifier crashed), never a hang or a signal here. Damage in slack space or in bytes LMDB
    /// does not check can go unnoticed: that is counted, not hidden.
    @Test func randomDamageAlwaysEndsInAVerdict() throws {
        var rng = SeededRandom(seed: 0xBAD_F11E)
        var outcomes: [String: Int] = [:]
        for i in 0..<40 {
            let offset = 2 * pageSize + rng.below(base.count - 2 * pageSize - 16)
            let bytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let report = try verify(try copy("random-\(i)", patched(offset, bytes)))
            let verdict = report.status == 0 && report.text.contains("ok:") ? "reported sound"
                : report.text.contains("the verifier crashed with signal") ? "verifier crashed"
                : report.text.contains("damaged:") ? "reported damaged" : "no verdict"
            #expect(verdict != "no verdict" && [0, 1].contains(report.status), "case \(i) at \(offset): \(report.text)")
            outcomes[verdict, default: 0] += 1
        }
        print("random damage: 40 copies: \(outcomes)")
    }
}

import Foundation
import Testing
import DepotTestSupport

/// A damaged leaf node whose key or value size points past the end of the data file: LMDB hands
/// out the pointer unchecked, and reading it kills the reader (SIGSEGV or SIGBUS). `depot verify`
/// must find it — in raw databases too — and name the database and the entry's position.
@Suite("depot verify: keys and values inside the file")
struct VerifyNodeBoundsTests {
    let folder = TemporaryFolder("depot-bounds")
    let pageSize = 4096

    /// A store with 100 generated records in the raw database 'raw', written in one transaction
    /// (so every leaf page in the file is a live one).
    func store(_ name: String) throws -> String {
        let dir = folder.sub(name)
        #expect(try depot("fill", "--path", dir, "--db", "raw", "--count", "100", "--value-size", "50").status == 0)
        return dir
    }

    /// Patches the first node of the first leaf page holding 'key-' keys: `field` 0 is the
    /// node's data size (u16 lo, u16 hi), `field` 6 its key size (u16).
    func patchFirstNode(_ dir: String, field: Int, _ bytes: [UInt8]) throws {
        let url = URL(fileURLWithPath: dir + "/data.mdb")
        var data = [UInt8](try Data(contentsOf: url))
        func u16(_ o: Int) -> Int { Int(data[o]) | Int(data[o + 1]) << 8 }
        for page in 2..<(data.count / pageSize) {
            let base = page * pageSize
            let pgno = (0..<8).reduce(0) { $0 | Int(data[base + $1]) << (8 * $1) }
            guard pgno == page, u16(base + 10) == 0x02 else { continue } // a leaf page
            let node = base + u16(base + 16)
            guard Array(data[node + 8..<node + 12]) == Array("key-".utf8), u16(node + 4) == 0 else { continue }
            data.replaceSubrange(node + field..<node + field + bytes.count, with: bytes)
            try Data(data).write(to: url)
            return
        }
        Issue.record("no leaf page with 'key-' keys in \(dir)")
    }

    @Test func valueRunningPastTheFileIsReportedNotCrashedOn() throws {
        let dir = try store("value")
        let size: UInt32 = 200_000_000
        try patchFirstNode(dir, field: 0, withUnsafeBytes(of: size.littleEndian) { Array($0) })
        let report = try depot("verify", "--path", dir)
        let text = report.out + report.err
        #expect(report.status == 1, "\(text)")
        #expect(text.contains("database 'raw' entry 1 (a key of 13 bytes): the value (200000000 bytes) runs past the used part of the data file"), "\(text)")
        #expect(!text.contains("the verifier crashed"), "\(text)")
        #expect(!text.contains("ok:"), "\(text)")
        #expect(!text.contains("0x"), "neither the damaged key nor a stored value is printed")
        #expect(text.contains("1 problem(s) found"), "\(text)")

        let json = try depot("verify", "--path", dir, "--json")
        #expect(json.status == 1)
        #expect(json.out.contains("runs past the used part of the data file"), "\(json.out)")
    }

    @Test func keyRunningPastTheFileIsReportedNotCrashedOn() throws {
        let dir = try store("key")
        try patchFirstNode(dir, field: 6, [0xFF, 0xFF])
        let report = try depot("verify", "--path", dir)
        let text = report.out + report.err
        #expect(report.status == 1, "\(text)")
        #expect(text.contains("database 'raw' entry 1: the key (65535 bytes) lies outside the used part of the data file"), "\(text)")
        #expect(!text.contains("the verifier crashed"), "\(text)")
        #expect(!text.contains("0x"), "neither the damaged key nor a stored value is printed")
    }

    @Test func listReportsAValueRunningPastTheFileInsteadOfCrashing() throws {
        let dir = try store("list")
        let size: UInt32 = 200_000_000
        try patchFirstNode(dir, field: 0, withUnsafeBytes(of: size.littleEndian) { Array($0) })
        let list = try depot("list", "--path", dir, "--db", "raw")
        #expect(list.status == 1, "\(list.err)")
        #expect(list.err.contains("entry 1 of database 'raw' points past the used part of the data file"), "\(list.err)")
    }

    /// Commands without their own bounds check (here `get`) stop with a plain error and status 1
    /// when the damaged bytes fault, instead of dying with a signal and a crash dump.
    @Test func aMemoryFaultOnADamagedStoreIsAPlainError() throws {
        let dir = try store("fault")
        let first = try depot("list", "--path", dir, "--db", "raw", "--limit", "1")
        let key = try #require(first.out.split(separator: "\t").first.map(String.init), "\(first.err)")
        let size: UInt32 = 200_000_000
        try patchFirstNode(dir, field: 0, withUnsafeBytes(of: size.littleEndian) { Array($0) })
        let get = try depot("get", "--path", dir, "--db", "raw", key)
        #expect(get.status == 1, "a status of 1, not death by signal: \(get.err)")
        #expect(get.err.contains("depot stopped on a") && get.err.contains("Run 'depot verify --path DIR'"),
                "\(get.err)")
        #expect(get.out.isEmpty, "no value bytes printed")
    }

    @Test func soundStoreStillVerifies() throws {
        let dir = try store("sound")
        #expect(try depot("fill", "--path", dir, "--db", "big", "--count", "20", "--value-size", "20000").status == 0)
        let report = try depot("verify", "--path", dir)
        #expect(report.status == 0, "\(report.out + report.err)")
        #expect(report.out.contains("ok: 2 databases, 120 entries"), "\(report.out)")
    }
}

import Depot
import DepotLMDB
import Foundation
import Testing
import DepotTestSupport

/// Issue 30 item 7: every command on a store damaged in its LMDB pages ends with a message and
/// an exit status, never a signal; `depot verify` notices damaged keys, which the record
/// checksums do not cover. The damaged copies are read only by `depot` child processes.
@Suite("Commands on damaged store files")
final class DamagedFileCommandTests {
    let folder = TemporaryFolder("depot-damaged-file")
    let pageSize = 4096
    let exe: URL
    let base: [UInt8]

    init() throws {
        exe = try #require(depotExecutable(), "the depot executable must be built")
        var lines = ""
        for i in 0..<3_000 {
            lines += #"{"collection":"Item","id":"item\#(String(format: "%05d", i))","document":{"name":"\#(String(repeating: "n", count: i % 50))","n":\#(i)}}"# + "\n"
        }
        for i in 0..<500 { lines += #"{"collection":"Other","id":\#(i),"document":{"x":\#(i)}}"# + "\n" }
        let input = folder.sub("docs.jsonl")
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        try Data(lines.utf8).write(to: URL(fileURLWithPath: input))
        let imported = try runToEnd(exe, ["import", "--path", folder.sub("base"), input])
        try #require(imported.status == 0, "\(imported.err)")
        base = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder.sub("base/data.mdb"))))
    }

    func copy(_ name: String, _ data: [UInt8]) throws -> String {
        let dir = folder.sub(name)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Data(data).write(to: URL(fileURLWithPath: dir + "/data.mdb"))
        return dir
    }

    /// The commands that read documents and records, on the store at `dir`.
    func commands(_ dir: String) -> [[String]] {
        [["export", "--path", dir], ["query", "--path", dir, "--collection", "Item", "--where", "n > 100"],
         ["doc", "get", "--path", dir, "--collection", "Item", "--id", "item02005"],
         ["list", "--path", dir, "--db", "depot.doc/default/Item"], ["collections", "--path", dir]]
    }

    /// Runs every command on `dir`: each ends with 0, or with 1 and a message; counts the outcomes.
    func expectVerdicts(_ dir: String, _ label: String, _ outcomes: inout [String: Int]) throws {
        for arguments in commands(dir) {
            let result = try runToEnd(exe, arguments)
            #expect([0, 1].contains(result.status), "\(label): depot \(arguments[0]) ended with status or signal \(result.status): \(result.err.prefix(300))")
            if result.status == 1 { #expect(!result.err.isEmpty, "\(label): depot \(arguments[0]) says why") }
            let kind = result.status != 1 ? "status \(result.status)"
                : result.err.contains("depot stopped on a") ? "stopped with a message" : "error"
            outcomes["\(arguments[0]): \(kind)", default: 0] += 1
        }
    }

    /// Branch pages made to look like leaves and leaves like branches: LMDB's assertions abort
    /// (SIGABRT) on some of them, which must end the command with a message too.
    @Test func pagesOfTheWrongKindEndEveryCommandWithAMessage() throws {
        var outcomes: [String: Int] = [:]
        let pages = base.count / pageSize
        for page in stride(from: 2, to: pages, by: max(1, pages / 16)) {
            let flags = Int(base[page * pageSize + 10]) | Int(base[page * pageSize + 11]) << 8
            guard flags & 0x03 != 0 else { continue } // overflow or free pages
            var data = base
            data[page * pageSize + 10] = UInt8(flags & 0x01 != 0 ? 0x02 : 0x01) // branch ⇄ leaf
            try expectVerdicts(try copy("kind-\(page)", data), "page \(page)", &outcomes)
        }
        print("pages of the wrong kind: \(outcomes.sorted { $0.key < $1.key })")
    }

    /// With `--json` a command stopped by damage writes one JSON error object (code
    /// `storeDamaged`), and nothing on standard error is other than JSON: not even the line
    /// LMDB prints for a failed assertion (`Environment.assertionHook`).
    @Test func aStopOnDamageIsAJSONErrorWithJSON() throws {
        var stopped = 0
        let pages = base.count / pageSize
        for page in stride(from: 2, to: pages, by: max(1, pages / 16)) where stopped < 3 {
            let flags = Int(base[page * pageSize + 10]) | Int(base[page * pageSize + 11]) << 8
            guard flags & 0x03 != 0 else { continue }
            var data = base
            data[page * pageSize + 10] = UInt8(flags & 0x01 != 0 ? 0x02 : 0x01)
            let dir = try copy("json-kind-\(page)", data)
            for arguments in commands(dir) {
                let result = try runToEnd(exe, arguments + ["--json"])
                guard result.status == 1 else { continue }
                for line in result.err.split(separator: "\n") {
                    #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any],
                            "page \(page), depot \(arguments[0]): a line that is not JSON: \(line.prefix(200))")
                }
                let last = result.err.split(separator: "\n").last.map(String.init) ?? ""
                let object = try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]
                let error = object?["error"] as? [String: Any]
                #expect(error?["message"] is String, "page \(page), depot \(arguments[0]): \(result.err.suffix(300))")
                if error?["code"] as? String == "storeDamaged" { stopped += 1 }
            }
        }
        #expect(stopped > 0, "no command was stopped by the damage")
    }

    /// Seeded random damage to page headers, node pointers and bodies, and truncation.
    @Test func randomPageDamageEndsEveryCommandWithAMessage() throws {
        var rng = SeededRandom(seed: 0xDA3A_6ED)
        var outcomes: [String: Int] = [:]
        let pages = base.count / pageSize
        for i in 0..<24 {
            var data = base
            let page = 2 + rng.below(pages - 2)
            switch i % 4 {
            case 0: data[page * pageSize + 8 + rng.below(8)] = UInt8(truncatingIfNeeded: rng.next()) // header
            case 1: data[page * pageSize + 16 + 2 * rng.below(16)] = UInt8(truncatingIfNeeded: rng.next()) // node pointer
            case 2: for k in 0..<8 { data[page * pageSize + 64 + rng.below(pageSize - 80) + k] = UInt8(truncatingIfNeeded: rng.next()) }
            default: data.removeSubrange((pageSize + rng.below(base.count - pageSize))...)
            }
            try expectVerdicts(try copy("random-\(i)", data), "case \(i)", &outcomes)
        }
        print("random page damage: 24 copies: \(outcomes.sorted { $0.key < $1.key })")
    }

    /// A key changed in a leaf (its record's checksum still matches: it covers the value only)
    /// is reported by verify as a key out of order.
    @Test func verifyReportsADamagedKey() throws {
        let sound = try runToEnd(exe, ["verify", "--path", try copy("sound", base)])
        #expect(sound.status == 0, "\(sound.out)\(sound.err)")
        let needle = Array("item01500".utf8)
        let at = try #require((0...(base.count - needle.count)).first { base[$0] == needle[0] && Array(base[$0..<($0 + needle.count)]) == needle })
        var data = base
        data[at + 5] = UInt8(ascii: "9") // item01500 → item91500: sorts after its neighbours
        let report = try runToEnd(exe, ["verify", "--path", try copy("key", data)])
        #expect(report.status == 1, "\(report.out)\(report.err)")
        #expect((report.out + report.err).contains("the key sorts before the key of the entry before it"), "\(report.out)\(report.err)")
        #expect(!(report.out + report.err).contains("91500"), "the report names positions, not the damaged key")
        // The node's key size made longer than LMDB stores (the key still lies inside the file).
        var long = base
        long[at - 2] = 0x58; long[at - 1] = 0x02 // 600 bytes
        let longReport = try runToEnd(exe, ["verify", "--path", try copy("long-key", long)])
        #expect(longReport.status == 1 && (longReport.out + longReport.err).contains("a key of 600 bytes, longer than LMDB stores"),
                "\(longReport.out)\(longReport.err)")
    }

    /// A collection descriptor that names no ID kind makes every read of the collection fail:
    /// verify reports it.
    @Test func verifyReportsADamagedCollectionDescriptor() throws {
        let needle = Array("signed".utf8)
        let at = try #require((0...(base.count - needle.count)).first { base[$0] == needle[0] && Array(base[$0..<($0 + needle.count)]) == needle })
        var data = base
        data[at + 3] = UInt8(ascii: "x")
        let report = try runToEnd(exe, ["verify", "--path", try copy("descriptor", data)])
        #expect(report.status == 1, "\(report.out)\(report.err)")
        #expect((report.out + report.err).contains("'collection/default/Other': the collection descriptor names no ID kind"), "\(report.out)\(report.err)")
    }
}

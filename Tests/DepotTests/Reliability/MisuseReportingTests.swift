import DepotLMDB
import DepotTestSupport
import Foundation
import Testing

@testable import Depot
@testable import DepotCore

/// Issue 30 item 5: a failed `depot seed` into a new folder leaves no store there, and
/// `depot export --skip-damaged` exports every sound document and reports each damaged one.
/// (`nextUniqueID` in a read transaction: `RecordPipelineTests.writesThroughAReadTransactionAreTypedErrors`.)
@Suite("Misuse and damage reported as such by the CLI")
struct MisuseReportingTests {
    let folder = TemporaryFolder()

    private func seedFile(_ name: String, _ json: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder.sub("seeds"), withIntermediateDirectories: true)
        let path = folder.sub("seeds/\(name)")
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func aFailedSeedIntoANewFolderLeavesNoStore() throws {
        let depot = try #require(depotExecutable())
        let broken = try seedFile("broken.seed.json", #"{"Gadget": [{"id": "g1"}], "seedlings": [{"seedFile": "missing.seed.json"}]}"#)
        let invalid = try seedFile("invalid.seed.json", #"{"Gadget": [{"id": "g1"}"#)
        for file in [broken, invalid] {
            let result = try runProcess(depot, ["seed", "--path", folder.sub("new/deeper/store"), file])
            #expect(result.status == 1, "\(result.err)")
            #expect(result.err.contains("nothing was stored"), "\(result.err)")
            #expect(!FileManager.default.fileExists(atPath: folder.sub("new")), "the folders it would have created are gone")
        }
        // An existing empty folder stays, without a store in it.
        try FileManager.default.createDirectory(atPath: folder.sub("empty"), withIntermediateDirectories: true)
        #expect(try runProcess(depot, ["seed", "--path", folder.sub("empty"), broken]).status == 1)
        #expect(FileManager.default.fileExists(atPath: folder.sub("empty")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.sub("empty")).isEmpty, "no empty store is left")
        // A tree that can be imported creates the store.
        let good = try seedFile("good.seed.json", #"{"Gadget": [{"id": "g1", "color": "red"}]}"#)
        let seeded = try runProcess(depot, ["seed", "--path", folder.sub("new/store"), good])
        #expect(seeded.status == 0, "\(seeded.err)")
        #expect(FileManager.default.fileExists(atPath: folder.sub("new/store/data.mdb")))
    }

    @Test func exportCanSkipDamagedDocumentsAndReportEach() throws {
        let depot = try #require(depotExecutable())
        let path = folder.sub("store")
        do {
            let store = try Store(path: path)
            try store.write { tx in
                for i in 0..<10 { try tx.park(Gadget(id: "g\(i)", color: "red", serial: nil, weight: i)) }
            }
            try store.write { tx in
                let txn = try #require(tx.rawLMDBForTests)
                let db = try txn.openDatabase("depot.doc/default/Gadget", key: StringCodec.self, value: BytesCodec.self, create: false)
                // g3: a flipped byte (checksum); g7: garbage re-sealed (a valid checksum).
                var flipped = try #require(try txn.get("g3", in: db))
                flipped[flipped.count - 1] ^= 0x10
                try txn.put(flipped, forKey: "g3", in: db)
                var garbage = [UInt8](try #require(try txn.get("g7", in: db)).prefix(Record.headerSize)) + [0x01, 0x67, 0x67]
                Record.seal(&garbage)
                try txn.put(garbage, forKey: "g7", in: db)
            }
        }
        let stopping = try runProcess(depot, ["export", "--path", path])
        #expect(stopping.status == 1, "without the flag the first damaged record ends the export")
        let result = try runProcess(depot, ["export", "--path", path, "--skip-damaged"])
        #expect(result.status == 1, "damage is an error: \(result.err)")
        let lines = result.out.split(separator: "\n")
        #expect(lines.count == 8, "every sound document is exported")
        #expect(!lines.contains { $0.contains("\"g3\"") || $0.contains("\"g7\"") })
        #expect(result.err.contains("Gadget/g3") && result.err.contains("Gadget/g7"), "each damaged one is named: \(result.err)")
        #expect(result.err.contains("2 damaged documents were not exported; 8 exported"), "\(result.err)")
        // Without damage the flag changes nothing.
        let clean = folder.sub("clean")
        try Store(path: clean).write { tx in try tx.park(Gadget(id: "a", color: "red", serial: nil, weight: 1)) }
        let fine = try runProcess(depot, ["export", "--path", clean, "--skip-damaged"])
        #expect(fine.status == 0 && fine.out.split(separator: "\n").count == 1, "\(fine.err)")
    }
}

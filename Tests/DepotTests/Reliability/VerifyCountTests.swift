import DepotLMDB
import DepotTestSupport
import Foundation
import Testing

@testable import Depot
@testable import DepotCore

/// `depot verify` walked each database's tree but never compared what it found with the count
/// LMDB keeps in the database's record: a damaged record (its entry count changed on disk)
/// verified "ok" while `collections` reported the recorded count. The two are compared now.
@Suite("Verify compares recorded counts")
struct VerifyCountTests {
    let folder = TemporaryFolder()

    @Test func aDatabaseRecordWhoseCountDisagreesWithItsTreeIsAProblem() throws {
        let name = "depot.doc/default/Gadget"
        do {
            let store = try Store(path: folder.path)
            try store.write { tx in
                for i in 0..<20 { try tx.park(Gadget(id: "g\(i)", color: "red", serial: nil, weight: i)) }
            }
            #expect(try Verifier.verify(store.environment).problems.isEmpty, "a sound store verifies")
            try store.environment.close()
        }
        // The database's record in the main tree: the node's key (its name), then LMDB's MDB_db
        // (pad u32, flags u16, depth u16, branch, leaf, overflow pages u64, entries u64, root).
        let path = folder.path + "/data.mdb"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let key = Array(name.utf8)
        var patched = 0
        var start = 0
        while let found = bytes[start...].firstRange(of: key) {
            let entries = found.upperBound + 32
            start = found.upperBound
            guard entries + 8 <= bytes.count else { break }
            let count = bytes[entries..<(entries + 8)].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
            guard count == 20 else { continue }
            withUnsafeBytes(of: UInt64(777).littleEndian) { bytes.replaceSubrange(entries..<(entries + 8), with: $0) }
            patched += 1
        }
        #expect(patched > 0, "the database's record was found")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let environment = try Environment.open(path: folder.path)
        let report = try Verifier.verify(environment)
        #expect(report.problems.contains { $0.contains("'\(name)'") && $0.contains("counts 777 entries") && $0.contains("found 20") },
                "\(report.problems)")
    }
}

import Foundation
import Testing
import DepotTestSupport

/// Sizes and counts of the load generators are usage errors (exit 64) naming the option when
/// out of range: a huge --value-size trapped ("failed to allocate"), a negative --map-size was
/// accepted.
@Suite("depot fill / torture: option limits")
struct GeneratorLimitTests {
    let folder = TemporaryFolder("depot-limits")

    @Test func fillRejectsOutOfRangeSizesAndCounts() throws {
        let cases: [([String], String)] = [
            (["--count", "1", "--value-size", "9999999999999"], "--value-size must be 0 to 1073741824 bytes"),
            (["--count", "1", "--value-size", "1073741825"], "--value-size must be 0 to 1073741824 bytes"),
            (["--count", "1", "--map-size=-1"], "--map-size must be 1 to"),
            (["--count", "1", "--map-size", "0"], "--map-size must be 1 to"),
        ]
        for (args, message) in cases {
            let dir = folder.sub("fill-\(args.joined())")
            let result = try depot(["fill", "--path", dir, "--db", "a"] + args)
            #expect(result.status == 64, "\(args): \(result.err)")
            #expect(result.err.contains(message), "\(args): \(result.err)")
            #expect(!result.err.contains("Fatal error"), "\(args): \(result.err)")
            #expect(!FileManager.default.fileExists(atPath: dir), "\(args): nothing is created")
        }
        // --count: checked before the folder is opened (here a plain file, so that a missing
        // check fails fast instead of writing a billion records).
        let file = folder.sub("a-file")
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        let count = try depot(["fill", "--path", file, "--db", "a", "--count", "1000000000"])
        #expect(count.status == 64, "\(count.err)")
        #expect(count.err.contains("--count must be 0 to 999999999"), "\(count.err)")

        let ok = try depot(["fill", "--path", folder.sub("ok"), "--db", "a", "--count", "3", "--value-size", "0", "--map-size", "4096"])
        #expect(ok.status == 0, "\(ok.err)")
    }

    @Test func tortureRejectsOutOfRangeSizes() throws {
        for (args, message) in [(["--payload-size", "9999999999999"], "--payload-size must be 0 to 1073741824 bytes"),
                                (["--map-size=-1"], "--map-size must be 1 to")] {
            let result = try depot(["torture", "--path", folder.sub("torture"), "--mode", "kv", "--count", "1"] + args)
            #expect(result.status == 64, "\(args): \(result.err)")
            #expect(result.err.contains(message), "\(args): \(result.err)")
        }
    }
}

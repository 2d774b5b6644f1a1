@testable import Depot
@testable import DepotCore
import DepotTestSupport
import Foundation
import Testing

/// A document whose double may be non-finite.
struct StrictReading: Document {
    var id: String
    var value: Double
}

/// Issue #16: one strict JSON reader; what it refuses, and where it says the problem is.
@Suite("Strict JSON")
struct StrictJSONTests {
    /// The refusal of `json`, or nil when it parsed.
    func refusal(_ json: String) -> (path: String, reason: String)? {
        do {
            _ = try DocumentValue(jsonString: json)
            return nil
        } catch BinaryCodecError.rejectedJSON(_, let path, let reason) {
            return (path, reason)
        } catch {
            return ("other", "\(error)")
        }
    }

    @Test func aLeadingByteOrderMarkIsIgnoredAnywhereElseRefused() throws {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        #expect(try DocumentValue(json: Data(bom + Array(#"{"a": 1}"#.utf8))) == .object([.init("a", .int(1))]))
        #expect(throws: BinaryCodecError.self) { try DocumentValue(json: Data(Array(#"{"a": 1}"#.utf8) + bom)) }
        #expect(throws: BinaryCodecError.self) { try DocumentValue(json: Data(bom + bom + Array("1".utf8))) }
    }

    @Test func duplicateKeysAreRefusedWithTheirPath() throws {
        #expect(refusal(#"{"id":"d1","id":"d2"}"#)?.path == "$.id")
        #expect(refusal(#"{"a":{"b":[1,{"x":1,"y":2,"x":3}]}}"#)?.path == "$.a.b[1].x")
        #expect(refusal(#"{"odd key":1,"odd key":2}"#)?.path == #"$["odd key"]"#)
        // Past the linear scan of small objects: 40 keys, the last repeats the first.
        let many = (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        #expect(refusal("{\(many),\"k0\":1}")?.path == "$.k0")
        #expect(refusal("{\(many)}") == nil)
        #expect(refusal(#"[{"id":1},{"id":2}]"#) == nil, "the same key in different objects is fine")
    }

    @Test func numbersThatCannotBeHeldAreRefused() throws {
        #expect(refusal(#"{"n":1e999}"#)?.path == "$.n")
        #expect(refusal(#"{"n":1e999}"#)?.reason.contains("infinity") == true)
        #expect(refusal("-1e999")?.path == "$")
        #expect(refusal(#"{"n":[0,1e-400]}"#)?.path == "$.n[1]")
        #expect(refusal("1e-400")?.reason.contains("would become 0") == true)
        #expect(refusal("123456789012345678901234567890")?.reason.contains("64 bits") == true, "a 30-digit integer is not rounded")
        #expect(refusal("-9223372036854775809") != nil)
        // What fits is kept exactly, and zeros are zeros.
        #expect(try DocumentValue(jsonString: "18446744073709551615") == .uint(.max))
        #expect(try DocumentValue(jsonString: "-9223372036854775808") == .int(.min))
        #expect(try DocumentValue(jsonString: "0e-999") == .double(0))
        #expect(try DocumentValue(jsonString: "-0.0") == .double(-0.0))
        #expect(try DocumentValue(jsonString: "1e308") == .double(1e308))
        #expect(try DocumentValue(jsonString: "5e-324") == .double(.leastNonzeroMagnitude))
    }

    @Test func messagesNameThePathNeverTheValue() {
        let error = #expect(throws: BinaryCodecError.self) { try DocumentValue(jsonString: #"{"salary": 98765432109876543210987}"#) }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("$.salary"))
        #expect(!text.contains("98765432109876543210987"))
    }

    @Test func seedFilesNameTheFileAndThePath() throws {
        let folder = TemporaryFolder("depot-strict-seed")
        let seeds = URL(fileURLWithPath: folder.sub("seeds"))
        try FileManager.default.createDirectory(at: seeds, withIntermediateDirectories: true)
        let store = try Store(path: folder.sub("store"))
        let cases: [(String, String)] = [
            (#"{"Department": [{"id": "d1", "id": "d2"}]}"#, "$.Department[0].id"),
            (#"{"Department": [{"id": "d1", "budget": 1e999}]}"#, "$.Department[0].budget"),
            (#"{"Department": [{"id": "d1", "budget": 123456789012345678901234567890}]}"#, "$.Department[0].budget"),
            (#"{"Department": [{"id": "d1", "budget": 1e-400}]}"#, "$.Department[0].budget"),
        ]
        for (index, (json, path)) in cases.enumerated() {
            let file = seeds.appendingPathComponent("bad\(index).seed.json")
            try Data(json.utf8).write(to: file)
            let error = #expect(throws: DepotError.self) { try store.seed(from: file) }
            #expect(error?.seedProblem == .malformedJSON)
            #expect(error?.fieldPath == path, "the seed error carries the JSON path")
            #expect(error?.file?.hasSuffix("bad\(index).seed.json") == true, "\(String(describing: error))")
            #expect(error.map { "\($0)" }?.contains(path) == true, "\(String(describing: error))")
        }
        #expect(try store.read { try $0.collections() } == [], "nothing was stored")
    }

    @Test func exportNeverFailsOnAStoredNonFiniteNumber() throws {
        let folder = TemporaryFolder("depot-nonfinite")
        let store = try Store(path: folder.path)
        // Swift code (or a record from before the strict reader) can store a non-finite double.
        try store.write { tx in
            try tx.park(StrictReading(id: "a", value: .infinity))
            try tx.park(StrictReading(id: "b", value: -.infinity))
            try tx.park(StrictReading(id: "c", value: .nan))
            try tx.park(StrictReading(id: "d", value: 1.5))
        }
        var lines: [String] = []
        try store.read { tx in
            try tx.export { document in
                lines.append(try document.jsonLine())
                return true
            }
        }
        #expect(lines.count == 4)
        #expect(lines.contains { $0.contains(#""value":"Infinity""#) })
        #expect(lines.contains { $0.contains(#""value":"-Infinity""#) })
        #expect(lines.contains { $0.contains(#""value":"NaN""#) })
        #expect(lines.contains { $0.contains(#""value":1.5"#) })
        for line in lines { #expect(throws: Never.self) { _ = try DocumentValue(jsonString: line) } }
    }
}

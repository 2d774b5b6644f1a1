import DepotTestSupport
import Foundation
import Synchronization
import Testing
@testable import Depot
@testable import DepotCore

/// How often the hand-written generated codec below ran (tests in this file only).
private let generatedCalls = Mutex((encoded: 0, decoded: 0))

/// A document with a hand-written ``BinaryCodableDocument`` conformance (what `@BinaryCodable`
/// generates), counting its calls so that the tests can tell which path the store took.
private struct Gauge: Document, BinaryCodableDocument, Equatable {
    var id: String
    var label: String
    var readings: [String]
    var level: Int

    static let keys: [StaticString] = ["id", "label", "readings", "level"]
    /// Records written before `level` existed read as level 0.
    static var fieldDefaults: [String: DocumentValue] { ["level": .int(0)] }

    func encodeBinary(into writer: inout BinaryRecordWriter) throws {
        generatedCalls.withLock { $0.encoded += 1 }
        try writer.encode(id, forKey: "id")
        try writer.encode(label, forKey: "label")
        try writer.encode(readings, forKey: "readings")
        try writer.encode(level, forKey: "level")
    }

    init(id: String, label: String, readings: [String], level: Int) {
        self.id = id
        self.label = label
        self.readings = readings
        self.level = level
    }

    init(binaryRecord reader: inout BinaryRecordReader) throws {
        generatedCalls.withLock { $0.decoded += 1 }
        var id: String?, label: String?, readings: [String]?, level: Int?
        while let field = try reader.nextField(in: Self.keys) {
            switch field {
            case 0: id = try reader.decode(String.self)
            case 1: label = try reader.decode(String.self)
            case 2: readings = try reader.decode([String].self)
            case 3: level = try reader.decode(Int.self)
            default: break
            }
        }
        guard let id else { throw reader.missingField("id") }
        guard let label else { throw reader.missingField("label") }
        guard let readings else { throw reader.missingField("readings") }
        guard let level else { throw reader.missingField("level") }
        self.init(id: id, label: label, readings: readings, level: level)
    }
}

/// How often `Link`'s generated decoder ran.
private let linkDecodes = Mutex(0)

/// A chain of documents through references, with a hand-written generated codec.
private struct Link: Document, BinaryCodableDocument, Equatable {
    var id: Int
    var next: [Link]

    static let keys: [StaticString] = ["id", "next"]

    init(id: Int, next: [Link]) {
        self.id = id
        self.next = next
    }

    func encodeBinary(into writer: inout BinaryRecordWriter) throws {
        try writer.encode(id, forKey: "id")
        try writer.encode(next, forKey: "next")
    }

    init(binaryRecord reader: inout BinaryRecordReader) throws {
        linkDecodes.withLock { $0 += 1 }
        var id: Int?, next: [Link]?
        while let field = try reader.nextField(in: Self.keys) {
            switch field {
            case 0: id = try reader.decode(Int.self)
            case 1: next = try reader.decode([Link].self)
            default: break
            }
        }
        guard let id else { throw reader.missingField("id") }
        guard let next else { throw reader.missingField("next") }
        self.init(id: id, next: next)
    }
}

/// How often `LinkV2`'s generated decoder ran.
private let linkV2Decodes = Mutex(0)

/// A chain link as first stored (no `label`).
private struct LinkV1: Document {
    static var collection: String { "ChainLink" }
    var id: Int
    var next: [LinkV1]
}

/// The same chain link with a `label` that older records lack (a field default).
private struct LinkV2: Document, BinaryCodableDocument, Equatable {
    static var collection: String { "ChainLink" }
    static var fieldDefaults: [String: DocumentValue] { ["label": .string("none")] }
    var id: Int
    var next: [LinkV2]
    var label: String

    static let keys: [StaticString] = ["id", "next", "label"]

    init(id: Int, next: [LinkV2], label: String) {
        self.id = id
        self.next = next
        self.label = label
    }

    func encodeBinary(into writer: inout BinaryRecordWriter) throws {
        try writer.encode(id, forKey: "id")
        try writer.encode(next, forKey: "next")
        try writer.encode(label, forKey: "label")
    }

    init(binaryRecord reader: inout BinaryRecordReader) throws {
        linkV2Decodes.withLock { $0 += 1 }
        var id: Int?, next: [LinkV2]?, label: String?
        while let field = try reader.nextField(in: Self.keys) {
            switch field {
            case 0: id = try reader.decode(Int.self)
            case 1: next = try reader.decode([LinkV2].self)
            case 2: label = try reader.decode(String.self)
            default: break
            }
        }
        guard let id else { throw reader.missingField("id") }
        guard let next else { throw reader.missingField("next") }
        guard let label else { throw reader.missingField("label") }
        self.init(id: id, next: next, label: label)
    }
}

/// The same fields through synthesized `Codable` only.
private struct PlainGauge: Document, Equatable {
    static var collection: String { "Gauge" }
    var id: String
    var label: String
    var readings: [String]
    var level: Int
}

@Suite("Document hot path", .serialized)
struct HotPathTests {
    @Test func generatedCodecIsUsedForParkRetrieveAndScans() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let gauges = (0..<20).map { Gauge(id: "g\($0)", label: "gauge \($0)", readings: ["a", "\($0)"], level: $0) }
        let before = generatedCalls.withLock { $0 }
        try store.write { tx in for g in gauges { try tx.park(g) } }
        let afterPark = generatedCalls.withLock { $0 }
        #expect(afterPark.encoded - before.encoded == gauges.count)
        let read = try store.read { tx in try gauges.map { try tx.retrieve(Gauge.self, id: $0.id) } }
        #expect(read == gauges.map { Optional($0) })
        #expect(try store.read { try $0.retrieveAll(Gauge.self) }.count == gauges.count)
        let queried = try store.read { try $0.execute(FetchRequest<Gauge>().matching(\.level, .equalTo(7))) }.documents
        #expect(queried == [gauges[7]])
        let afterRead = generatedCalls.withLock { $0 }
        #expect(afterRead.decoded - afterPark.decoded == 3 * gauges.count)
        // Same bytes as Codable: the Codable twin reads what the generated code wrote, and back.
        let plain = try store.read { try $0.retrieve(PlainGauge.self, id: "g3") }
        #expect(plain == PlainGauge(id: "g3", label: "gauge 3", readings: ["a", "3"], level: 3))
        try store.write { tx in try tx.park(PlainGauge(id: "p", label: "plain", readings: [], level: -1)) }
        #expect(try store.read { try $0.retrieve(Gauge.self, id: "p") } == Gauge(id: "p", label: "plain", readings: [], level: -1))
    }

    @Test func generatedDecodingErrorsNameTheField() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        var bad = DynamicObject(entity: "Gauge", id: "bad")
        bad.label = 7
        bad.readings = .array([])
        bad.level = 1
        try store.write { tx in try tx.park(bad) }
        #expect {
            try store.read { try $0.retrieve(Gauge.self, id: "bad") }
        } throws: { error in
            guard let error = error as? DepotError, error.code == .decodingFailed else { return false }
            return "\(error)".contains("label")
        }
    }

    /// Reads decode a generated type directly; what that path cannot read — a damaged record, an
    /// older record without a defaulted field — goes through the general path and reads (or is
    /// reported) exactly as for a `Codable` type.
    @Test func directDecodingLeavesDamagedAndOlderRecordsToTheGeneralPath() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        var old = DynamicObject(entity: "Gauge", id: "old")
        old.label = "written before level"
        old.readings = .array([.string("r")])
        try store.write { tx in
            try tx.park(old)
            try tx.park(Gauge(id: "new", label: "current", readings: [], level: 9))
            try tx.park(Gauge(id: "damaged", label: "to be damaged", readings: [], level: 1))
        }
        #expect(try store.read { try $0.retrieve(Gauge.self, id: "old") } == Gauge(id: "old", label: "written before level", readings: ["r"], level: 0))
        #expect(try store.read { try $0.retrieve(Gauge.self, id: "new")?.level } == 9)
        try damageStoredRecord(store, collection: "Gauge", id: "damaged", fromEnd: 2)
        #expect(throws: DepotError.checksumMismatch(alias: "default", collection: "Gauge", id: "damaged")) {
            _ = try store.read { try $0.retrieve(Gauge.self, id: "damaged") }
        }
        #expect(throws: DepotError.checksumMismatch(alias: "default", collection: "Gauge", id: "damaged")) {
            _ = try store.read { try $0.retrieveAll(Gauge.self) }
        }
    }

    /// A failure deep in a chain of references is reported after one decode per level: the
    /// direct path does not decode again what failed (which would double the work per level).
    @Test func aDanglingReferenceDeepInAChainIsReportedAfterOneDecodePerLevel() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let depth = 16
        var chain = Link(id: depth - 1, next: [])
        for id in stride(from: depth - 2, through: 0, by: -1) { chain = Link(id: id, next: [chain]) }
        try store.write { tx in try tx.park(chain) }
        #expect(try store.read { try $0.retrieve(Link.self, id: 0) } == chain)
        try store.write { tx in _ = try tx.delete(Link.self, id: depth - 1) }
        let before = linkDecodes.withLock { $0 }
        let error = #expect(throws: DepotError.self) { try store.read { try $0.retrieve(Link.self, id: 0) } }
        #expect(error?.code == .danglingReference)
        #expect(linkDecodes.withLock { $0 } - before == depth - 1)
    }

    /// Older records lacking a defaulted field are filled in before they are decoded: a chain of
    /// them reads with one decode per level (not one that fails and one that works, per level).
    @Test func aChainOfOlderRecordsIsReadWithOneDecodePerLevel() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let depth = 12
        var chain = LinkV1(id: depth - 1, next: [])
        for id in stride(from: depth - 2, through: 0, by: -1) { chain = LinkV1(id: id, next: [chain]) }
        try store.write { tx in try tx.park(chain) }
        let before = linkV2Decodes.withLock { $0 }
        let read = try #require(try store.read { try $0.retrieve(LinkV2.self, id: 0) })
        #expect(linkV2Decodes.withLock { $0 } - before == depth)
        var link = read, levels = 1
        while let next = link.next.first {
            #expect(next.label == "none" && next.id == levels)
            link = next
            levels += 1
        }
        #expect(levels == depth && read.label == "none")
    }

    /// Inserts are put as new first (one look-up); updates must still count revisions, on every driver.
    @Test(arguments: DriverKind.allCases)
    func reparkingCountsRevisionsAndKeepsTheLastValue(_ kind: DriverKind) throws {
        let folder = TemporaryFolder()
        let store = try kind.makeStore(folder)
        for level in 1...3 {
            let revision = try store.write { tx in try tx.park(Gauge(id: "g", label: "v\(level)", readings: [], level: level)) }
            #expect(revision == UInt64(level))
        }
        try store.write { tx throws in
            #expect(try tx.park(Gauge(id: "g", label: "v4", readings: [], level: 4)) == 4)
            #expect(try tx.park(Gauge(id: "g", label: "v5", readings: [], level: 5)) == 5)
            #expect(throws: DepotError.self) { try tx.park(Gauge(id: "g", label: "no", readings: [], level: 0), ifRevision: 0) }
        }
        #expect(try store.read { try $0.retrieve(Gauge.self, id: "g")?.level } == 5)
        #expect(try store.read { try $0.revision(of: Gauge.self, id: "g") } == 5)
        #expect(try store.read { try $0.count(Gauge.self) } == 1)
    }

    /// A conditional park checks the revision before it parks anything it references.
    @Test func aFailedConditionalParkLeavesReferencedDocumentsAlone() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        try store.write { tx in try tx.park(sampleEmployee("e", department: Department(id: "d", name: "R&D"))) }
        try store.write { tx throws in
            let changed = sampleEmployee("e", department: Department(id: "d", name: "renamed"))
            let error = #expect(throws: DepotError.self) { try tx.park(changed, ifRevision: 0) }
            #expect(error?.code == .revisionConflict)
        }
        #expect(try store.read { try $0.retrieve(Department.self, id: "d")?.name } == "R&D")
        #expect(try store.read { try $0.revision(of: Department.self, id: "d") } == 1)
    }

}

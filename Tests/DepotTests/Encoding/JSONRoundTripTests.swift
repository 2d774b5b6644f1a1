import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore
@testable import DepotEngine

/// Values that JSON output (export, `doc get`, `query`) wrote in a form that did not read back
/// as the same Swift value: dates cut to milliseconds, and non-finite doubles written as words
/// that a `Double` field then refused.
@Suite("JSON output reads back as the same values")
struct JSONRoundTripTests {
    struct Measurement: Codable, Equatable {
        var taken: Date
        var value: Double
        var ratio: Float
    }

    /// Every date, with a fraction of any size, reads back exactly from its ISO-8601 text (it was
    /// written to the millisecond: `1_700_000_000.123456` came back as `.123`).
    @Test func isoDatesReadBackExactly() throws {
        var rng = SystemRandomNumberGenerator()
        var dates = [Date(timeIntervalSince1970: 1_700_000_000.123456), Date(timeIntervalSince1970: 0.5),
                     Date(timeIntervalSinceReferenceDate: -0.25), Date(timeIntervalSinceReferenceDate: 12.000001),
                     Date(timeIntervalSince1970: 1_700_000_000), Date(timeIntervalSince1970: -86_400.75)]
        for _ in 0..<2_000 { dates.append(Date(timeIntervalSince1970: Double.random(in: -3e9...5e9, using: &rng))) }
        for date in dates {
            let text = DocumentValue.formatISO8601(date)
            #expect(DocumentValue.parseISO8601(text) == date, "\(date.timeIntervalSinceReferenceDate) → \(text)")
        }
        #expect(DocumentValue.formatISO8601(Date(timeIntervalSinceReferenceDate: 0.5)) == "2001-01-01T00:00:00.500Z")
        #expect(DocumentValue.formatISO8601(Date(timeIntervalSinceReferenceDate: 3)) == "2001-01-01T00:00:03Z")
        // Text written elsewhere, with six digits and an offset.
        #expect(DocumentValue.parseISO8601("2001-01-01T02:00:00.250000+02:00") == Date(timeIntervalSinceReferenceDate: 0.25))
        // A fraction after minutes, or followed by anything but a zone, is no date.
        for text in ["2023-01-01T12:00.5Z", "2023-01-01T12:00:00.5x"] {
            #expect(DocumentValue.parseISO8601(text) == nil, "\(text)")
        }
    }

    /// A document's JSON (as `doc get` prints it and `doc put` or `import` reads it back) decodes
    /// to the same value: dates to the last digit, NaN and infinities included.
    @Test func aDocumentsJSONDecodesToTheSameValue() throws {
        for value in [Measurement(taken: Date(timeIntervalSince1970: 1_700_000_000.123456), value: .nan, ratio: .infinity),
                      Measurement(taken: Date(timeIntervalSince1970: 3.25), value: -.infinity, ratio: -.infinity),
                      Measurement(taken: Date(timeIntervalSince1970: 1), value: 2.5, ratio: .nan),
                      Measurement(taken: Date(timeIntervalSinceReferenceDate: .infinity), value: 1, ratio: 1)] {
            let json = try DocumentValue(binary: BinaryEncoder().encode(value)).jsonData()
            let back = try DocumentValue(json: json)
            let decoded = try BinaryDecoder().decode(Measurement.self, from: back.binary())
            #expect(decoded.taken == value.taken)
            #expect(decoded.value == value.value || (decoded.value.isNaN && value.value.isNaN), "\(String(decoding: json, as: UTF8.self))")
            #expect(decoded.ratio == value.ratio || (decoded.ratio.isNaN && value.ratio.isNaN))
        }
    }

    /// `importDocument(_:)` dropped the exported ID kind: an unsigned collection whose IDs fit
    /// a signed integer came back signed.
    @Test func importDocumentKeepsTheIDKind() throws {
        struct Ticket: Document { var id: UInt64; var title: String }
        let folder = TemporaryFolder()
        let source = try Store(path: folder.sub("a")), copy = try Store(path: folder.sub("b"))
        try source.write { tx in try tx.park(Ticket(id: 7, title: "seven")) }
        var exported: [ExportedDocument] = []
        try source.read { tx in try tx.export { exported.append($0); return true } }
        try copy.write { tx in for document in exported { try tx.importDocument(document) } }
        #expect(try copy.read { tx in try tx.collectionInfo(Ticket.collection)?.idKind } == .unsigned)
        #expect(try copy.read { tx in try tx.retrieve(Ticket.self, id: 7) }?.title == "seven")
    }
}

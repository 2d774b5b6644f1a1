@testable import Depot
@testable import DepotCore
import DepotTestSupport
import Foundation
import Testing

/// Traps a source review found reachable from stored bytes or the public API: each is a typed
/// error (or a clamped figure) now.
@Suite("Reachable traps")
struct ReachableTrapTests {
    struct Measured: Codable { var amount: Double }
    struct Priced: Codable { var amount: Decimal }

    /// `Decimal(Double)` traps on an infinity: a record whose field held `.infinity` as a
    /// `Double` (or a damaged one) crashed the reader of a `Decimal` field.
    @Test func anInfiniteNumberReadAsDecimalIsAnError() throws {
        for value in [Double.infinity, -Double.infinity] {
            let bytes = try BinaryEncoder().encode(Measured(amount: value))
            #expect(throws: DecodingError.self) { _ = try BinaryDecoder().decode(Priced.self, from: bytes) }
        }
        let finite = try BinaryEncoder().encode(Measured(amount: 2.5))
        #expect(try BinaryDecoder().decode(Priced.self, from: finite).amount == Decimal(2.5))
    }

    /// `keys(withPrefix:limit:)` added the unsaved removals to the limit: a limit near
    /// `Int.max` overflowed.
    @Test func aKeyListingLimitNearIntMaxDoesNotOverflow() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let kv = store.keyValue()
        for key in ["a", "b", "c"] { kv[key] = 1 }
        try kv.save()
        kv["a"] = nil as Int?
        kv["b"] = nil as Int?
        #expect(try kv.keys(withPrefix: "", limit: Int.max - 1) == ["c"])
    }

    /// A negative count made `SeedFixture.generate` form the range `0..<-1`.
    @Test func aSeedFixtureWithANegativeCountIsRefused() throws {
        let folder = TemporaryFolder()
        let error = #expect(throws: DepotError.self) {
            try SeedFixture.generate(in: URL(fileURLWithPath: folder.path), companies: -1, employeesPerCompany: 1)
        }
        #expect(error?.code == .invalidOption && error?.message.contains("companies") == true, "\(String(describing: error))")
        #expect(throws: DepotError.self) {
            try SeedFixture.generate(in: URL(fileURLWithPath: folder.path), companies: Int.max, employeesPerCompany: 2)
        }
    }

    /// A date far past the calendar's range is formatted (or named), never a crash.
    @Test func aDateFarOutOfRangeIsWrittenAsJSON() throws {
        for interval in [1e300, -1e300, 1e20] {
            let text = try DocumentValue.date(Date(timeIntervalSinceReferenceDate: interval)).jsonString()
            #expect(!text.isEmpty)
        }
    }
}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Int128: IntegerDocumentID {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
struct WideIDNote: Document {
    var id: Int128
    var text: String
}

extension ReachableTrapTests {
    /// Integer IDs are stored in 64 bits: an `Int128` ID past `Int64.max` trapped converting.
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @Test func anIDTypeWiderThan64BitsIsRefused() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let error = #expect(throws: DepotError.self) {
            try store.write { tx in try tx.park(WideIDNote(id: Int128(Int64.max) + 1, text: "x")) }
        }
        #expect(error?.code == .invalidKey && error?.message.contains("128 bits") == true, "\(String(describing: error))")
        #expect(throws: DepotError.self) { _ = try store.read { tx in try tx.retrieve(WideIDNote.self, id: 1) } }
    }
}

@testable import Depot
@testable import DepotCore
import Foundation
import Testing
import DepotTestSupport

struct Wide: Codable { var n: Int }
struct Narrow: Codable { var n: UInt8 }
struct Outer: Codable { var address: CodecAddress }
struct CodecTagged: Codable { var tags: [Int] }
struct StrictContact: Codable { var name: String; var address: StrictAddress }
struct StrictAddress: Codable { var zip: Int }

@Suite struct ErrorTests {
    @Test func overflowIsDataCorruptedWithPath() throws {
        let bytes = try BinaryEncoder().encode(Wide(n: 300))
        do {
            _ = try BinaryDecoder().decode(Narrow.self, from: bytes)
            Issue.record("expected error")
        } catch DecodingError.dataCorrupted(let ctx) {
            #expect(renderCodingPath(ctx.codingPath) == "n")
        }
        #expect(throws: DecodingError.self) { try BinaryDecoder().decode(Int8.self, from: BinaryEncoder().encode(-129)) }
        #expect(throws: DecodingError.self) { try BinaryDecoder().decode(UInt.self, from: BinaryEncoder().encode(-1)) }
        #expect(throws: DecodingError.self) { try BinaryDecoder().decode(Int64.self, from: BinaryEncoder().encode(UInt64.max)) }
        #expect(try BinaryDecoder().decode(UInt8.self, from: BinaryEncoder().encode(255)) == 255)
        #expect(try BinaryDecoder().decode(Int.self, from: BinaryEncoder().encode(3.0)) == 3)
        #expect(throws: DecodingError.self) { try BinaryDecoder().decode(Int.self, from: BinaryEncoder().encode(3.5)) }
    }

    @Test func typeMismatchPath() throws {
        let v: DocumentValue = ["name": "x", "address": ["zip": "not a number"]]
        do {
            _ = try BinaryDecoder().decode(StrictContact.self, from: v.binary())
            Issue.record("expected error")
        } catch let e as DecodingError {
            guard case .typeMismatch = e else { Issue.record("wrong error \(e)"); return }
            #expect(e.fieldPath == "address.zip")
        }
    }

    @Test func arrayElementPath() throws {
        let v: DocumentValue = ["tags": [1, 2, "three"]]
        do {
            _ = try BinaryDecoder().decode(CodecTagged.self, from: v.binary())
            Issue.record("expected error")
        } catch let e as DecodingError {
            #expect(e.fieldPath == "tags[2]")
        }
        let s: DocumentValue = ["tags": ["a", "b", 3]]
        struct StringTags: Codable { var tags: [String] }
        do {
            _ = try BinaryDecoder().decode(StringTags.self, from: s.binary())
            Issue.record("expected error")
        } catch let e as DecodingError {
            #expect(e.fieldPath == "tags[2]")
        }
        let nested: DocumentValue = ["contacts": [["name": "a", "address": ["zip": 1]], ["name": "b", "address": [:]]]]
        struct Book: Codable { var contacts: [StrictContact] }
        do {
            _ = try BinaryDecoder().decode(Book.self, from: nested.binary())
            Issue.record("expected error")
        } catch let e as DecodingError {
            guard case .keyNotFound = e else { Issue.record("wrong error \(e)"); return }
            #expect(e.fieldPath == "contacts[1].address.zip")
        }
    }

    @Test func missingKeyAndNull() throws {
        let v: DocumentValue = ["street": "s"]
        #expect {
            try BinaryDecoder().decode(CodecAddress.self, from: v.binary())
        } throws: { e in
            guard let e = e as? DecodingError, case .keyNotFound(let k, _) = e else { return false }
            return k.stringValue == "zip" && e.fieldPath == "zip"
        }
        let n: DocumentValue = ["street": "s", "zip": .null]
        #expect {
            try BinaryDecoder().decode(CodecAddress.self, from: n.binary())
        } throws: { e in
            guard let e = e as? DecodingError, case .valueNotFound = e else { return false }
            return e.fieldPath == "zip"
        }
        let o: DocumentValue = ["address": .null]
        #expect(throws: DecodingError.self) { try BinaryDecoder().decode(Outer.self, from: o.binary()) }
        #expect(throws: DecodingError.self) { try BinaryDecoder().decode(CodecAddress.self, from: DocumentValue.array([]).binary()) }
    }

    @Test func versionAndStructuralErrors() throws {
        #expect(throws: BinaryCodecError.unsupportedVersion(2)) { try BinaryDecoder().decode(Int.self, from: [2, 3, 2]) }
        #expect(throws: BinaryCodecError.emptyInput) { try BinaryDecoder().decode(Int.self, from: [UInt8]()) }
        #expect(throws: BinaryCodecError.unsupportedVersion(9)) { try DocumentValue(binary: [9]) }
        #expect(throws: BinaryCodecError.self) { try BinaryDecoder().decode(Int.self, from: [1, 3, 2, 0]) }  // trailing
        #expect(throws: BinaryCodecError.self) { try BinaryDecoder().decode(String.self, from: [1, 7, 10, 65]) }  // length
        #expect(throws: BinaryCodecError.self) { try BinaryDecoder().decode(String.self, from: [1, 7, 2, 0xC3, 0x28]) }  // bad UTF-8
    }

    @Test func depthLimit() throws {
        var bytes: [UInt8] = [1]
        for _ in 0..<1000 { bytes += [BinaryTagForTests.array, 1, 0] }
        #expect(throws: (any Error).self) { try DocumentValue(binary: bytes) }
        var deep: DocumentValue = .null
        for _ in 0..<600 { deep = .array([deep]) }
        #expect(throws: BinaryCodecError.nestingTooDeep(limit: 512)) { try DocumentValue(binary: deep.binary()) }
        indirect enum Chain: Codable { case end, next(Chain) }
        var c = Chain.end
        for _ in 0..<600 { c = .next(c) }
        #expect(throws: EncodingError.self) { try BinaryEncoder().encode(c) }
    }

    @Test func nonSequentialContainerUseIsReported() throws {
        struct Bad: Encodable {
            enum K: CodingKey { case a, b }
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: K.self)
                var a = c.nestedUnkeyedContainer(forKey: .a)
                var b = c.nestedUnkeyedContainer(forKey: .b)
                try b.encode(1)
                try a.encode(2)
            }
        }
        #expect(throws: EncodingError.self) { try BinaryEncoder().encode(Bad()) }
    }

    @Test func renderPaths() {
        struct K: CodingKey {
            var stringValue: String
            var intValue: Int?
            init(stringValue: String) { self.stringValue = stringValue }
            init(intValue: Int) { self.stringValue = "Index \(intValue)"; self.intValue = intValue }
        }
        #expect(renderCodingPath([K(stringValue: "a"), K(intValue: 3), K(stringValue: "b")]) == "a[3].b")
        #expect(renderCodingPath([]) == "")
        // A dictionary's integer key (its string form is the number) is an index too; a key
        // with an integer value but another name stays a name.
        var seven = K(stringValue: "7")
        seven.intValue = 7
        var named = K(stringValue: "count")
        named.intValue = 2
        #expect(renderCodingPath([K(stringValue: "scores"), seven, named]) == "scores[7].count")
    }

    /// Errors of the document layer and of the codec render a path the same way (one renderer).
    @Test func aDictionaryKeyRendersTheSameInADocumentError() throws {
        struct Scores: Codable { var byDay: [Int: UInt8] }
        struct Wider: Codable { var byDay: [Int: Int] }
        let bytes = try BinaryEncoder().encode(Wider(byDay: [4: 300]))
        do {
            _ = try BinaryDecoder().decode(Scores.self, from: bytes)
            Issue.record("a value out of range decoded")
        } catch let error as DecodingError {
            #expect(error.fieldPath == "byDay[4]")
            let wrapped = DepotError.decoding(error, of: "value 'x'", id: "x") as? DepotError
            #expect(wrapped?.fieldPath == "byDay[4]")
        }
    }
}

enum BinaryTagForTests {
    static let array: UInt8 = 0x09
}

import Foundation
import Testing
import DepotTestSupport
@testable import DepotLMDB

@Suite("Codecs")
struct CodecTests {
    func bytes<C: LMDBCodec>(_ codec: C.Type, _ value: C.Value) -> [UInt8] { C.withBytes(of: value) { [UInt8]($0) } }
    func roundTrip<C: LMDBCodec>(_ codec: C.Type, _ value: C.Value) throws -> C.Value {
        try C.withBytes(of: value) { try C.decode($0) }
    }

    @Test func stringIsExactlyUTF8() throws {
        #expect(bytes(StringCodec.self, "héllo") == Array("héllo".utf8))
        #expect(try roundTrip(StringCodec.self, "👩‍💻 e\u{301}") == "👩‍💻 e\u{301}")
        #expect(try roundTrip(StringCodec.self, "") == "")
    }

    @Test(arguments: [Int64.min, -1_000_000, -1, 0, 1, 255, 256, Int64.max])
    func signedIntegersRoundTrip(_ value: Int64) throws {
        #expect(try roundTrip(BigEndian<Int64>.self, value) == value)
        #expect(try roundTrip(BigEndian<Int32>.self, Int32(truncatingIfNeeded: value)) == Int32(truncatingIfNeeded: value))
    }

    @Test func integerByteOrderIsNumericOrder() throws {
        var rng = SystemRandomNumberGenerator()
        var signed = (0..<500).map { _ in Int64.random(in: .min ... .max, using: &rng) } + [.min, .max, 0, -1, 1]
        signed.shuffle()
        let bySigned = signed.sorted()
        let byBytes = signed.sorted { bytes(BigEndian<Int64>.self, $0).lexicographicallyPrecedes(bytes(BigEndian<Int64>.self, $1)) }
        #expect(bySigned == byBytes)
        let unsigned = (0..<500).map { _ in UInt32.random(in: .min ... .max, using: &rng) }
        #expect(unsigned.sorted() == unsigned.sorted { bytes(BigEndian<UInt32>.self, $0).lexicographicallyPrecedes(bytes(BigEndian<UInt32>.self, $1)) })
        let small = (Int16.min...Int16.max).map { $0 }
        #expect(small == small.sorted { bytes(BigEndian<Int16>.self, $0).lexicographicallyPrecedes(bytes(BigEndian<Int16>.self, $1)) })
    }

    @Test func uuidAndBytesAndData() throws {
        let id = UUID()
        #expect(try roundTrip(UUIDCodec.self, id) == id)
        #expect(bytes(UUIDCodec.self, id).count == 16)
        #expect(try roundTrip(BytesCodec.self, [0, 1, 255]) == [0, 1, 255])
        #expect(try roundTrip(DataCodec.self, Data([9, 8])) == Data([9, 8]))
        #expect(try roundTrip(NativeEndian<UInt32>.self, 77) == 77)
    }

    @Test func wrongSizesThrow() {
        let three: [UInt8] = [1, 2, 3]
        three.withUnsafeBytes { buffer in
            #expect(throws: CodecError.self) { _ = try BigEndian<UInt64>.decode(buffer) }
            #expect(throws: CodecError.self) { _ = try UUIDCodec.decode(buffer) }
        }
    }

    @Test func integerKeysSortNumericallyInLMDB() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let db = try env.openDatabase("ints", key: BigEndian<Int64>.self, value: StringCodec.self)
        let values: [Int64] = [5, -3, 1000, -1000, 0, 42, Int64.min, Int64.max]
        try env.write { txn in for v in values { try txn.put("\(v)", forKey: v, in: db) } }
        let keys = try env.read { try $0.entries(in: db).map(\.key) }
        #expect(keys == values.sorted())
        let native = try env.openDatabase("native", key: NativeEndian<UInt>.self, value: StringCodec.self, flags: .integerKey)
        try env.write { txn in for v in [300, 2, 70000] as [UInt] { try txn.put("\(v)", forKey: v, in: native) } }
        #expect(try env.read { try $0.entries(in: native).map(\.key) } == [2, 300, 70000])
    }
}

@testable import DepotEngine
import Foundation
import Testing

/// ASCII strings of up to 15 bytes are decoded by building the standard library's small-string
/// form directly (`BinaryReader.smallASCIIBits`), where the layout check at start-up says that
/// form holds. They must be the very strings the standard library would have made: equal, equal
/// in hash, in count and bytes, usable as any other string.
@Suite("Short ASCII strings built in place")
struct SmallStringTests {
    /// Bytes covering every ASCII value in every position of the first 15.
    static func samples() -> [[UInt8]] {
        var result: [[UInt8]] = []
        for n in 0...15 {
            for shift in 0..<9 {
                result.append((0..<n).map { UInt8(($0 * 17 + shift * 13 + n) % 128) })
            }
            result.append(Array(repeating: 0x7F, count: n))
            result.append(Array(repeating: 0, count: n))
            result.append(Array("Person 12345678".utf8.prefix(n)))
        }
        return result
    }

    @Test func theLayoutHoldsOnThisPlatform() {
        #if _pointerBitWidth(_64) && _endian(little)
        #expect(BinaryReader.smallStringLayoutHolds)
        #endif
    }

    @Test func aBuiltStringIsTheStandardLibrarysString() {
        for bytes in Self.samples() {
            let expected = String(decoding: bytes, as: UTF8.self)
            let built = bytes.withUnsafeBytes { raw in
                BinaryReader.asciiString(raw.baseAddress ?? UnsafeRawPointer(bitPattern: 0x10)!, raw.count)
            }
            #expect(built == expected, "\(bytes)")
            #expect(built.hashValue == expected.hashValue, "\(bytes)")
            #expect(Array(built.utf8) == bytes)
            #expect(built.utf8.count == bytes.count)
            #expect(built.count == expected.count)
            #expect(built.unicodeScalars.map(\.value) == bytes.map(UInt32.init))
            var grown = built
            grown += "!"
            #expect(grown == expected + "!")
            #if _pointerBitWidth(_64) && _endian(little)
            #expect(unsafeBitCast(built, to: (UInt64, UInt64).self) == unsafeBitCast(expected, to: (UInt64, UInt64).self),
                    "\(bytes)")
            #endif
        }
    }

    @Test func theBitsReadOnlyTheBytesAsked() {
        #if _pointerBitWidth(_64) && _endian(little)
        // The bytes sit at the end of a buffer whose following byte is not ASCII: a word load
        // past the string would put 0xFF into the bits.
        for n in 0...15 {
            var buffer = Array(repeating: UInt8(0xFF), count: 32)
            for i in 0..<n { buffer[8 + i] = UInt8(0x41 + i) }
            let bits = buffer.withUnsafeBytes { BinaryReader.smallASCIIBits($0.baseAddress! + 8, n) }
            let expected = unsafeBitCast(String(decoding: buffer[8..<(8 + n)], as: UTF8.self), to: (UInt64, UInt64).self)
            #expect(bits.0 == expected.0 && bits.1 == expected.1, "\(n) bytes")
        }
        #endif
    }

    struct Strings: Codable, Equatable {
        var values: [String]
        var single: String
    }

    @Test func decodedStringsOfEveryShortLengthRoundTrip() throws {
        for n in 0...17 {
            let text = String((0..<n).map { Character(UnicodeScalar(UInt8(0x61 + $0 % 26))) })
            let value = Strings(values: [text, String(text.reversed()), "", "é" + text], single: text)
            let back = try BinaryDecoder().decode(Strings.self, from: try BinaryEncoder().encode(value))
            #expect(back == value, "\(n) bytes")
            #expect(back.single.utf8.count == n)
        }
    }
}

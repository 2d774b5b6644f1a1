@testable import Depot
@testable import DepotCore
import Foundation
import Testing
import DepotTestSupport

func roundTrip<T: Codable>(_ value: T, encoder: BinaryEncoder = BinaryEncoder(), decoder: BinaryDecoder = BinaryDecoder()) throws -> T {
    let bytes = try encoder.encode(value)
    return try decoder.decode(T.self, from: bytes)
}

func expectRoundTrip<T: Codable & Equatable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let back = try roundTrip(value)
    #expect(back == value, sourceLocation: sourceLocation)
}

/// Deterministic PRNG for fuzzing.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

struct CodecAddress: Codable, Equatable {
    var street: String
    var zip: Int
}

struct Person: Codable, Equatable {
    var id: String
    var name: String
    var age: Int
    var email: String
    var tags: [String]
}

struct Contact: Codable, Equatable {
    var name: String
    var address: CodecAddress
    var tags: [String]
    var scores: [Int]
    var nickname: String?
}

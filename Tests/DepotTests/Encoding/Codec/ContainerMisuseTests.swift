@testable import DepotCore
import Foundation
import Testing

/// A `Codable` conformance that misuses its encoder: a keyed container asked for after the value
/// was already encoded as a single value, then written into. The encoder must refuse it with an
/// `EncodingError`, never stop the program.
private struct ContainerAfterValue: Encodable {
    enum Keys: String, CodingKey { case n }
    let keyedFirstWrite: Bool
    func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        try single.encode(1)
        if keyedFirstWrite {
            var keyed = encoder.container(keyedBy: Keys.self)
            try keyed.encode(2, forKey: .n)
        } else {
            var unkeyed = encoder.unkeyedContainer()
            try unkeyed.encode(2)
        }
    }
}

@Suite struct ContainerMisuseTests {
    @Test(arguments: [true, false])
    func aContainerAskedForAfterTheValueIsAnEncodingError(keyed: Bool) {
        #expect(throws: EncodingError.self) { try BinaryEncoder().encode(ContainerAfterValue(keyedFirstWrite: keyed)) }
    }
}

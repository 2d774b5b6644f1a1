@testable import DepotCore
import Foundation
import Testing

/// The encoder's frame stack grows past its first block (8 open containers) and back.
@Suite("Encoder frames")
struct EncoderFrameTests {
    indirect enum Nest: Codable, Equatable {
        case leaf(String)
        case node([String: Nest], [Nest])
    }

    static func nest(_ depth: Int) -> Nest {
        depth == 0 ? .leaf("bottom") : .node(["k\(depth)": nest(depth - 1)], [.leaf("\(depth)"), nest(depth - 1)])
    }

    @Test(arguments: [1, 7, 8, 9, 12])
    func nestedContainersRoundTrip(depth: Int) throws {
        try expectRoundTrip(Self.nest(depth))
        try expectRoundTrip([Self.nest(depth), Self.nest(1)])
    }
}

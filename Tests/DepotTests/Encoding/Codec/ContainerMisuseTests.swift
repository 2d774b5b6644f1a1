@testable import Depot
@testable import DepotCore
import DepotTestSupport
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

// Serialized: the tests share the file's record of kept containers, and a container must not be
// used on another thread while its decode runs.
@Suite(.serialized) struct ContainerMisuseTests {
    @Test(arguments: [true, false])
    func aContainerAskedForAfterTheValueIsAnEncodingError(keyed: Bool) {
        #expect(throws: EncodingError.self) { try BinaryEncoder().encode(ContainerAfterValue(keyedFirstWrite: keyed)) }
    }
}

/// Containers a `Decodable` keeps past its `init(from:)` (not allowed by `Decoder`'s contract,
/// but reachable): each is recorded here, by kind.
private final class KeptContainers: @unchecked Sendable {
    let lock = NSLock()
    var keyed: KeyedDecodingContainer<KeepsItsContainers.Keys>?
    var unkeyed: (any UnkeyedDecodingContainer)?
    var single: (any SingleValueDecodingContainer)?
    var superKeyed: KeyedDecodingContainer<KeepsItsContainers.Keys>?
}

private let kept = KeptContainers()

/// A document whose decoding keeps its keyed container, an unkeyed one (of `tags`), a single
/// value one (of `name`) and the keyed container of a super decoder.
private struct KeepsItsContainers: Document, Equatable {
    enum Keys: String, CodingKey { case id, name, tags, parent }
    var id: String
    var name: String
    var tags: [String]
    var parent: [String: String]

    init(id: String, name: String, tags: [String]) {
        self.id = id
        self.name = name
        self.tags = tags
        parent = ["id": "p-\(id)"]
    }

    init(from decoder: any Decoder) throws {
        let keyed = try decoder.container(keyedBy: Keys.self)
        id = try keyed.decode(String.self, forKey: .id)
        name = try keyed.decode(String.self, forKey: .name)
        var unkeyed = try keyed.nestedUnkeyedContainer(forKey: .tags)
        var tags: [String] = []
        let keptUnkeyed = unkeyed
        while !unkeyed.isAtEnd { tags.append(try unkeyed.decode(String.self)) }
        self.tags = tags
        let parentDecoder = try keyed.superDecoder(forKey: .parent)
        let superKeyed = try parentDecoder.container(keyedBy: Keys.self)
        parent = ["id": try superKeyed.decode(String.self, forKey: .id)]
        let single = try keyed.superDecoder(forKey: .name).singleValueContainer()
        kept.lock.withLock {
            kept.keyed = keyed
            kept.unkeyed = keptUnkeyed
            kept.single = single
            kept.superKeyed = superKeyed
        }
    }

    func encode(to encoder: any Encoder) throws {
        var keyed = encoder.container(keyedBy: Keys.self)
        try keyed.encode(id, forKey: .id)
        try keyed.encode(name, forKey: .name)
        try keyed.encode(tags, forKey: .tags)
        try keyed.encode(parent, forKey: .parent)
    }
}

extension ContainerMisuseTests {
    /// Uses every kept container once; each must throw `DecodingError.dataCorrupted` (their
    /// decode ended: the bytes they point into may be gone), never read or crash.
    private func expectKeptContainersRefuse(_ when: Comment) {
        let (keyed, unkeyed, single, superKeyed) = kept.lock.withLock { (kept.keyed, kept.unkeyed, kept.single, kept.superKeyed) }
        func expectStale(_ what: String, _ body: () throws -> Void) {
            do {
                try body()
                Issue.record("the kept \(what) container read after its decode ended (\(when))")
            } catch DecodingError.dataCorrupted(let context) {
                #expect(context.debugDescription.contains("after the decode that made it ended"), "\(context.debugDescription)")
            } catch {
                Issue.record("the kept \(what) container threw \(error) (\(when))")
            }
        }
        expectStale("keyed") { _ = try keyed?.decode(String.self, forKey: .name) }
        expectStale("keyed (nested)") { _ = try keyed?.nestedUnkeyedContainer(forKey: .tags) }
        #expect(keyed?.allKeys.isEmpty ?? false, "\(when)")
        #expect(keyed?.contains(.name) == false, "\(when)")
        expectStale("unkeyed") {
            var copy = unkeyed
            _ = try copy?.decode(String.self)
        }
        expectStale("single value") { _ = try single?.decode(String.self) }
        expectStale("super decoder's keyed") { _ = try superKeyed?.decode(String.self, forKey: .id) }
    }

    @Test func containersKeptPastTheirDecodeThrowInsteadOfReading() throws {
        let value = KeepsItsContainers(id: "a", name: "Ada Lovelace, analyst", tags: ["x", "y"])
        let bytes = try BinaryEncoder().encode(value)
        // The decoder alive, idle.
        let decoder = BinaryDecoder()
        #expect(try decoder.decode(KeepsItsContainers.self, from: bytes) == value)
        expectKeptContainersRefuse("decoder idle")
        // The decoder busy with another value (its bytes, shorter).
        let other = try BinaryEncoder().encode(KeepsItsContainers(id: "b", name: "B", tags: []))
        #expect(try decoder.decode(KeepsItsContainers.self, from: other).name == "B")
        // The decoder gone (its containers' state released).
        do {
            let once = BinaryDecoder()
            #expect(try once.decode(KeepsItsContainers.self, from: bytes) == value)
        }
        expectKeptContainersRefuse("decoder gone")
    }

    @Test func containersKeptPastAStoreReadThrowInsteadOfReading() throws {
        // The decode reads the record in place, from LMDB's map: bytes valid only inside the
        // read transaction.
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let value = KeepsItsContainers(id: "a", name: "Ada Lovelace, analyst", tags: ["x", "y"])
        try store.write { tx in try tx.park(value) }
        #expect(try store.retrieve(KeepsItsContainers.self, id: "a") == value)
        expectKeptContainersRefuse("after the read transaction")
        try store.write { tx in try tx.park(KeepsItsContainers(id: "a", name: "B", tags: [])) }
        expectKeptContainersRefuse("after a write replaced the record")
    }
}

/// Encoding containers an `Encodable` keeps past its `encode(to:)`.
private final class KeptEncodingContainers: @unchecked Sendable {
    let lock = NSLock()
    var keyed: KeyedEncodingContainer<KeepsItsEncodingContainers.Keys>?
    var unkeyed: (any UnkeyedEncodingContainer)?
    var single: (any SingleValueEncodingContainer)?
    var superKeyed: KeyedEncodingContainer<KeepsItsEncodingContainers.Keys>?
}

private let keptEncoding = KeptEncodingContainers()

private struct KeepsItsEncodingContainers: Encodable {
    enum Keys: String, CodingKey { case id, tags, parent, single }
    var id: String

    func encode(to encoder: any Encoder) throws {
        var keyed = encoder.container(keyedBy: Keys.self)
        try keyed.encode(id, forKey: .id)
        var unkeyed = keyed.nestedUnkeyedContainer(forKey: .tags)
        try unkeyed.encode("t")
        var superKeyed = keyed.superEncoder(forKey: .parent).container(keyedBy: Keys.self)
        try superKeyed.encode("p", forKey: .id)
        var single = keyed.superEncoder(forKey: .single).singleValueContainer()
        try single.encode(1)
        keptEncoding.lock.withLock {
            keptEncoding.keyed = keyed
            keptEncoding.unkeyed = unkeyed
            keptEncoding.single = single
            keptEncoding.superKeyed = superKeyed
        }
    }
}

extension ContainerMisuseTests {
    /// Writes through every kept encoding container; each must throw an `EncodingError` (their
    /// encode ended), never write into another value's bytes or crash.
    private func expectKeptEncodingContainersRefuse(_ when: Comment) {
        var (keyed, unkeyed, single, superKeyed) = keptEncoding.lock.withLock {
            (keptEncoding.keyed, keptEncoding.unkeyed, keptEncoding.single, keptEncoding.superKeyed)
        }
        func expectStale(_ what: String, _ body: () throws -> Void) {
            do {
                try body()
                Issue.record("the kept \(what) container wrote after its encode ended (\(when))")
            } catch let error as EncodingError {
                guard case .invalidValue(_, let context) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(context.debugDescription.contains("after the encode that made it ended"), "\(context.debugDescription)")
            } catch {
                Issue.record("the kept \(what) container threw \(error) (\(when))")
            }
        }
        expectStale("keyed") { try keyed?.encode("late", forKey: .id) }
        expectStale("unkeyed") { try unkeyed?.encode("late") }
        expectStale("single value") { try single?.encode(2) }
        expectStale("super encoder's keyed") { try superKeyed?.encode("late", forKey: .id) }
    }

    @Test func encodingContainersKeptPastTheirEncodeThrowInsteadOfWriting() throws {
        let encoder = BinaryEncoder()
        let first = try encoder.encode(KeepsItsEncodingContainers(id: "a"))
        expectKeptEncodingContainersRefuse("encoder idle")
        // The encoder's next value comes out as if nothing had been written meanwhile.
        #expect(try encoder.encode(KeepsItsEncodingContainers(id: "a")) == first)
        do {
            let once = BinaryEncoder()
            _ = try once.encode(KeepsItsEncodingContainers(id: "b"))
        }
        expectKeptEncodingContainersRefuse("encoder gone")
    }
}

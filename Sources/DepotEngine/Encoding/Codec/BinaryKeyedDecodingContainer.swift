import Foundation

/// Keyed container over the entries of one object. Lookups scan linearly from the last match.
///
/// A container made by `Decoder.container(keyedBy:)` of a reusing decoder reads the bounds of
/// its object from the decoder (`slot`): the decoder hands the same container out again for the
/// next object of that key type at that depth (see ``ReusedKeyedContainers``).
struct BinaryKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let impl: BinaryDecoderImpl
    private let ownBounds: ObjectBounds
    /// The index of this container's bounds in the decoder's `reused.positions`, or -1 (its own).
    private let slot: Int
    let depth: Int

    init(impl: BinaryDecoderImpl, entries: Int, end: Int, entryCount: Int, depth: Int) {
        self.impl = impl
        ownBounds = ObjectBounds(entries: entries, end: end, count: entryCount, decode: impl.currentNumber)
        slot = -1
        self.depth = depth
    }

    /// A container reading its object's bounds from the decoder's slot `depth`.
    init(reusedBy impl: BinaryDecoderImpl, depth: Int) {
        self.impl = impl
        ownBounds = .none
        slot = depth
        self.depth = depth
    }

    /// Where this container's object is, in the decode running now; throws when that is not
    /// the decode the container was made in (a `Decodable` kept it: its offsets point into
    /// bytes that may be gone). A kept container of a reusing decoder reads the object its slot
    /// holds now (same bytes, never out of them).
    @inline(__always)
    private func bounds() throws -> ObjectBounds {
        let b = slot < 0 ? ownBounds : (slot < impl.reused.positions.count ? impl.reused.positions[slot] : .none)
        guard _fastPath(impl.isCurrent(b.decode)) else { throw BinaryDecoderImpl.staleContainer() }
        return b
    }

    var codingPath: [any CodingKey] { impl.path(depth) }

    var allKeys: [Key] {
        guard let b = try? bounds() else { return [] }
        return (try? impl.allKeys(Key.self, entries: b.entries, end: b.end, count: b.count)) ?? []
    }

    func contains(_ key: Key) -> Bool {
        ((try? find(key)) ?? nil) != nil
    }

    @inline(__always)
    private func find(_ key: Key) throws -> Int? {
        let b = try bounds()
        return try impl.find(key, entries: b.entries, end: b.end, count: b.count, depth: depth)
    }

    @inline(__always)
    private func require(_ key: Key) throws -> Int {
        if let p = try find(key) { return p }
        throw DecodingError.keyNotFound(key, DecodingError.Context(
            codingPath: codingPath, debugDescription: "No value associated with key \"\(key.stringValue)\"."))
    }

    /// Offset of a present, non-null value for `key`, or nil.
    @inline(__always)
    private func present(_ key: Key) throws -> Int? {
        guard let p = try find(key), try !impl.readNil(at: p) else { return nil }
        return p
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        try impl.readNil(at: try require(key))
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        var p = try require(key)
        return try impl.readBool(&p, depth, key)
    }

    // The common case of each primitive is read here, so that the key becomes an existential
    // (for the coding path of an error) only on the slow path.

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        var p = try require(key)
        let r = impl.reader
        if try r.tag(at: p) == BinaryTag.string {
            var q = p + 1
            let n = try r.length(&q)
            if n == impl.knownCount, let known = impl.knownBytes, BinaryReader.bytesEqual(r.base + q, known, n) {
                return impl.known
            }
            return try r.makeString(q, n)
        }
        return try impl.readString(&p, depth, key)
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        var p = try require(key)
        return try impl.readDouble(&p, depth, key)
    }

    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        var p = try require(key)
        return try impl.readFloat(&p, depth, key)
    }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }

    @inline(__always)
    private func integer<I: FixedWidthInteger & Decodable>(_ key: Key) throws -> I {
        var p = try require(key)
        let r = impl.reader
        if try r.tag(at: p) == BinaryTag.int {
            var q = p + 1
            if let v = I(exactly: BinaryWriter.unzigzag(try r.varint(&q))) { return v }
        }
        return try impl.readInteger(I.self, &p, depth, key)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        var p = try require(key)
        // The commonest generic field, read here: no call through the general dispatch.
        if T.self == [String].self, let strings = try impl.readStringArray(&p, depth, key) {
            return unsafeBitCast(strings, to: T.self)
        }
        return try impl.decodeValue(T.self, &p, depth, key, advance: false)
    }

    // MARK: decodeIfPresent (single lookup instead of contains + decodeNil + decode)

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard var p = try present(key) else { return nil }
        return try impl.readBool(&p, depth, key)
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard var p = try present(key) else { return nil }
        return try impl.readString(&p, depth, key)
    }

    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        guard var p = try present(key) else { return nil }
        return try impl.readDouble(&p, depth, key)
    }

    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        guard var p = try present(key) else { return nil }
        return try impl.readFloat(&p, depth, key)
    }

    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try integerIfPresent(key) }

    @inline(__always)
    private func integerIfPresent<I: FixedWidthInteger & Decodable>(_ key: Key) throws -> I? {
        guard var p = try present(key) else { return nil }
        return try impl.readInteger(I.self, &p, depth, key)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard var p = try present(key) else { return nil }
        return try impl.decodeValue(T.self, &p, depth, key, advance: false)
    }

    // MARK: Nesting

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let p = try require(key)
        try impl.pushKey(key, at: depth)
        return KeyedDecodingContainer(try impl.openKeyed(NestedKey.self, at: p, depth: depth + 1))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let p = try require(key)
        try impl.pushKey(key, at: depth)
        return try impl.openUnkeyed(at: p, depth: depth + 1)
    }

    func superDecoder() throws -> any Decoder {
        let key = StringKey.superKey
        let b = try bounds()
        guard let p = try impl.find(key, entries: b.entries, end: b.end, count: b.count, depth: depth) else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(
                codingPath: codingPath, debugDescription: "No value associated with key \"super\"."))
        }
        return impl.makeSuperDecoder(at: p, depth: depth, key: key)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        impl.makeSuperDecoder(at: try require(key), depth: depth, key: key)
    }
}

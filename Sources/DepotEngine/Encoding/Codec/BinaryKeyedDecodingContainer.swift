import Foundation

/// Keyed container over the entries of one object. Lookups scan linearly from the last match.
///
/// A container made by `Decoder.container(keyedBy:)` of a reusing decoder reads the bounds of
/// its object from the decoder (`slot`): the decoder hands the same container out again for the
/// next object of that key type at that depth (see ``ReusedKeyedContainers``).
struct BinaryKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    /// The decoder, not retained: this container is copied by the standard library's box on
    /// every call, and a retained reference would cost a retain and a release each time. It
    /// is read only after ``cell`` says that the decoder is alive (see ``DecoderLifeCell``).
    private let unmanaged: Unmanaged<BinaryDecoderImpl>
    private let cell: DecoderLifeCell
    /// What ``cell`` must hold for the decoder to be read: for a container of its own, the
    /// decode it was made in (word 0); for one the decoder keeps for reuse, the decoder's life
    /// (word 1).
    private let stamp: UInt64
    /// The object's entries, for a container of its own (a kept one reads its decoder's slot).
    private let entries: Int
    private let end: Int
    private let count: Int
    /// The index of this container's bounds in the decoder's `reused.positions`, or -1 (its own).
    private let slot: Int32
    private let depth32: Int32
    var depth: Int { Int(depth32) }

    init(impl: BinaryDecoderImpl, entries: Int, end: Int, entryCount: Int, depth: Int) {
        unmanaged = .passUnretained(impl)
        cell = impl.cell
        stamp = impl.currentNumber
        self.entries = entries
        self.end = end
        count = entryCount
        slot = -1
        depth32 = Int32(truncatingIfNeeded: depth) // below BinaryFormat.maxDepth
    }

    /// A container reading its object's bounds from the decoder's slot `depth` (only a decoder
    /// of its own, never a super decoder, keeps containers: its cell's life is its own).
    init(reusedBy impl: BinaryDecoderImpl, depth: Int) {
        unmanaged = .passUnretained(impl)
        cell = impl.cell
        stamp = impl.cell.life
        entries = 0
        end = 0
        count = 0
        slot = Int32(truncatingIfNeeded: depth)
        depth32 = slot
    }

    /// Runs `body` with the decoder, not retained (see ``unmanaged``), when ``cell`` says it can
    /// be read (see ``DecoderLifeCell``): for a container of its own, its decode is still
    /// running; for a kept one, the decoder is still alive. Throws otherwise (a `Decodable` kept
    /// the container: its offsets may point into bytes that are gone).
    ///
    /// Callers pass a local `@inline(__always)` function rather than a closure: a closure's
    /// body stays a call of its own here (about 20 instructions per field, measured).
    @inline(__always)
    private func with<R>(_ body: (BinaryDecoderImpl) throws -> R) throws -> R {
        guard _fastPath(cell.words[slot < 0 ? 0 : 1] == stamp) else { throw BinaryDecoderImpl.staleContainer() }
        return try unmanaged._withUnsafeGuaranteedRef(body)
    }

    /// Where this container's object is, in the decode running now (``with(_:)`` checked it
    /// for a container of its own). A kept container of a reusing decoder reads the object its
    /// slot holds now (same bytes, never out of them), and throws between decodes.
    @inline(__always)
    private func bounds(_ impl: BinaryDecoderImpl) throws -> ObjectBounds {
        if slot < 0 { return ObjectBounds(entries: entries, end: end, count: count, decode: stamp) }
        let b = Int(slot) < impl.reused.positions.count ? impl.reused.positions[Int(slot)] : .none
        guard _fastPath(impl.isCurrent(b.decode)) else { throw BinaryDecoderImpl.staleContainer() }
        return b
    }

    var codingPath: [any CodingKey] { (try? with { $0.path(depth) }) ?? [] }

    var allKeys: [Key] {
        (try? with { impl in
            let b = try bounds(impl)
            return try impl.allKeys(Key.self, entries: b.entries, end: b.end, count: b.count)
        }) ?? []
    }

    func contains(_ key: Key) -> Bool {
        ((try? with { impl in try find(impl, key) }) ?? nil) != nil
    }

    @inline(__always)
    private func find(_ impl: BinaryDecoderImpl, _ key: Key) throws -> Int? {
        let b = try bounds(impl)
        return try impl.find(key, entries: b.entries, end: b.end, count: b.count, depth: depth)
    }

    @inline(__always)
    private func require(_ impl: BinaryDecoderImpl, _ key: Key) throws -> Int {
        if let p = try find(impl, key) { return p }
        throw DecodingError.keyNotFound(key, DecodingError.Context(
            codingPath: impl.path(depth), debugDescription: "No value associated with key \"\(key.stringValue)\"."))
    }

    /// Offset of a present, non-null value for `key`, or nil.
    @inline(__always)
    private func present(_ impl: BinaryDecoderImpl, _ key: Key) throws -> Int? {
        guard let p = try find(impl, key), try !impl.readNil(at: p) else { return nil }
        return p
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        @inline(__always) func read(_ impl: BinaryDecoderImpl) throws -> Bool {
            return try impl.readNil(at: try require(impl, key))
        }
        return try with(read)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        @inline(__always) func read(_ impl: BinaryDecoderImpl) throws -> Bool {
            var p = try require(impl, key)
            return try impl.readBool(&p, depth, key)
        }
        return try with(read)
    }

    // The common case of each primitive is read here, so that the key becomes an existential
    // (for the coding path of an error) only on the slow path.

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        @inline(__always) func read(_ impl: BinaryDecoderImpl) throws -> String {
            var p = try require(impl, key)
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
        return try with(read)
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        @inline(__always) func read(_ impl: BinaryDecoderImpl) throws -> Double {
            var p = try require(impl, key)
            return try impl.readDouble(&p, depth, key)
        }
        return try with(read)
    }

    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        @inline(__always) func read(_ impl: BinaryDecoderImpl) throws -> Float {
            var p = try require(impl, key)
            return try impl.readFloat(&p, depth, key)
        }
        return try with(read)
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
        @inline(__always) func read(_ impl: BinaryDecoderImpl) throws -> I {
            var p = try require(impl, key)
            let r = impl.reader
            if try r.tag(at: p) == BinaryTag.int {
                var q = p + 1
                if let v = I(exactly: BinaryWriter.unzigzag(try r.varint(&q))) { return v }
            }
            return try impl.readInteger(I.self, &p, depth, key)
        }
        return try with(read)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        @inline(__always) func read(_ impl: BinaryDecoderImpl) throws -> T {
            var p = try require(impl, key)
            // The commonest generic field, read here: no call through the general dispatch.
            if T.self == [String].self, let strings = try impl.readStringArray(&p, depth, key) {
                return unsafeBitCast(strings, to: T.self)
            }
            return try impl.decodeValue(T.self, &p, depth, key, advance: false)
        }
        return try with(read)
    }

    // MARK: decodeIfPresent (single lookup instead of contains + decodeNil + decode)

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        @inline(__always) func read(_ impl: BinaryDecoderImpl) throws -> Bool? {
            guard var p = try present(impl, key) else { return nil }
            return try impl.readBool(&p, depth, key)
        }
        return try with(read)
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        @inline(__always) func read(_ impl: BinaryDecoderImpl) throws -> String? {
            guard var p = try present(impl, key) else { return nil }
            return try impl.readString(&p, depth, key)
        }
        return try with(read)
    }

    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        @inline(__always) func read(_ impl: BinaryDecoderImpl) throws -> Double? {
            guard var p = try present(impl, key) else { return nil }
            return try impl.readDouble(&p, depth, key)
        }
        return try with(read)
    }

    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        @inline(__always) func read(_ impl: BinaryDecoderImpl) throws -> Float? {
            guard var p = try present(impl, key) else { return nil }
            return try impl.readFloat(&p, depth, key)
        }
        return try with(read)
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
        @inline(__always) func read(_ impl: BinaryDecoderImpl) throws -> I? {
            guard var p = try present(impl, key) else { return nil }
            return try impl.readInteger(I.self, &p, depth, key)
        }
        return try with(read)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        @inline(__always) func read(_ impl: BinaryDecoderImpl) throws -> T? {
            guard var p = try present(impl, key) else { return nil }
            return try impl.decodeValue(T.self, &p, depth, key, advance: false)
        }
        return try with(read)
    }

    // MARK: Nesting

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        @inline(__always) func read(_ impl: BinaryDecoderImpl) throws -> KeyedDecodingContainer<NestedKey> {
            let p = try require(impl, key)
            try impl.pushKey(key, at: depth)
            return KeyedDecodingContainer(try impl.openKeyed(NestedKey.self, at: p, depth: depth + 1))
        }
        return try with(read)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        @inline(__always) func read(_ impl: BinaryDecoderImpl) throws -> any UnkeyedDecodingContainer {
            let p = try require(impl, key)
            try impl.pushKey(key, at: depth)
            return try impl.openUnkeyed(at: p, depth: depth + 1)
        }
        return try with(read)
    }

    func superDecoder() throws -> any Decoder {
        let key = StringKey.superKey
        return try with { impl in
            let b = try bounds(impl)
            guard let p = try impl.find(key, entries: b.entries, end: b.end, count: b.count, depth: depth) else {
                throw DecodingError.keyNotFound(key, DecodingError.Context(
                    codingPath: impl.path(depth), debugDescription: "No value associated with key \"super\"."))
            }
            return impl.makeSuperDecoder(at: p, depth: depth, key: key)
        }
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        @inline(__always) func read(_ impl: BinaryDecoderImpl) throws -> any Decoder {
            return impl.makeSuperDecoder(at: try require(impl, key), depth: depth, key: key)
        }
        return try with(read)
    }
}

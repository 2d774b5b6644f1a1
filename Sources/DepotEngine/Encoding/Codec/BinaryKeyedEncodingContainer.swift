import Foundation

/// Keyed container writing `key value` entries into the encoder's buffer.
///
/// A container made by `Encoder.container(keyedBy:)` of a reusing encoder reads where its object
/// is from the encoder (`slot`), which hands it out again for the next object of that key type
/// at that depth (see ``ReusedKeyedContainers``).
struct BinaryKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let impl: BinaryEncoderImpl
    private let ownFrame: Int
    private let ownStart: Int
    /// The index of this container's position in the encoder's `reused.positions`, or -1 (its own).
    private let slot: Int
    let depth: Int

    /// The encode it was made in (its own position holds only then).
    private let ownNumber: UInt64

    init(impl: BinaryEncoderImpl, frame: Int, start: Int, depth: Int) {
        self.impl = impl
        ownFrame = frame
        ownStart = start
        ownNumber = impl.encodeNumber
        slot = -1
        self.depth = depth
    }

    /// A container reading its object's position from the encoder's slot `depth`.
    init(reusedBy impl: BinaryEncoderImpl, depth: Int) {
        self.impl = impl
        ownFrame = -1
        ownStart = -1
        ownNumber = .max
        slot = depth
        self.depth = depth
    }

    /// The object's frame in the encoder and where it starts in the buffer, in the encode
    /// running now; throws when that is not the encode the container was made in (a kept
    /// container of a reusing encoder writes where its slot says now).
    @inline(__always)
    private func position() throws -> EncoderPosition {
        let p = slot < 0 ? EncoderPosition(frame: ownFrame, start: ownStart, encode: ownNumber)
            : (slot < impl.reused.positions.count ? impl.reused.positions[slot] : .none)
        guard _fastPath(p.encode == impl.encodeNumber) else { throw BinaryEncoderImpl.staleContainer() }
        return p
    }

    /// Starts the entry for `key` in this container's object.
    @inline(__always)
    private func begin(_ key: Key) throws {
        let p = try position()
        try impl.beginEntry(p.frame, p.start, key)
    }

    var codingPath: [any CodingKey] { impl.path(depth) }

    mutating func encodeNil(forKey key: Key) throws {
        try begin(key)
        impl.buffer.append(BinaryTag.null)
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        try begin(key)
        BinaryWriter.bool(value, &impl.buffer)
    }

    mutating func encode(_ value: String, forKey key: Key) throws {
        let p = try position()
        try impl.beginEntryWithoutKey(p.frame, p.start)
        if key.intValue == nil {
            let name = key.stringValue
            if impl.appendShort({ $0.keyedString(name, value, tag: BinaryTag.string) }) { return }
            BinaryWriter.stringKey(name, &impl.buffer)
            BinaryWriter.string(value, tag: BinaryTag.string, &impl.buffer)
        } else {
            BinaryWriter.codingKey(key, &impl.buffer)
            BinaryWriter.string(value, tag: BinaryTag.string, &impl.buffer)
        }
    }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        try begin(key)
        BinaryWriter.double(value, &impl.buffer)
    }

    mutating func encode(_ value: Float, forKey key: Key) throws {
        try begin(key)
        BinaryWriter.float(value, &impl.buffer)
    }

    mutating func encode(_ value: Int, forKey key: Key) throws {
        let p = try position()
        try impl.beginEntryWithoutKey(p.frame, p.start)
        if key.intValue == nil {
            let name = key.stringValue
            if impl.appendShort({ $0.keyedSigned(name, Int64(value)) }) { return }
            BinaryWriter.stringKey(name, &impl.buffer)
            BinaryWriter.signed(Int64(value), &impl.buffer)
        } else {
            BinaryWriter.codingKey(key, &impl.buffer)
            BinaryWriter.signed(Int64(value), &impl.buffer)
        }
    }

    mutating func encode(_ value: Int8, forKey key: Key) throws {
        try begin(key)
        BinaryWriter.signed(Int64(value), &impl.buffer)
    }

    mutating func encode(_ value: Int16, forKey key: Key) throws {
        try begin(key)
        BinaryWriter.signed(Int64(value), &impl.buffer)
    }

    mutating func encode(_ value: Int32, forKey key: Key) throws {
        try begin(key)
        BinaryWriter.signed(Int64(value), &impl.buffer)
    }

    mutating func encode(_ value: Int64, forKey key: Key) throws {
        try begin(key)
        BinaryWriter.signed(value, &impl.buffer)
    }

    mutating func encode(_ value: UInt, forKey key: Key) throws {
        try begin(key)
        BinaryWriter.unsigned(UInt64(value), &impl.buffer)
    }

    mutating func encode(_ value: UInt8, forKey key: Key) throws {
        try begin(key)
        BinaryWriter.unsigned(UInt64(value), &impl.buffer)
    }

    mutating func encode(_ value: UInt16, forKey key: Key) throws {
        try begin(key)
        BinaryWriter.unsigned(UInt64(value), &impl.buffer)
    }

    mutating func encode(_ value: UInt32, forKey key: Key) throws {
        try begin(key)
        BinaryWriter.unsigned(UInt64(value), &impl.buffer)
    }

    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        try begin(key)
        BinaryWriter.unsigned(value, &impl.buffer)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        // The commonest generic field, written here with its key in one append (the general
        // path writes a `[String]` natively too, before any reference hook).
        if T.self == [String].self && key.intValue == nil {
            let p = try position()
            try impl.beginEntryWithoutKey(p.frame, p.start)
            let name = key.stringValue, strings = unsafeBitCast(value, to: [String].self)
            if impl.appendShort({ $0.keyedStringArray(name, strings) }) { return }
            BinaryWriter.stringKey(name, &impl.buffer)
            BinaryWriter.stringArray(strings, &impl.buffer)
            return
        }
        try begin(key)
        try impl.encodeValue(value, key: key, parentDepth: depth)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        var (f, s) = (-1, -1)
        do {
            try begin(key)
            (f, s) = impl.openNested(key, depth: depth, kind: .keyed)
        } catch {
            impl.fail("\(error)")
        }
        return KeyedEncodingContainer(BinaryKeyedEncodingContainer<NestedKey>(impl: impl, frame: f, start: s, depth: depth + 1))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        var (f, s) = (-1, -1)
        do {
            try begin(key)
            (f, s) = impl.openNested(key, depth: depth, kind: .unkeyed)
        } catch {
            impl.fail("\(error)")
        }
        return BinaryUnkeyedEncodingContainer(impl: impl, start: s, frame: Int32(f), depth: Int32(depth + 1))
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(anyKey: StringKey.superKey)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder(anyKey: key)
    }

    private func superEncoder<K: CodingKey>(anyKey key: K) -> any Encoder {
        do {
            let p = try position()
            try impl.beginEntry(p.frame, p.start, key)
            return impl.makeSuperEncoder(key, depth: depth)
        } catch {
            impl.fail("\(error)")
            return impl.deadSuperEncoder(depth: depth + 1)
        }
    }
}

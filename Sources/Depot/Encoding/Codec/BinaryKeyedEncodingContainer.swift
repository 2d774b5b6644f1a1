import Foundation

/// Keyed container writing `key value` entries into the encoder's buffer.
struct BinaryKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let impl: BinaryEncoderImpl
    let frame: Int
    let start: Int
    let depth: Int

    var codingPath: [any CodingKey] { impl.path(depth) }

    mutating func encodeNil(forKey key: Key) throws {
        try impl.beginEntry(frame, start, key)
        impl.buffer.append(BinaryTag.null)
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        try impl.beginEntry(frame, start, key)
        BinaryWriter.bool(value, &impl.buffer)
    }

    mutating func encode(_ value: String, forKey key: Key) throws {
        try impl.beginEntry(frame, start, key)
        BinaryWriter.string(value, tag: BinaryTag.string, &impl.buffer)
    }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        try impl.beginEntry(frame, start, key)
        BinaryWriter.double(value, &impl.buffer)
    }

    mutating func encode(_ value: Float, forKey key: Key) throws {
        try impl.beginEntry(frame, start, key)
        BinaryWriter.float(value, &impl.buffer)
    }

    mutating func encode(_ value: Int, forKey key: Key) throws {
        try impl.beginEntry(frame, start, key)
        BinaryWriter.signed(Int64(value), &impl.buffer)
    }

    mutating func encode(_ value: Int8, forKey key: Key) throws {
        try impl.beginEntry(frame, start, key)
        BinaryWriter.signed(Int64(value), &impl.buffer)
    }

    mutating func encode(_ value: Int16, forKey key: Key) throws {
        try impl.beginEntry(frame, start, key)
        BinaryWriter.signed(Int64(value), &impl.buffer)
    }

    mutating func encode(_ value: Int32, forKey key: Key) throws {
        try impl.beginEntry(frame, start, key)
        BinaryWriter.signed(Int64(value), &impl.buffer)
    }

    mutating func encode(_ value: Int64, forKey key: Key) throws {
        try impl.beginEntry(frame, start, key)
        BinaryWriter.signed(value, &impl.buffer)
    }

    mutating func encode(_ value: UInt, forKey key: Key) throws {
        try impl.beginEntry(frame, start, key)
        BinaryWriter.unsigned(UInt64(value), &impl.buffer)
    }

    mutating func encode(_ value: UInt8, forKey key: Key) throws {
        try impl.beginEntry(frame, start, key)
        BinaryWriter.unsigned(UInt64(value), &impl.buffer)
    }

    mutating func encode(_ value: UInt16, forKey key: Key) throws {
        try impl.beginEntry(frame, start, key)
        BinaryWriter.unsigned(UInt64(value), &impl.buffer)
    }

    mutating func encode(_ value: UInt32, forKey key: Key) throws {
        try impl.beginEntry(frame, start, key)
        BinaryWriter.unsigned(UInt64(value), &impl.buffer)
    }

    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        try impl.beginEntry(frame, start, key)
        BinaryWriter.unsigned(value, &impl.buffer)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try impl.beginEntry(frame, start, key)
        try impl.encodeValue(value, key: key, parentDepth: depth)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        var (f, s) = (-1, -1)
        do {
            try impl.beginEntry(frame, start, key)
            (f, s) = impl.openNested(key, depth: depth, kind: .keyed)
        } catch {
            impl.fail("\(error)")
        }
        return KeyedEncodingContainer(BinaryKeyedEncodingContainer<NestedKey>(impl: impl, frame: f, start: s, depth: depth + 1))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        var (f, s) = (-1, -1)
        do {
            try impl.beginEntry(frame, start, key)
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
            try impl.beginEntry(frame, start, key)
            return impl.makeSuperEncoder(key, depth: depth)
        } catch {
            impl.fail("\(error)")
            return impl.deadSuperEncoder(depth: depth + 1)
        }
    }
}

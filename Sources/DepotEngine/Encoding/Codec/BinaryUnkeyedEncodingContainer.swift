import Foundation

/// Unkeyed container writing elements into the encoder's buffer. Fits the existential inline buffer.
struct BinaryUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let impl: BinaryEncoderImpl
    let start: Int
    let frame: Int32
    let depth: Int32

    var codingPath: [any CodingKey] { impl.path(Int(depth)) }

    var count: Int {
        let f = Int(frame)
        guard f >= 0, f < impl.frames.count, impl.frames[f].start == start else { return 0 }
        return impl.frames[f].count
    }

    @inline(__always)
    private func begin() throws -> Int { try impl.beginElement(Int(frame), start) }

    mutating func encodeNil() throws {
        _ = try begin()
        impl.buffer.append(BinaryTag.null)
    }

    mutating func encode(_ value: Bool) throws {
        _ = try begin()
        BinaryWriter.bool(value, &impl.buffer)
    }

    mutating func encode(_ value: String) throws {
        _ = try begin()
        BinaryWriter.string(value, tag: BinaryTag.string, &impl.buffer)
    }

    mutating func encode(_ value: Double) throws {
        _ = try begin()
        BinaryWriter.double(value, &impl.buffer)
    }

    mutating func encode(_ value: Float) throws {
        _ = try begin()
        BinaryWriter.float(value, &impl.buffer)
    }

    mutating func encode(_ value: Int) throws {
        _ = try begin()
        BinaryWriter.signed(Int64(value), &impl.buffer)
    }

    mutating func encode(_ value: Int8) throws {
        _ = try begin()
        BinaryWriter.signed(Int64(value), &impl.buffer)
    }

    mutating func encode(_ value: Int16) throws {
        _ = try begin()
        BinaryWriter.signed(Int64(value), &impl.buffer)
    }

    mutating func encode(_ value: Int32) throws {
        _ = try begin()
        BinaryWriter.signed(Int64(value), &impl.buffer)
    }

    mutating func encode(_ value: Int64) throws {
        _ = try begin()
        BinaryWriter.signed(value, &impl.buffer)
    }

    mutating func encode(_ value: UInt) throws {
        _ = try begin()
        BinaryWriter.unsigned(UInt64(value), &impl.buffer)
    }

    mutating func encode(_ value: UInt8) throws {
        _ = try begin()
        BinaryWriter.unsigned(UInt64(value), &impl.buffer)
    }

    mutating func encode(_ value: UInt16) throws {
        _ = try begin()
        BinaryWriter.unsigned(UInt64(value), &impl.buffer)
    }

    mutating func encode(_ value: UInt32) throws {
        _ = try begin()
        BinaryWriter.unsigned(UInt64(value), &impl.buffer)
    }

    mutating func encode(_ value: UInt64) throws {
        _ = try begin()
        BinaryWriter.unsigned(value, &impl.buffer)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let i = try begin()
        try impl.encodeValue(value, key: IndexKey(i), parentDepth: Int(depth))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        var (f, s) = (-1, -1)
        do {
            let i = try begin()
            (f, s) = impl.openNested(IndexKey(i), depth: Int(depth), kind: .keyed)
        } catch {
            impl.fail("\(error)")
        }
        return KeyedEncodingContainer(BinaryKeyedEncodingContainer<NestedKey>(impl: impl, frame: f, start: s, depth: Int(depth) + 1))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        var (f, s) = (-1, -1)
        do {
            let i = try begin()
            (f, s) = impl.openNested(IndexKey(i), depth: Int(depth), kind: .unkeyed)
        } catch {
            impl.fail("\(error)")
        }
        return BinaryUnkeyedEncodingContainer(impl: impl, start: s, frame: Int32(f), depth: depth + 1)
    }

    mutating func superEncoder() -> any Encoder {
        do {
            let i = try begin()
            return impl.makeSuperEncoder(IndexKey(i), depth: Int(depth))
        } catch {
            impl.fail("\(error)")
            return impl.deadSuperEncoder(depth: Int(depth) + 1)
        }
    }
}

/// Single-value container: writes one tagged value at its slot.
struct BinarySingleValueEncodingContainer: SingleValueEncodingContainer {
    let impl: BinaryEncoderImpl
    let start: Int
    let pendingFrame: Int32
    let depth: Int32

    var codingPath: [any CodingKey] { impl.path(Int(depth)) }

    @inline(__always)
    private func willWrite() throws {
        if pendingFrame >= 0 || impl.buffer.count != start {
            try impl.singleValueSlow(start, Int(pendingFrame))
        }
    }

    mutating func encodeNil() throws {
        try willWrite()
        impl.buffer.append(BinaryTag.null)
    }

    mutating func encode(_ value: Bool) throws {
        try willWrite()
        BinaryWriter.bool(value, &impl.buffer)
    }

    mutating func encode(_ value: String) throws {
        try willWrite()
        BinaryWriter.string(value, tag: BinaryTag.string, &impl.buffer)
    }

    mutating func encode(_ value: Double) throws {
        try willWrite()
        BinaryWriter.double(value, &impl.buffer)
    }

    mutating func encode(_ value: Float) throws {
        try willWrite()
        BinaryWriter.float(value, &impl.buffer)
    }

    mutating func encode(_ value: Int) throws {
        try willWrite()
        BinaryWriter.signed(Int64(value), &impl.buffer)
    }

    mutating func encode(_ value: Int8) throws {
        try willWrite()
        BinaryWriter.signed(Int64(value), &impl.buffer)
    }

    mutating func encode(_ value: Int16) throws {
        try willWrite()
        BinaryWriter.signed(Int64(value), &impl.buffer)
    }

    mutating func encode(_ value: Int32) throws {
        try willWrite()
        BinaryWriter.signed(Int64(value), &impl.buffer)
    }

    mutating func encode(_ value: Int64) throws {
        try willWrite()
        BinaryWriter.signed(value, &impl.buffer)
    }

    mutating func encode(_ value: UInt) throws {
        try willWrite()
        BinaryWriter.unsigned(UInt64(value), &impl.buffer)
    }

    mutating func encode(_ value: UInt8) throws {
        try willWrite()
        BinaryWriter.unsigned(UInt64(value), &impl.buffer)
    }

    mutating func encode(_ value: UInt16) throws {
        try willWrite()
        BinaryWriter.unsigned(UInt64(value), &impl.buffer)
    }

    mutating func encode(_ value: UInt32) throws {
        try willWrite()
        BinaryWriter.unsigned(UInt64(value), &impl.buffer)
    }

    mutating func encode(_ value: UInt64) throws {
        try willWrite()
        BinaryWriter.unsigned(value, &impl.buffer)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try willWrite()
        try impl.encodeValue(value, key: NoKey(), parentDepth: Int(depth))
    }
}

/// Encoder returned by `superEncoder()`: writes into a pending slot of its parent container.
final class BinarySuperEncoder: Encoder {
    let impl: BinaryEncoderImpl
    let frame: Int
    let start: Int
    let depth: Int

    init(impl: BinaryEncoderImpl, frame: Int, start: Int, depth: Int) {
        self.impl = impl
        self.frame = frame
        self.start = start
        self.depth = depth
    }

    var codingPath: [any CodingKey] { impl.path(depth) }
    var userInfo: [CodingUserInfoKey: Any] { impl.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let (f, s) = impl.openPending(frame, start, .keyed)
        return KeyedEncodingContainer(BinaryKeyedEncodingContainer<Key>(impl: impl, frame: f, start: s, depth: depth))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let (f, s) = impl.openPending(frame, start, .unkeyed)
        return BinaryUnkeyedEncodingContainer(impl: impl, start: s, frame: Int32(f), depth: Int32(depth))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        BinarySingleValueEncodingContainer(impl: impl, start: start, pendingFrame: Int32(frame), depth: Int32(depth))
    }
}

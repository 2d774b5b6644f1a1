import Foundation

/// Unkeyed container writing elements into the encoder's buffer. Fits the existential inline buffer.
struct BinaryUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let impl: BinaryEncoderImpl
    let start: Int
    private let frameIndex: Int16
    private let depthValue: Int16
    /// The low bits of the encode it was made in (``BinaryEncoderImpl/encodeNumber``): used in
    /// another, it throws. (The frame checks refuse a wrapped-around match anyway, unless that
    /// encode has a frame at the same place.)
    private let encode: UInt32

    init(impl: BinaryEncoderImpl, start: Int, frame: Int32, depth: Int32) {
        self.impl = impl
        self.start = start
        frameIndex = Int16(truncatingIfNeeded: frame)
        depthValue = Int16(truncatingIfNeeded: depth)
        encode = UInt32(truncatingIfNeeded: impl.encodeNumber)
    }

    var frame: Int32 { Int32(frameIndex) }
    var depth: Int32 { Int32(depthValue) }

    var codingPath: [any CodingKey] { impl.path(Int(depth)) }

    var count: Int {
        let f = Int(frame)
        guard isCurrent, f >= 0, f < impl.frames.count, impl.frames[f].start == start else { return 0 }
        return impl.frames[f].count
    }

    private var isCurrent: Bool { UInt32(truncatingIfNeeded: impl.encodeNumber) == encode }

    @inline(__always)
    private func begin() throws -> Int {
        guard _fastPath(isCurrent) else { throw BinaryEncoderImpl.staleContainer() }
        return try impl.beginElement(Int(frame), start)
    }

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
    private let pendingFrameIndex: Int16
    private let depthValue: Int16
    /// The low bits of the encode it was made in (as ``BinaryUnkeyedEncodingContainer``'s).
    private let encode: UInt32

    /// `encode`: the encode it belongs to (the encoder's current one when nil).
    init(impl: BinaryEncoderImpl, start: Int, pendingFrame: Int32, depth: Int32, encode: UInt64? = nil) {
        self.impl = impl
        self.start = start
        pendingFrameIndex = Int16(truncatingIfNeeded: pendingFrame)
        depthValue = Int16(truncatingIfNeeded: depth)
        self.encode = UInt32(truncatingIfNeeded: encode ?? impl.encodeNumber)
    }

    var pendingFrame: Int32 { Int32(pendingFrameIndex) }
    var depth: Int32 { Int32(depthValue) }

    var codingPath: [any CodingKey] { impl.path(Int(depth)) }

    @inline(__always)
    private func willWrite() throws {
        guard _fastPath(UInt32(truncatingIfNeeded: impl.encodeNumber) == encode) else { throw BinaryEncoderImpl.staleContainer() }
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
    private let ownFrame: Int
    let start: Int
    let depth: Int
    /// The encode it was made in: in another, its containers are dead (their writes throw).
    private let encode: UInt64

    init(impl: BinaryEncoderImpl, frame: Int, start: Int, depth: Int) {
        self.impl = impl
        ownFrame = frame
        self.start = start
        self.depth = depth
        encode = impl.encodeNumber
    }

    /// Its slot's frame; -1 (a dead slot) once its encode ended.
    private var frame: Int { impl.encodeNumber == encode ? ownFrame : -1 }

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
        BinarySingleValueEncodingContainer(impl: impl, start: start, pendingFrame: Int32(frame), depth: Int32(depth), encode: encode)
    }
}

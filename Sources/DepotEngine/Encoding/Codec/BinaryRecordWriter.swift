import Foundation

/// A type with a generated, field-by-field binary codec (see the `@BinaryCodable` macro of the
/// `DepotMacros` package), writing and reading exactly the bytes its `Codable` conformance does.
///
/// The document layer uses the generated codec when a ``Document`` type conforms; every other
/// type, and every other coder, keeps using `Codable`. Records written either way read back
/// either way. Write conformances by hand only with care: the two paths must agree field by field.
public protocol BinaryCodableDocument: Codable {
    /// Writes every field of `self`, in the order `encode(to:)` would.
    /// - Parameter writer: The writer of the record's top-level object.
    /// - Throws: What the generic `Codable` path of a field throws (`EncodingError`, the reference hook's errors).
    func encodeBinary(into writer: inout BinaryRecordWriter) throws

    /// Reads the fields of a record, in any order, skipping unknown ones.
    /// - Parameter reader: The reader of the record's top-level object.
    /// - Throws: `DecodingError` (missing key, type mismatch) or ``BinaryCodecError`` (malformed bytes).
    init(binaryRecord reader: inout BinaryRecordReader) throws
}

extension BinaryCodableDocument {
    /// Encodes `value` (known to be a `Self`) through the generated code: `D` is opened from an
    /// existential metatype cached per type, so no value is ever boxed.
    package static func encodeRecord<T>(_ value: T, into writer: inout BinaryRecordWriter) throws {
        guard T.self == Self.self else {
            throw EncodingError.invalidValue("\(T.self)", EncodingError.Context(
                codingPath: [], debugDescription: "The generated codec of \(Self.self) cannot encode \(T.self)."))
        }
        try unsafeBitCast(value, to: Self.self).encodeBinary(into: &writer)
    }

    /// Decodes a `Self` and returns it as `T` (the same type).
    package static func decodeRecord<T>(_: T.Type, from reader: inout BinaryRecordReader) throws -> T {
        guard T.self == Self.self else {
            throw DecodingError.typeMismatch(T.self, DecodingError.Context(
                codingPath: [], debugDescription: "The generated codec of \(Self.self) cannot decode \(T.self)."))
        }
        return unsafeBitCast(try Self(binaryRecord: &reader), to: T.self)
    }
}

/// A field name known at compile time, as a coding key (for coding paths and errors).
struct StaticKey: CodingKey {
    let name: StaticString
    init(_ name: StaticString) { self.name = name }
    init?(stringValue: String) { return nil }
    init?(intValue: Int) { return nil }
    var stringValue: String { name.description }
    var intValue: Int? { nil }
}

/// Writes the fields of one record's top-level object in Depot's binary format (version 1): what
/// generated ``BinaryCodableDocument/encodeBinary(into:)`` implementations call.
///
/// The scalar overloads (`Bool`, `String`, the integers, `Float`, `Double`, `Date`, `UUID`) write
/// the value directly; the generic overload encodes anything else exactly as the `Codable` path
/// does, through the encoder's reference hook (identified documents become references).
/// `encodeIfPresent` writes nothing for `nil`, like synthesized `Codable`.
///
/// Not copyable: a writer addresses memory that its encoder may replace as the record grows, so
/// exactly one writer may exist per record (it is lent to `encodeBinary(into:)`, never given away).
public struct BinaryRecordWriter: ~Copyable {
    let impl: BinaryEncoderImpl
    /// Offset in the output of the object's tag. The writer uses `impl.output` directly: its
    /// own fields leave no pending `Codable` entries, and its generic fields flush theirs.
    let start: Int
    @usableFromInline package var count = 0
    /// Bytes written since the last flush live in the impl's scratch memory (`out`, `used` of
    /// `capacity`), stored with plain stores after one capacity check per field; `flush()` moves
    /// them to `impl.output` in one copy (before a generic field, and at the end).
    @usableFromInline package var out: UnsafeMutableRawPointer
    @usableFromInline package var used = 0
    @usableFromInline package var capacity: Int

    init(impl: BinaryEncoderImpl) {
        self.impl = impl
        start = impl.output.count
        if let scratch = impl.scratch {
            out = scratch
            capacity = impl.scratchCapacity
        } else {
            (out, capacity) = impl.growScratch(minimum: 256, keeping: 0)
        }
        put(BinaryTag.object)
        put(0)
        put(0)
    }

    /// Moves the bytes written so far to the output and backpatches the object header.
    mutating func finish() {
        if impl.output.count == start && count < 0x80 && used - 3 < 0x80 {
            out.storeBytes(of: UInt8(truncatingIfNeeded: count), toByteOffset: 1, as: UInt8.self)
            out.storeBytes(of: UInt8(truncatingIfNeeded: used - 3), toByteOffset: 2, as: UInt8.self)
            flush()
            return
        }
        flush()
        BinaryWriter.endContainer(start: start, count: count, &impl.output)
    }

    /// Appends the scratch bytes to the output.
    mutating func flush() {
        guard used > 0 else { return }
        impl.output.append(contentsOf: UnsafeRawBufferPointer(start: out, count: used))
        used = 0
    }

    /// Makes room for `n` more bytes in the scratch memory.
    @inlinable @inline(__always)
    mutating func reserve(_ n: Int) {
        if n > capacity - used { grow(n) }
    }

    @usableFromInline @inline(never)
    mutating func grow(_ n: Int) {
        (out, capacity) = impl.growScratch(minimum: used + n, keeping: used)
    }

    /// Stores one byte (room reserved).
    @inlinable @inline(__always)
    mutating func put(_ byte: UInt8) {
        out.storeBytes(of: byte, toByteOffset: used, as: UInt8.self)
        used += 1
    }

    /// Stores a varint (room reserved: up to 10 bytes).
    @inlinable @inline(__always)
    mutating func putVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            put(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        put(UInt8(truncatingIfNeeded: v))
    }

    /// Stores `n` bytes from `bytes` (room reserved). Keys and most strings are short: up to 16
    /// bytes are copied with two overlapping loads and stores, without a call to `memcpy`.
    @inlinable @inline(__always)
    mutating func putBytes(_ bytes: UnsafeRawPointer, _ n: Int) {
        let to = out + used
        if n >= 8 && n <= 16 {
            to.storeBytes(of: bytes.loadUnaligned(as: UInt64.self), as: UInt64.self)
            to.storeBytes(of: bytes.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self), toByteOffset: n - 8, as: UInt64.self)
        } else if n >= 4 && n < 8 {
            to.storeBytes(of: bytes.loadUnaligned(as: UInt32.self), as: UInt32.self)
            to.storeBytes(of: bytes.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self), toByteOffset: n - 4, as: UInt32.self)
        } else if n > 0 {
            to.copyMemory(from: bytes, byteCount: n)
        }
        used += n
    }

    /// Writes a key header and the key's UTF-8, with room for `valueRoom` bytes after it.
    @inlinable @inline(__always)
    package mutating func key(_ key: StaticString, valueRoom: Int) {
        count += 1
        if key.hasPointerRepresentation {
            let n = key.utf8CodeUnitCount
            reserve(n + 10 + valueRoom)
            putVarint(UInt64(n) << 1)
            putBytes(UnsafeRawPointer(key.utf8Start), n)
        } else { // one Unicode scalar (`utf8CodeUnitCount` would stop the program)
            key.withUTF8Buffer { u in
                reserve(u.count + 10 + valueRoom)
                putVarint(UInt64(u.count) << 1)
                if let b = u.baseAddress { putBytes(UnsafeRawPointer(b), u.count) }
            }
        }
    }

    /// Writes a tagged string (tag, varint length, UTF-8).
    @inlinable @inline(__always)
    mutating func putString(_ value: String, tag: UInt8) {
        let written: Void? = value.utf8.withContiguousStorageIfAvailable { u in
            if u.count > Self.directBytes { return putLong(u, tag: tag) }
            reserve(u.count + 11)
            put(tag)
            putVarint(UInt64(u.count))
            if let b = u.baseAddress { putBytes(UnsafeRawPointer(b), u.count) }
        }
        if written == nil { putString(Array(value.utf8), tag: tag) }
    }

    @usableFromInline
    package mutating func putString(_ utf8: [UInt8], tag: UInt8) {
        utf8.withUnsafeBufferPointer { u in
            if u.count > Self.directBytes { return putLong(u, tag: tag) }
            reserve(u.count + 11)
            put(tag)
            putVarint(UInt64(u.count))
            if let b = u.baseAddress { putBytes(UnsafeRawPointer(b), u.count) }
        }
    }

    /// Strings longer than this go straight to the output (after a flush), not through the
    /// scratch memory: a large value is copied once and does not grow the scratch memory.
    @inlinable static var directBytes: Int { 4096 }

    @usableFromInline @inline(never)
    mutating func putLong(_ u: UnsafeBufferPointer<UInt8>, tag: UInt8) {
        flush()
        impl.output.append(tag)
        BinaryWriter.varint(UInt64(u.count), &impl.output)
        impl.output.append(contentsOf: u)
    }

    /// Writes a tagged varint (`int` zig-zagged, `uint` plain).
    @inlinable @inline(__always)
    mutating func putInteger(_ tag: UInt8, _ bits: UInt64) {
        put(tag)
        putVarint(bits)
    }

    /// Writes a tag and 8 little-endian bytes.
    @inline(__always)
    mutating func putFixed64(_ tag: UInt8, _ bits: UInt64) {
        put(tag)
        out.storeBytes(of: bits.littleEndian, toByteOffset: used, as: UInt64.self)
        used += 8
    }

    /// Writes a `Bool` field.
    public mutating func encode(_ value: Bool, forKey key: StaticString) throws {
        self.key(key, valueRoom: 1)
        put(value ? BinaryTag.trueValue : BinaryTag.falseValue)
    }

    /// Writes a `String` field (UTF-8). Inlinable, as the other common fields: generated code
    /// writes them without a call.
    @inlinable @inline(__always)
    public mutating func encode(_ value: String, forKey key: StaticString) throws {
        self.key(key, valueRoom: 0)
        putString(value, tag: BinaryTag.string)
    }

    /// Writes an `Int` field.
    @inlinable @inline(__always)
    public mutating func encode(_ value: Int, forKey key: StaticString) throws {
        self.key(key, valueRoom: 11)
        putInteger(BinaryTag.int, BinaryWriter.zigzag(Int64(value)))
    }
    /// Writes an `Int8` field.
    public mutating func encode(_ value: Int8, forKey key: StaticString) throws { try signed(Int64(value), key) }
    /// Writes an `Int16` field.
    public mutating func encode(_ value: Int16, forKey key: StaticString) throws { try signed(Int64(value), key) }
    /// Writes an `Int32` field.
    public mutating func encode(_ value: Int32, forKey key: StaticString) throws { try signed(Int64(value), key) }
    /// Writes an `Int64` field.
    public mutating func encode(_ value: Int64, forKey key: StaticString) throws { try signed(value, key) }
    /// Writes a `UInt` field.
    public mutating func encode(_ value: UInt, forKey key: StaticString) throws { try unsigned(UInt64(value), key) }
    /// Writes a `UInt8` field.
    public mutating func encode(_ value: UInt8, forKey key: StaticString) throws { try unsigned(UInt64(value), key) }
    /// Writes a `UInt16` field.
    public mutating func encode(_ value: UInt16, forKey key: StaticString) throws { try unsigned(UInt64(value), key) }
    /// Writes a `UInt32` field.
    public mutating func encode(_ value: UInt32, forKey key: StaticString) throws { try unsigned(UInt64(value), key) }
    /// Writes a `UInt64` field.
    public mutating func encode(_ value: UInt64, forKey key: StaticString) throws { try unsigned(value, key) }

    private mutating func signed(_ value: Int64, _ key: StaticString) throws {
        self.key(key, valueRoom: 11)
        putInteger(BinaryTag.int, BinaryWriter.zigzag(value))
    }

    private mutating func unsigned(_ value: UInt64, _ key: StaticString) throws {
        self.key(key, valueRoom: 11)
        putInteger(BinaryTag.uint, value)
    }

    /// Writes a `Double` field.
    public mutating func encode(_ value: Double, forKey key: StaticString) throws {
        self.key(key, valueRoom: 9)
        putFixed64(BinaryTag.double, value.bitPattern)
    }

    /// Writes a `Float` field.
    public mutating func encode(_ value: Float, forKey key: StaticString) throws {
        self.key(key, valueRoom: 5)
        put(BinaryTag.float)
        out.storeBytes(of: value.bitPattern.littleEndian, toByteOffset: used, as: UInt32.self)
        used += 4
    }

    /// Writes a `Date` field.
    public mutating func encode(_ value: Date, forKey key: StaticString) throws {
        self.key(key, valueRoom: 9)
        putFixed64(BinaryTag.date, value.timeIntervalSinceReferenceDate.bitPattern)
    }

    /// Writes a `UUID` field.
    public mutating func encode(_ value: UUID, forKey key: StaticString) throws {
        self.key(key, valueRoom: 17)
        put(BinaryTag.uuid)
        withUnsafeBytes(of: value.uuid) { u in if let b = u.baseAddress { putBytes(b, 16) } }
    }

    /// Writes a `[String]` field (the bytes the `Codable` path writes for it).
    public mutating func encode(_ value: [String], forKey key: StaticString) throws {
        self.key(key, valueRoom: 3)
        // Offsets in the whole output (flushed bytes, then scratch bytes): a long element may flush.
        let header = impl.output.count + used
        put(BinaryTag.array)
        put(0)
        put(0)
        for element in value { putString(element, tag: BinaryTag.string) }
        let flushed = impl.output.count
        let len = flushed + used - header - 3
        if header >= flushed && value.count < 0x80 && len < 0x80 { // the header is still in scratch
            out.storeBytes(of: UInt8(truncatingIfNeeded: value.count), toByteOffset: header - flushed + 1, as: UInt8.self)
            out.storeBytes(of: UInt8(truncatingIfNeeded: len), toByteOffset: header - flushed + 2, as: UInt8.self)
        } else { // a longer header, or one already moved: written where the bytes can move
            flush()
            BinaryWriter.endContainer(start: header, count: value.count, &impl.output)
        }
    }

    /// Writes a `[String]` field unless `value` is nil.
    public mutating func encodeIfPresent(_ value: [String]?, forKey key: StaticString) throws {
        if let value { try encode(value, forKey: key) }
    }

    /// Writes any other field through the generic `Codable` path (reference hook included).
    /// - Throws: `EncodingError`, or what the reference hook throws.
    public mutating func encode<T: Encodable>(_ value: T, forKey key: StaticString) throws {
        self.key(key, valueRoom: 0)
        flush()
        try impl.encodeValue(value, key: StaticKey(key), parentDepth: 0)
        // The writer uses the output directly: no `Codable` entry may stay pending past here.
        if impl.pendingCount != 0 { impl.flushPending() }
        if let error = impl.deferredError { throw error }
    }

    /// Writes a `Bool` field unless `value` is nil.
    public mutating func encodeIfPresent(_ value: Bool?, forKey key: StaticString) throws {
        if let value { try encode(value, forKey: key) }
    }

    /// Writes a `String` field unless `value` is nil.
    public mutating func encodeIfPresent(_ value: String?, forKey key: StaticString) throws {
        if let value { try encode(value, forKey: key) }
    }

    /// Writes an `Int` field unless `value` is nil.
    public mutating func encodeIfPresent(_ value: Int?, forKey key: StaticString) throws {
        if let value { try encode(value, forKey: key) }
    }

    /// Writes an `Int64` field unless `value` is nil.
    public mutating func encodeIfPresent(_ value: Int64?, forKey key: StaticString) throws {
        if let value { try encode(value, forKey: key) }
    }

    /// Writes a `UInt64` field unless `value` is nil.
    public mutating func encodeIfPresent(_ value: UInt64?, forKey key: StaticString) throws {
        if let value { try encode(value, forKey: key) }
    }

    /// Writes a `Double` field unless `value` is nil.
    public mutating func encodeIfPresent(_ value: Double?, forKey key: StaticString) throws {
        if let value { try encode(value, forKey: key) }
    }

    /// Writes a `Date` field unless `value` is nil.
    public mutating func encodeIfPresent(_ value: Date?, forKey key: StaticString) throws {
        if let value { try encode(value, forKey: key) }
    }

    /// Writes a `UUID` field unless `value` is nil.
    public mutating func encodeIfPresent(_ value: UUID?, forKey key: StaticString) throws {
        if let value { try encode(value, forKey: key) }
    }

    /// Writes any other field unless `value` is nil, through the generic `Codable` path.
    /// - Throws: `EncodingError`, or what the reference hook throws.
    public mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: StaticString) throws {
        if let value { try encode(value, forKey: key) }
    }
}

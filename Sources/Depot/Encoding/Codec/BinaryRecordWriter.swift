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
    static func encodeRecord<T>(_ value: T, into writer: inout BinaryRecordWriter) throws {
        guard T.self == Self.self else {
            throw EncodingError.invalidValue("\(T.self)", EncodingError.Context(
                codingPath: [], debugDescription: "The generated codec of \(Self.self) cannot encode \(T.self)."))
        }
        try unsafeBitCast(value, to: Self.self).encodeBinary(into: &writer)
    }

    /// Decodes a `Self` and returns it as `T` (the same type).
    static func decodeRecord<T>(_: T.Type, from reader: inout BinaryRecordReader) throws -> T {
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
public struct BinaryRecordWriter {
    let impl: BinaryEncoderImpl
    let start: Int
    var count = 0

    init(impl: BinaryEncoderImpl) {
        self.impl = impl
        start = BinaryWriter.beginContainer(BinaryTag.object, &impl.buffer)
    }

    /// Backpatches the object header.
    func finish() {
        BinaryWriter.endContainer(start: start, count: count, &impl.buffer)
    }

    @inline(__always)
    mutating func key(_ key: StaticString) {
        count += 1
        key.withUTF8Buffer { u in
            BinaryWriter.varint(UInt64(u.count) << 1, &impl.buffer)
            impl.buffer.append(contentsOf: u)
        }
    }

    /// Writes a `Bool` field.
    public mutating func encode(_ value: Bool, forKey key: StaticString) throws {
        self.key(key)
        BinaryWriter.bool(value, &impl.buffer)
    }

    /// Writes a `String` field (UTF-8).
    public mutating func encode(_ value: String, forKey key: StaticString) throws {
        self.key(key)
        BinaryWriter.string(value, tag: BinaryTag.string, &impl.buffer)
    }

    /// Writes an `Int` field.
    public mutating func encode(_ value: Int, forKey key: StaticString) throws { try signed(Int64(value), key) }
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
        self.key(key)
        BinaryWriter.signed(value, &impl.buffer)
    }

    private mutating func unsigned(_ value: UInt64, _ key: StaticString) throws {
        self.key(key)
        BinaryWriter.unsigned(value, &impl.buffer)
    }

    /// Writes a `Double` field.
    public mutating func encode(_ value: Double, forKey key: StaticString) throws {
        self.key(key)
        BinaryWriter.double(value, &impl.buffer)
    }

    /// Writes a `Float` field.
    public mutating func encode(_ value: Float, forKey key: StaticString) throws {
        self.key(key)
        BinaryWriter.float(value, &impl.buffer)
    }

    /// Writes a `Date` field.
    public mutating func encode(_ value: Date, forKey key: StaticString) throws {
        self.key(key)
        BinaryWriter.date(value, &impl.buffer)
    }

    /// Writes a `UUID` field.
    public mutating func encode(_ value: UUID, forKey key: StaticString) throws {
        self.key(key)
        BinaryWriter.uuid(value, &impl.buffer)
    }

    /// Writes a `[String]` field (the bytes the `Codable` path writes for it).
    public mutating func encode(_ value: [String], forKey key: StaticString) throws {
        self.key(key)
        let start = BinaryWriter.beginContainer(BinaryTag.array, &impl.buffer)
        for element in value { BinaryWriter.string(element, tag: BinaryTag.string, &impl.buffer) }
        BinaryWriter.endContainer(start: start, count: value.count, &impl.buffer)
    }

    /// Writes a `[String]` field unless `value` is nil.
    public mutating func encodeIfPresent(_ value: [String]?, forKey key: StaticString) throws {
        if let value { try encode(value, forKey: key) }
    }

    /// Writes any other field through the generic `Codable` path (reference hook included).
    /// - Throws: `EncodingError`, or what the reference hook throws.
    public mutating func encode<T: Encodable>(_ value: T, forKey key: StaticString) throws {
        self.key(key)
        try impl.encodeValue(value, key: StaticKey(key), parentDepth: 0)
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

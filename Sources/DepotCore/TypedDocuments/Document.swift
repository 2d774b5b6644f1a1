import Foundation

/// A Codable value stored as its own record, identified by its `id`.
///
/// ```swift
/// struct Employee: Document {
///     var id: String
///     var name: String
///     var salary: Int
///     var department: Department?      // a Document too: stored as its own record, referenced
///     var address: Address              // not a Document: stored inline
/// }
/// ```
///
/// The collection name defaults to the type's name; override ``collection`` to choose another.
/// IDs may be `String`, any fixed-width integer (stored so that they sort numerically) or `UUID`.
public protocol Document: Codable, Identifiable where ID: DocumentID {
    /// The collection the documents of this type are stored in.
    static var collection: String { get }
    /// Secondary indexes of this type (none by default). See ``DocumentIndex``.
    static var indexes: [DocumentIndex<Self>] { get }
    /// Whether the documents are listed in the sync-status index (see ``Syncable``).
    static var tracksSyncStatus: Bool { get }
    /// The version of the type's stored form (1 by default). Writing records the highest version
    /// seen per collection; reading a collection written by a newer version is
    /// ``DepotError/Code/newerVersion``, never a silent misreading.
    static var version: Int { get }
    /// Values for fields that older records lack, by field path (lightweight migration: adding
    /// `var rating: Int = 3` and `["rating": .int(3)]` here needs no migration step).
    static var fieldDefaults: [String: DocumentValue] { get }
    /// How this type's dates are written in seed files (nil: the seed's or the store's strategy).
    static var dateStrategy: DateStrategy? { get }

    /// Reads a record through the type's generated codec (`@BinaryCodable`). The document layer
    /// calls it only for types that conform to ``BinaryCodableDocument``; for them the default
    /// calls the generated code (a conformance declared in another module is found at run time),
    /// for other types it throws.
    /// An implementation detail, kept as a requirement so that the call is dispatched to code
    /// specialized for the type: do not implement it.
    static func _decodeGenerated(from reader: inout BinaryRecordReader) throws -> Self
    /// Writes a record through the type's generated codec (see ``_decodeGenerated(from:)``).
    func _encodeGenerated(into writer: inout BinaryRecordWriter) throws
}

extension Document {
    /// The generated codec found at run time (a ``BinaryCodableDocument`` conformance declared
    /// apart from the `Document` one, in another module); throws for types without one.
    public static func _decodeGenerated(from reader: inout BinaryRecordReader) throws -> Self {
        guard let codec = Self.self as? any BinaryCodableDocument.Type else {
            throw DecodingError.typeMismatch(Self.self, DecodingError.Context(
                codingPath: [], debugDescription: "\(Self.self) has no generated codec (@BinaryCodable)."))
        }
        return try codec.decodeRecord(Self.self, from: &reader)
    }
    /// The generated codec found at run time (see ``_decodeGenerated(from:)``); throws for types
    /// without one.
    public func _encodeGenerated(into writer: inout BinaryRecordWriter) throws {
        guard let codec = Self.self as? any BinaryCodableDocument.Type else {
            throw EncodingError.invalidValue(Self.self, EncodingError.Context(
                codingPath: [], debugDescription: "\(Self.self) has no generated codec (@BinaryCodable)."))
        }
        try codec.encodeRecord(self, into: &writer)
    }
}

extension Document where Self: BinaryCodableDocument {
    /// The generated ``BinaryCodableDocument/init(binaryRecord:)``.
    public static func _decodeGenerated(from reader: inout BinaryRecordReader) throws -> Self {
        try Self(binaryRecord: &reader)
    }
    /// The generated ``BinaryCodableDocument/encodeBinary(into:)``.
    public func _encodeGenerated(into writer: inout BinaryRecordWriter) throws {
        try encodeBinary(into: &writer)
    }
}

extension Document {
    /// Version 1.
    public static var version: Int { 1 }
    /// No defaults.
    public static var fieldDefaults: [String: DocumentValue] { [:] }
    /// The seed's or the store's strategy.
    public static var dateStrategy: DateStrategy? { nil }

    /// The type's name, such as `"Employee"` (computed once per type: describing a type is slow).
    public static var collection: String { TypeNames.name(of: Self.self) }
}

/// Caches `String(describing:)` of types, which demangles the type name on every call. Read
/// without a lock (every document read asks for its collection's name); new names are added
/// under `lock`.
enum TypeNames {
    private static let lock = NSLock()
    private static let names = Published<[ObjectIdentifier: String]>([:])

    static func name(of type: Any.Type) -> String {
        let key = ObjectIdentifier(type)
        if let cached = names.read({ $0[key] }) { return cached }
        let name = String(describing: type)
        lock.withLock {
            var known = names.value
            if known[key] == nil {
                known[key] = name
                names.publish(known)
            }
        }
        return name
    }
}

/// A type usable as a document identifier: `String`, fixed-width integers, `UUID`.
public protocol DocumentID: Hashable, Sendable, Codable {
    /// How the key bytes are laid out.
    static var idKind: IDKind { get }
    /// Calls `body` with the key bytes of this ID.
    func withKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
    /// Reads an ID back from key bytes.
    init(keyBytes: UnsafeRawBufferPointer) throws
    /// The ID as a scalar document value (for references, exports and change sets).
    var documentValue: DocumentValue { get }
    /// Reads an ID from a scalar document value; nil if it does not fit.
    init?(documentValue: DocumentValue)
}

extension DocumentID {
    /// The key bytes as an array.
    public var keyBytes: [UInt8] { withKeyBytes { [UInt8]($0) } }
}

extension String: DocumentID {
    public static var idKind: IDKind { .string }
    @inlinable
    public func withKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try StringCodec.withBytes(of: self, body)
    }
    public init(keyBytes: UnsafeRawBufferPointer) throws { self = String(decoding: keyBytes, as: UTF8.self) }
    public var documentValue: DocumentValue { .string(self) }
    public init?(documentValue: DocumentValue) {
        guard case .string(let s) = documentValue else { return nil }
        self = s
    }
}

extension UUID: DocumentID {
    public static var idKind: IDKind { .uuid }
    @inlinable
    public func withKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try UUIDCodec.withBytes(of: self, body)
    }
    public init(keyBytes: UnsafeRawBufferPointer) throws { self = try UUIDCodec.decode(keyBytes) }
    public var documentValue: DocumentValue { .uuid(self) }
    public init?(documentValue: DocumentValue) {
        switch documentValue {
        case .uuid(let u): self = u
        case .string(let s): guard let u = UUID(uuidString: s) else { return nil }; self = u
        default: return nil
        }
    }
}

/// Integer IDs are widened to 8 bytes so that every integer type sorts numerically.
public protocol IntegerDocumentID: DocumentID, FixedWidthInteger {}

extension IntegerDocumentID {
    public static var idKind: IDKind { Self.isSigned ? .signed : .unsigned }
    @inlinable
    public func withKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if Self.isSigned {
            return try BigEndian<Int64>.withBytes(of: Int64(self), body)
        }
        return try BigEndian<UInt64>.withBytes(of: UInt64(self), body)
    }
    public init(keyBytes: UnsafeRawBufferPointer) throws {
        if Self.isSigned {
            let wide = try BigEndian<Int64>.decode(keyBytes)
            guard let v = Self(exactly: wide) else { throw DepotError.invalidKey(detail: "integer ID \(wide) does not fit \(Self.self)") }
            self = v
        } else {
            let wide = try BigEndian<UInt64>.decode(keyBytes)
            guard let v = Self(exactly: wide) else { throw DepotError.invalidKey(detail: "integer ID \(wide) does not fit \(Self.self)") }
            self = v
        }
    }
    public var documentValue: DocumentValue { Self.isSigned ? .int(Int64(self)) : .uint(UInt64(self)) }
    public init?(documentValue: DocumentValue) {
        switch documentValue {
        case .int(let i): guard let v = Self(exactly: i) else { return nil }; self = v
        case .uint(let u): guard let v = Self(exactly: u) else { return nil }; self = v
        default: return nil
        }
    }
}

extension Int: IntegerDocumentID {}
extension Int8: IntegerDocumentID {}
extension Int16: IntegerDocumentID {}
extension Int32: IntegerDocumentID {}
extension Int64: IntegerDocumentID {}
extension UInt: IntegerDocumentID {}
extension UInt8: IntegerDocumentID {}
extension UInt16: IntegerDocumentID {}
extension UInt32: IntegerDocumentID {}
extension UInt64: IntegerDocumentID {}

extension IDKind {
    /// Renders key bytes of this kind as a document value (for export and change sets).
    package func value(ofKey key: UnsafeRawBufferPointer) -> DocumentValue {
        switch self {
        case .string: return .string(String(decoding: key, as: UTF8.self))
        case .signed: return (try? BigEndian<Int64>.decode(key)).map { .int($0) } ?? .bytes([UInt8](key))
        case .unsigned: return (try? BigEndian<UInt64>.decode(key)).map { .uint($0) } ?? .bytes([UInt8](key))
        case .uuid: return (try? UUIDCodec.decode(key)).map { .uuid($0) } ?? .bytes([UInt8](key))
        case .content: return .string(key.map { String(format: "%02x", $0) }.joined())
        }
    }

    /// Key bytes for a scalar document value of this kind; nil if it does not fit.
    package func key(for value: DocumentValue) -> [UInt8]? {
        switch (self, value) {
        case (.string, .string(let s)): return Array(s.utf8)
        case (.signed, .int(let i)): return i.keyBytes
        case (.signed, .uint(let u)): return Int64(exactly: u)?.keyBytes
        case (.unsigned, .uint(let u)): return u.keyBytes
        case (.unsigned, .int(let i)): return UInt64(exactly: i)?.keyBytes
        case (.uuid, .uuid(let u)): return u.keyBytes
        case (.uuid, .string(let s)): return UUID(uuidString: s)?.keyBytes
        case (.content, .string(let hex)):
            guard hex.count == 64 else { return nil }
            var bytes: [UInt8] = []
            var index = hex.startIndex
            while index < hex.endIndex {
                let next = hex.index(index, offsetBy: 2)
                guard let b = UInt8(hex[index..<next], radix: 16) else { return nil }
                bytes.append(b)
                index = next
            }
            return bytes
        default: return nil
        }
    }
}

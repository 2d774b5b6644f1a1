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
    /// `DepotError.Code/newerVersion`, never a silent misreading.
    static var version: Int { get }
    /// Values for fields that older records lack, by field path (lightweight migration: adding
    /// `var rating: Int = 3` and `["rating": .int(3)]` here needs no migration step).
    static var fieldDefaults: [String: DocumentValue] { get }
    /// How this type's dates are written in seed files (nil: the seed's or the store's strategy).
    static var dateStrategy: DateStrategy? { get }

    /// Reads a record through the type's generated codec (`@BinaryCodable`). The document layer
    /// calls it only for types that conform to `BinaryCodableDocument`; for them the default
    /// calls the generated code (a conformance declared in another module is found at run time),
    /// for other types it throws.
    /// An implementation detail, kept as a requirement so that the call is dispatched to code
    /// specialized for the type: do not implement it.
    static func _decodeGenerated(from reader: inout BinaryRecordReader) throws -> Self
    /// Writes a record through the type's generated codec (see ``_decodeGenerated(from:)``).
    func _encodeGenerated(into writer: inout BinaryRecordWriter) throws
}

extension Document {
    /// The generated codec found at run time (a `BinaryCodableDocument` conformance declared
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
    /// The generated `BinaryCodableDocument.init(binaryRecord:)`.
    public static func _decodeGenerated(from reader: inout BinaryRecordReader) throws -> Self {
        try Self(binaryRecord: &reader)
    }
    /// The generated `BinaryCodableDocument.encodeBinary(into:)`.
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

import Foundation

/// A secondary index on one field of a document type, declared in the type's ``Document/indexes``:
///
/// ```swift
/// struct Employee: Document {
///     var id: String; var name: String; var salary: Int; var email: String
///     static var indexes: [DocumentIndex<Employee>] {
///         [.init(\.salary), .init(\.email, unique: true)]
///     }
/// }
/// ```
///
/// The store records each index's definition (name, field path, uniqueness) in its meta
/// records, and every writer — typed parks, dynamic objects, seeding, deletes — keeps the
/// index from the stored fields in the same transaction. The definitions are reconciled with
/// the type's declaration the first time the type is used in a write transaction: a new index
/// is built from the stored documents, a removed one dropped, a changed one rebuilt.
///
/// The field path defaults to the key path's name (`\.address.zip` → `"address.zip"`); pass
/// `field:` when the coded name differs (custom `CodingKeys`). A mismatch is reported as
/// `DepotError` with code `DepotError.Code/invalidIndex` at the first park, never a silently
/// wrong index.
public struct DocumentIndex<D: Document>: @unchecked Sendable {
    // @unchecked Sendable: `extract` only applies a Sendable key path to its argument (pure).
    /// The index name: the field path by default (`"salary"`, `"address.zip"`).
    public let name: String
    /// The field path in the stored document that the index reads (`"address.zip"`).
    public let field: String
    /// Whether two documents may not share a value (`nil` values are exempt).
    public let unique: Bool
    let keyPath: PartialKeyPath<D> & Sendable
    let extract: (D) -> DocumentValue

    /// An index on `keyPath`, stored under the field path `field` (by default the key path's
    /// name) and named after the field path unless `name` is given.
    public init<V: IndexableValue>(_ keyPath: KeyPath<D, V> & Sendable, field: String? = nil, name: String? = nil, unique: Bool = false) {
        let field = field ?? Self.fieldName(of: keyPath)
        self.field = field
        self.name = name ?? field
        self.unique = unique
        self.keyPath = keyPath
        self.extract = { $0[keyPath: keyPath].indexValue }
    }

    /// The definition the store records.
    var definition: IndexDefinition { IndexDefinition(name: name, field: field, unique: unique) }

    /// `\Employee.address.zip` → `address.zip` (cached: describing a key path is slow).
    static func fieldName(of keyPath: AnyKeyPath) -> String {
        if let cached = fieldNameLock.withLock({ fieldNames[keyPath] }) { return cached }
        let name = describe(keyPath)
        fieldNameLock.withLock { fieldNames[keyPath] = name }
        return name
    }

    private static func describe(_ keyPath: AnyKeyPath) -> String {
        let text = String(describing: keyPath)
        guard text.hasPrefix("\\"), let dot = text.firstIndex(of: ".") else { return text }
        return String(text[text.index(after: dot)...])
    }
}

private let fieldNameLock = NSLock()
// Guarded by `fieldNameLock`.
nonisolated(unsafe) private var fieldNames: [AnyKeyPath: String] = [:]

extension Document {
    /// No secondary indexes unless the type declares some.
    public static var indexes: [DocumentIndex<Self>] { [] }
}

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
/// Indexes are kept in the same transaction as every park and delete. An index added to a type
/// that already has documents is built at the next write transaction that touches the type.
public struct DocumentIndex<D: Document>: @unchecked Sendable {
    // @unchecked Sendable: `extract` only applies a Sendable key path to its argument (pure).
    /// The index name: the field path by default (`"salary"`, `"address.zip"`).
    public let name: String
    /// Whether two documents may not share a value (`nil` values are exempt).
    public let unique: Bool
    let keyPath: PartialKeyPath<D> & Sendable
    let extract: (D) -> DocumentValue

    /// An index on `keyPath`, named after the field path unless `name` is given.
    public init<V: IndexableValue>(_ keyPath: KeyPath<D, V> & Sendable, name: String? = nil, unique: Bool = false) {
        self.name = name ?? Self.fieldName(of: keyPath)
        self.unique = unique
        self.keyPath = keyPath
        self.extract = { $0[keyPath: keyPath].indexValue }
    }

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

/// What an index needs to be maintained, without its document type.
struct IndexSpec: Hashable {
    let name: String
    let unique: Bool
}

import Foundation

/// A lazy reference to a document: only the target's identity is stored, and it is resolved on
/// demand inside a transaction. Unlike a `Document`-typed property (an eager reference, parked
/// with its parent and resolved when the parent is read), lazy references may form cycles:
/// parent ↔ child graphs store and read like any other document.
///
/// ```swift
/// struct Employee: Document {
///     var id: String
///     var company: Reference<Company>           // stored as a reference, never parked or resolved eagerly
///     static var indexes: [DocumentIndex<Employee>] { [.init(\.company)] }   // inverse look-ups
/// }
/// let company = try tx.resolve(employee.company)                              // Company?
/// let staff = try tx.documents(Employee.self, referencing: company, via: \.company)
/// ```
///
/// With an index on the reference field, inverse look-ups ("the employees whose `company` is this
/// company") read the index; without one they scan. A `Reference` is `IndexableValue`, so
/// `FetchRequest.matching(\.company, .equalTo(Reference(company)))` works in fetch and named
/// requests too.
public struct Reference<Target: Document>: Hashable, Sendable, Codable, IndexableValue {
    /// The target's ID.
    public let id: Target.ID

    /// A reference to `target` (nothing is parked: park the target yourself).
    public init(_ target: Target) { id = target.id }

    /// A reference to the document of `Target` with `id`.
    public init(id: Target.ID) { self.id = id }

    /// The reference as a query value (collection and ID).
    public var indexValue: DocumentValue { .reference(collection: Target.collection, id: id.documentValue) }

    private enum CodingKeys: String, CodingKey { case collection, id }

    /// Encoders other than Depot's store the reference as `{"collection": …, "id": …}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Target.collection, forKey: .collection)
        try container.encode(id, forKey: .id)
    }

    /// Decodes `{"collection": …, "id": …}` (Depot's own decoder reads references directly).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Target.ID.self, forKey: .id)
    }
}

/// What the codec hooks need of a ``Reference`` without knowing its target type.
protocol LazyReference {
    var referencedCollection: String { get }
    var referencedID: DocumentValue { get }
    static func make(collection: String, id: DocumentValue) -> Self?
}

extension Reference: LazyReference {
    var referencedCollection: String { Target.collection }
    var referencedID: DocumentValue { id.documentValue }
    static func make(collection: String, id: DocumentValue) -> Reference<Target>? {
        guard collection == Target.collection, let typed = Target.ID(documentValue: id) else { return nil }
        return Reference(id: typed)
    }
}

extension DocumentTransaction {
    /// The document a lazy reference points at, or nil when it is not stored.
    public func resolve<Target: Document>(_ reference: Reference<Target>) throws -> Target? {
        try retrieve(Target.self, id: reference.id)
    }

    /// The documents of `Source` whose `keyPath` references `target` (an inverse relationship),
    /// in ID order; read through an index on that field when `Source` declares one.
    public func documents<Source: Document, Target: Document>(_ source: Source.Type, referencing target: Target,
                                                              via keyPath: KeyPath<Source, Reference<Target>> & Sendable) throws -> [Source] {
        try fetch(FetchRequest<Source>().matching(keyPath, .equalTo(Reference(target))))
    }

    /// The documents of `Source` whose optional `keyPath` references `target`.
    public func documents<Source: Document, Target: Document>(_ source: Source.Type, referencing target: Target,
                                                              via keyPath: KeyPath<Source, Reference<Target>?> & Sendable) throws -> [Source] {
        try fetch(FetchRequest<Source>().matching(keyPath, .equalTo(Reference(target))))
    }
}

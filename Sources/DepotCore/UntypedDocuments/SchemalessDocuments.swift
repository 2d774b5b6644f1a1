import Foundation

/// What a collection of an alias holds: its ID kind, its document count and its indexes
/// (`depot collections`).
public struct CollectionInfo: Sendable, Hashable, Codable {
    /// One index recorded for the collection.
    public struct Index: Sendable, Hashable, Codable {
        /// The index name.
        public var name: String
        /// The field path it indexes (`salary`, `address.zip`).
        public var field: String
        /// Whether two documents may not share a value.
        public var unique: Bool
    }

    /// The collection name.
    public var name: String
    /// How its document IDs are keyed.
    public var idKind: IDKind
    /// How many documents it holds.
    public var count: Int
    /// Its indexes, by name.
    public var indexes: [Index]
}

extension DocumentTransaction {
    /// The ID kind, document count and indexes of `collection`, or nil when this alias never
    /// held documents in it.
    public func collectionInfo(_ collection: String) throws -> CollectionInfo? {
        guard let target = try context.existingTarget(alias: alias, collection: collection) else { return nil }
        let schema = try context.schema(alias: alias, collection: collection)
        let indexes = schema.indexes.map { CollectionInfo.Index(name: $0.name, field: $0.field, unique: $0.unique) }
        return CollectionInfo(name: collection, idKind: target.kind, count: try context.txn.count(target.keyspace),
                              indexes: indexes.sorted { $0.name < $1.name })
    }

    /// The document of `collection` with ID `id` as a schemaless value (references as
    /// `DocumentValue.reference(collection:id:)`), or nil.
    public func document(in collection: String, id: DocumentValue) throws -> DocumentValue? {
        guard let target = try context.existingTarget(alias: alias, collection: collection),
              let key = target.kind.key(for: id) else { return nil }
        return try key.withUnsafeBytes { k in
            if k.isEmpty || k.count > context.maxKeySize { return nil }
            return try context.txn.withValue(forKey: k, in: target.keyspace) { record in
                try openDocument(record, collection: collection, key: k, kind: target.kind).document
            }
        }
    }

    /// Stores `document` (an object) in `collection` under `id`, exactly as given: the record
    /// pipeline keeps the collection's indexes and records the change, as for any writer.
    ///
    /// The ID is keyed by the collection's stored kind; a new collection takes `idKind`, else
    /// the kind ``inferredIDKind(id:document:)`` gives. The record gets `syncStatus` (what
    /// parking gives, `notSynced`, unless said otherwise). Returns the record's new revision.
    ///
    /// - Throws: `DepotError` `.invalidKey` when `id` does not fit the kind, `.invalidDocument`
    ///   when `document` is not an object, `.idKindMismatch` when `idKind` contradicts the
    ///   stored kind, `.uniqueIndexViolation`.
    @discardableResult
    public func put(document: DocumentValue, in collection: String, id: DocumentValue, idKind: IDKind? = nil,
                    syncStatus: SyncStatus = .notSynced) throws -> UInt64 {
        try context.requireWritable("put a \(collection) document")
        guard case .object = document else {
            throw DepotError.invalidDocument("a \(collection) document must be a JSON object")
        }
        let existing = try context.existingTarget(alias: alias, collection: collection)
        let kind = existing?.kind ?? idKind ?? Self.inferredIDKind(id: id, document: document)
        guard let kind else {
            throw DepotError.invalidKey(detail: "the ID of a document in collection '\(collection)' must be a string, an integer or a UUID")
        }
        guard let target = try context.target(alias: alias, collection: collection, kind: idKind ?? kind, create: true) else {
            throw DepotError.storageInconsistent("the collection '\(collection)' could not be created")
        }
        guard let key = target.kind.key(for: id), !key.isEmpty else {
            if case .string("") = id { throw DepotError.invalidKey(detail: "the ID of a document in collection '\(collection)' is empty") }
            throw DepotError.invalidKey(detail: "the ID \(displayID(id)) does not fit the \(target.kind.rawValue) IDs of collection '\(collection)'")
        }
        let bytes = document.binary()
        let flags = (target.kind == .content ? Record.contentFlag : 0) | syncStatus.recordFlags
        return try key.withUnsafeBytes { k in
            try context.writeRecord(target, key: k, flags: flags, displayID: { displayID(id) }) { $0.append(contentsOf: bytes) }
        }
    }

    /// Stores a document as `depot export` printed it (see ``put(document:in:id:idKind:syncStatus:)``),
    /// in a collection of its ID kind (a new collection takes it; an existing one of another
    /// kind refuses it), with its sync status.
    @discardableResult
    public func importDocument(_ exported: ExportedDocument) throws -> UInt64 {
        try put(document: exported.document, in: exported.collection, id: exported.id, idKind: exported.idKind,
                syncStatus: exported.syncStatus)
    }

    /// Deletes the document of `collection` with ID `id`. Returns whether it was stored.
    @discardableResult
    public func deleteDocument(in collection: String, id: DocumentValue) throws -> Bool {
        try context.requireWritable("delete a \(collection) document")
        guard let target = try context.existingTarget(alias: alias, collection: collection),
              let key = target.kind.key(for: id), !key.isEmpty else { return false }
        return try key.withUnsafeBytes { try context.deleteRecord(target, key: $0) }
    }

    /// The ID kind a new collection gets for a document written with `id` (export's JSON loses
    /// the Swift type): integers are `signed` (`unsigned` beyond `Int64.max`); a UUID, or a
    /// string in Foundation's upper-case UUID form, is `uuid`; 64 lower-case hex digits that
    /// are not the document's identifying attribute are `content` (an unidentified value's
    /// hash); other strings are `string`. Nil for other values.
    public static func inferredIDKind(id: DocumentValue, document: DocumentValue) -> IDKind? {
        switch id {
        case .int: return .signed
        case .uint(let u): return u > UInt64(Int64.max) ? .unsigned : .signed
        case .uuid: return .uuid
        case .string(let text):
            if text.count == 36, let uuid = UUID(uuidString: text), uuid.uuidString == text { return .uuid }
            let isHash = text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
            if isHash && !(document.fields ?? []).contains(where: { $0.value == id }) { return .content }
            return .string
        default: return nil
        }
    }
}

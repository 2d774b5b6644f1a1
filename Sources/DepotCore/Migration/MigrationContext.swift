import Foundation

/// The steps a migration can take, on the stored documents of one alias, inside the migration's
/// transaction. Field paths may be dotted (`address.zip`) to reach into nested objects.
public final class MigrationContext {
    /// The migration's transaction, for anything the steps below do not cover.
    public let transaction: DocumentTransaction

    init(transaction: DocumentTransaction) { self.transaction = transaction }

    private var context: TransactionContext { transaction.context }

    // MARK: Fields

    /// Renames a field in every document of `collection` that has it.
    public func renameField(_ field: String, to newName: String, in collection: String) throws {
        try updateDocuments(in: collection) { document in
            guard let value = document.value(atPath: field) else { return }
            document.removeValue(atPath: field)
            document.setValue(value, atPath: newName)
        }
    }

    /// Removes a field from every document of `collection`.
    public func removeField(_ field: String, in collection: String) throws {
        try updateDocuments(in: collection) { document in document.removeValue(atPath: field) }
    }

    /// Adds a field with `value` to every document of `collection` that lacks it.
    public func addField(_ field: String, default value: DocumentValue, in collection: String) throws {
        try updateDocuments(in: collection) { document in
            if document.value(atPath: field) == nil { document.setValue(value, atPath: field) }
        }
    }

    /// Changes a field with `transform` (its current value, nil when absent; return nil to remove
    /// it), for example to change its type.
    public func transformField(_ field: String, in collection: String, _ transform: (DocumentValue?) throws -> DocumentValue?) throws {
        try updateDocuments(in: collection) { document in
            if let new = try transform(document.value(atPath: field)) {
                document.setValue(new, atPath: field)
            } else {
                document.removeValue(atPath: field)
            }
        }
    }

    /// Rewrites every document of `collection` with `body` (documents it leaves unchanged are
    /// not written).
    public func updateDocuments(in collection: String, _ body: (inout DocumentValue) throws -> Void) throws {
        guard let target = try context.existingTarget(alias: transaction.alias, collection: collection) else { return }
        for record in try records(of: target) {
            var document = record.document
            try body(&document)
            if document != record.document { try write(document, key: record.key, flags: record.flags, to: target) }
        }
    }

    // MARK: Collections

    /// Renames a collection: its documents move, references to them from every collection of the
    /// alias follow, and the old collection is dropped (with its indexes; a type's declared
    /// indexes are built again on the new name when it is next used). No delete rule runs:
    /// the documents move, none is deleted.
    ///
    /// - Throws: `DepotError` when `newName` already holds documents.
    public func renameCollection(_ collection: String, to newName: String) throws {
        if let existing = try context.existingTarget(alias: transaction.alias, collection: newName), try context.txn.count(existing.keyspace) > 0 {
            throw DepotError.migrationConflict("cannot rename collection '\(collection)' to '\(newName)': '\(newName)' already holds documents")
        }
        try migrateAll(from: collection, to: newName) { $0 }
    }

    /// Moves every document of `collection` into `destination`, converted by `transform`
    /// (GarageStorage's `migrateAll(from:to:)`): IDs are kept, a document already in
    /// `destination` with the same ID is replaced, references to the moved documents from every
    /// collection of the alias are rewritten, and `collection` is dropped without running any
    /// delete rule (the documents moved; none was deleted), all in the migration's transaction.
    /// The ID is the record's key: a document's fields are what `transform` returns, so a typed
    /// destination whose ID is a coded field (`id`) needs that field in it — a schemaless
    /// document put without one gets it from `transform` (a `.object` with an `id` field added).
    public func migrateAll(from collection: String, to destination: String, _ transform: (DocumentValue) throws -> DocumentValue) throws {
        guard collection != destination else { return }
        guard let source = try context.existingTarget(alias: transaction.alias, collection: collection) else { return }
        guard let target = try context.target(alias: transaction.alias, collection: destination, kind: source.kind, create: true) else {
            throw DepotError.storageInconsistent("the collection '\(destination)' could not be created")
        }
        for record in try records(of: source) {
            try write(try transform(record.document), key: record.key, flags: record.flags, to: target)
        }
        // A move is not a delete: no delete rule runs (cascade would delete, nullify would
        // clear and deny would refuse the referencing documents), and the references follow
        // the documents in this same transaction.
        try transaction.context.dropCollection(collection, alias: transaction.alias, applyingDeleteRules: false)
        try rewriteReferences(from: collection, to: destination)
    }

    // MARK: Helpers

    private struct StoredRecord {
        var key: [UInt8]
        var flags: UInt8
        var document: DocumentValue
    }

    private func records(of target: RecordTarget) throws -> [StoredRecord] {
        var result: [StoredRecord] = []
        try context.txn.scan(target.keyspace, prefix: nil, reverse: false) { key, value in
            let (header, document) = try transaction.openDocument(value, collection: target.collection, key: key, kind: target.kind)
            result.append(StoredRecord(key: [UInt8](key), flags: header.flags, document: document))
            return true
        }
        return result
    }

    private func write(_ document: DocumentValue, key: [UInt8], flags: UInt8, to target: RecordTarget) throws {
        let bytes = document.binary()
        _ = try key.withUnsafeBytes { k in
            try transaction.context.writeRecord(target, key: k, flags: flags, displayID: { displayIDOfKey(k, kind: target.kind) }) { $0.append(contentsOf: bytes) }
        }
    }

    private func rewriteReferences(from old: String, to new: String) throws {
        for collection in try transaction.collections() {
            try updateDocuments(in: collection) { document in document = document.renamingReferences(from: old, to: new) }
        }
    }
}

extension DocumentValue {
    /// This value with every reference to collection `old` pointing at `new` instead.
    func renamingReferences(from old: String, to new: String) -> DocumentValue {
        switch self {
        case .reference(let collection, let id): return .reference(collection: collection == old ? new : collection, id: id)
        case .array(let items): return .array(items.map { $0.renamingReferences(from: old, to: new) })
        case .object(let fields): return .object(fields.map { Field($0.key, $0.value.renamingReferences(from: old, to: new)) })
        default: return self
        }
    }
}

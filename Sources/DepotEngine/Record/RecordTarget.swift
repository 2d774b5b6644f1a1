/// A keyspace of records as the record pipeline writes it: a collection of an alias (or the
/// key/value kit's keyspace), its ID kind, and the schema the pipeline maintains for it.
/// Resolved once per transaction (see DepotCore's `TransactionContext`).
@usableFromInline
package final class RecordTarget {
    /// The alias (store) the collection belongs to.
    package let alias: String
    /// The collection name, as change sets report it.
    package let collection: String
    /// The records' keyspace.
    @usableFromInline package let keyspace: Keyspace
    /// The kind of the records' keys.
    package let kind: IDKind
    /// The savepoint depth the target was resolved at.
    package var depth: Int
    /// The change recorder's slot for this collection (nil: nobody records).
    package let slot: Int?
    /// Whether ``schema`` and the keyspaces below are loaded for writing.
    package var schemaLoaded = false
    /// The collection's schema (once ``schemaLoaded``).
    package var schema = CollectionSchema.empty
    /// Keyspaces of `schema.indexes`, in the same order.
    package var indexKeyspaces: [Keyspace] = []
    /// The alias's sync-status keyspace, when the collection tracks sync status.
    package var syncKeyspace: Keyspace?
    /// Whether this is the key/value kit's keyspace (not a document collection).
    package let isKeyValue: Bool
    /// The delete rules whose target is this collection (loaded on the first delete).
    package var deleteRules: [RegisteredDeleteRule]?

    /// Whether the keyspace handles of this target (and of its loaded schema's indexes) still
    /// name the same keyspaces in `txn` (see `StorageTransaction.isCurrent(_:)`).
    package func keyspacesAreCurrent(in txn: any StorageTransaction) -> Bool {
        guard txn.isCurrent(keyspace) else { return false }
        if let syncKeyspace, !txn.isCurrent(syncKeyspace) { return false }
        return indexKeyspaces.allSatisfy { txn.isCurrent($0) }
    }

    /// A target resolved at savepoint depth `depth`, with the change recorder's `slot`.
    package init(alias: String, collection: String, keyspace: Keyspace, kind: IDKind, depth: Int, slot: Int?, isKeyValue: Bool = false) {
        self.isKeyValue = isKeyValue
        self.alias = alias
        self.collection = collection
        self.keyspace = keyspace
        self.kind = kind
        self.depth = depth
        self.slot = slot
    }
}

/// Renders a stored key of `kind` for messages.
package func displayIDOfKey(_ key: UnsafeRawBufferPointer, kind: IDKind) -> String {
    displayID(kind.value(ofKey: key))
}

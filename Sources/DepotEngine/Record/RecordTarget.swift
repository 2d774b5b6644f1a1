/// A keyspace of records as the record pipeline writes it: a collection of an alias (or the
/// key/value kit's keyspace), its ID kind, and the schema the pipeline maintains for it.
/// Resolved once per transaction (see ``TransactionContext``).
///
/// Its mutable state is stored `@exclusivity(unchecked)`, as the context's is (a target belongs
/// to one transaction, so to one thread at a time, and no accessor overlaps another), behind
/// inlinable `package` accessors: DepotCore, another module, accessing a stored variable
/// directly pays a dynamic exclusivity check each time (the attribute does not cross modules;
/// about 250 instructions per document write, callgrind doc_insert), while an accessor's body,
/// compiled here, is inlined with its accesses unchecked.
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
    @inlinable package var depth: Int {
        get { _depth }
        set { _depth = newValue }
    }
    @usableFromInline @exclusivity(unchecked) var _depth: Int
    /// The change recorder's slot for this collection (nil: nobody records).
    package let slot: Int?
    /// Whether ``schema`` and the keyspaces below are loaded for writing.
    @inlinable package var schemaLoaded: Bool {
        get { _schemaLoaded }
        set { _schemaLoaded = newValue }
    }
    @usableFromInline @exclusivity(unchecked) var _schemaLoaded: Bool = false
    /// The collection's schema (once ``schemaLoaded``).
    @inlinable package var schema: CollectionSchema {
        get { _schema }
        set { _schema = newValue }
    }
    @usableFromInline @exclusivity(unchecked) var _schema: CollectionSchema = CollectionSchema.empty
    /// Keyspaces of `schema.indexes`, in the same order.
    @inlinable package var indexKeyspaces: [Keyspace] {
        get { _indexKeyspaces }
        set { _indexKeyspaces = newValue }
    }
    @usableFromInline @exclusivity(unchecked) var _indexKeyspaces: [Keyspace] = []
    /// The alias's sync-status keyspace, when the collection tracks sync status.
    @inlinable package var syncKeyspace: Keyspace? {
        get { _syncKeyspace }
        set { _syncKeyspace = newValue }
    }
    @usableFromInline @exclusivity(unchecked) var _syncKeyspace: Keyspace?
    /// Whether this is the key/value kit's keyspace (not a document collection).
    package let isKeyValue: Bool
    /// Whether this target came from the store's cache of write targets (see `WriteTargets`).
    var fromWriteCache = false
    /// The delete rules whose target is this collection (loaded on the first delete).
    @inlinable package var deleteRules: [RegisteredDeleteRule]? {
        get { _deleteRules }
        set { _deleteRules = newValue }
    }
    @usableFromInline @exclusivity(unchecked) var _deleteRules: [RegisteredDeleteRule]?

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
        _depth = depth
        self.slot = slot
    }
}

/// Renders a stored key of `kind` for messages.
package func displayIDOfKey(_ key: UnsafeRawBufferPointer, kind: IDKind) -> String {
    kind.display(key: key)
}

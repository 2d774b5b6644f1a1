/// What one commit changed, grouped by alias and collection.
///
/// - created: absent before the transaction, present after;
/// - updated: present before and after (parked again);
/// - deleted: present before, absent after.
///
/// A document created and deleted in the same transaction appears nowhere; work rolled back
/// (a thrown write, a rolled-back savepoint) never appears.
public struct ChangeSet: Sendable, Hashable {
    /// The changes of one collection in one alias.
    public struct CollectionChanges: Sendable, Hashable {
        /// The alias (store) the collection belongs to.
        public var alias: String
        /// The collection name.
        public var collection: String
        /// IDs of created documents, in key order.
        public var created: [DocumentValue]
        /// IDs of updated documents, in key order.
        public var updated: [DocumentValue]
        /// IDs of deleted documents, in key order.
        public var deleted: [DocumentValue]

        /// Creates the changes of one collection.
        public init(alias: String, collection: String, created: [DocumentValue] = [], updated: [DocumentValue] = [], deleted: [DocumentValue] = []) {
            self.alias = alias
            self.collection = collection
            self.created = created
            self.updated = updated
            self.deleted = deleted
        }
    }

    /// Per alias and collection, sorted by alias then collection.
    public var collections: [CollectionChanges]
    /// True when the commit was made by another process or another store handle (see the kits'
    /// external change watcher); false for commits of this process.
    public var isExternal: Bool
    /// The LMDB transaction ID of the commit, when known (for commits of this process and of
    /// others): it grows with each commit. Commits made on several threads at once can reach an
    /// observer or stream in another order than they committed (each is told after its own
    /// commit, on its own thread): order them by this ID where it matters.
    public var transactionID: Int?

    /// Creates a change set.
    public init(collections: [CollectionChanges], isExternal: Bool = false, transactionID: Int? = nil) {
        self.collections = collections
        self.isExternal = isExternal
        self.transactionID = transactionID
    }

    /// Whether nothing changed.
    public var isEmpty: Bool { collections.allSatisfy { $0.created.isEmpty && $0.updated.isEmpty && $0.deleted.isEmpty } }

    /// Whether a part matches an alias and/or a set of collections (what ``filtered(alias:collections:)``
    /// would keep), found without a copy.
    package func touches(alias: String?, collections names: Set<String>?) -> Bool {
        collections.contains { c in (alias == nil || c.alias == alias) && (names?.contains(c.collection) ?? true) }
    }

    /// Only the parts that match an alias and/or a set of collections.
    package func filtered(alias: String?, collections names: Set<String>?) -> ChangeSet {
        var copy = self
        copy.collections = collections.filter { c in
            (alias == nil || c.alias == alias) && (names?.contains(c.collection) ?? true)
        }
        return copy
    }
}

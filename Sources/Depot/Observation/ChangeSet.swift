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
    /// The LMDB transaction ID of the commit, when known.
    public var transactionID: Int?

    /// Creates a change set.
    public init(collections: [CollectionChanges], isExternal: Bool = false, transactionID: Int? = nil) {
        self.collections = collections
        self.isExternal = isExternal
        self.transactionID = transactionID
    }

    /// Whether nothing changed.
    public var isEmpty: Bool { collections.allSatisfy { $0.created.isEmpty && $0.updated.isEmpty && $0.deleted.isEmpty } }

    /// The changes of `collection` in `alias`.
    public func changes(in collection: String, alias: String = Store.defaultAlias) -> CollectionChanges? {
        collections.first { $0.alias == alias && $0.collection == collection }
    }

    /// Typed IDs of documents of type `D` created in `alias`.
    public func created<D: Document>(_ type: D.Type, alias: String = Store.defaultAlias) -> [D.ID] {
        (changes(in: D.collection, alias: alias)?.created ?? []).compactMap { D.ID(documentValue: $0) }
    }
    /// Typed IDs of documents of type `D` updated in `alias`.
    public func updated<D: Document>(_ type: D.Type, alias: String = Store.defaultAlias) -> [D.ID] {
        (changes(in: D.collection, alias: alias)?.updated ?? []).compactMap { D.ID(documentValue: $0) }
    }
    /// Typed IDs of documents of type `D` deleted in `alias`.
    public func deleted<D: Document>(_ type: D.Type, alias: String = Store.defaultAlias) -> [D.ID] {
        (changes(in: D.collection, alias: alias)?.deleted ?? []).compactMap { D.ID(documentValue: $0) }
    }

    /// Only the parts that match an alias and/or a set of collections.
    public func filtered(alias: String?, collections names: Set<String>?) -> ChangeSet {
        var copy = self
        copy.collections = collections.filter { c in
            (alias == nil || c.alias == alias) && (names == nil || names!.contains(c.collection))
        }
        return copy
    }
}

/// Collects what a transaction does to each document, with an undo log for savepoints.
final class ChangeRecorder {
    struct Key: Hashable {
        var alias: String
        var collection: String
        var key: [UInt8]
    }
    struct State: Equatable {
        var existedBefore: Bool
        var existsNow: Bool
        var idKind: IDKind
    }

    private(set) var states: [Key: State] = [:]
    private var undo: [(Key, State?)] = []

    /// Records that `key` now exists (or not); `existedBefore` is used only the first time.
    func record(_ key: Key, existedBefore: Bool, existsNow: Bool, idKind: IDKind) {
        let old = states[key]
        undo.append((key, old))
        states[key] = State(existedBefore: old?.existedBefore ?? existedBefore, existsNow: existsNow, idKind: idKind)
    }

    /// A point to roll back to.
    var mark: Int { undo.count }

    /// Undoes everything recorded after `mark`.
    func revert(to mark: Int) {
        while undo.count > mark {
            let (key, old) = undo.removeLast()
            states[key] = old
        }
    }

    var isEmpty: Bool { states.isEmpty }

    /// The keys recorded since `mark`, each once, with their current state.
    func touched(since mark: Int) -> [(Key, State)] {
        var seen = Set<Key>()
        var result: [(Key, State)] = []
        for (key, _) in undo[min(mark, undo.count)...] where seen.insert(key).inserted {
            if let state = states[key] { result.append((key, state)) }
        }
        return result
    }

    /// The change set of everything recorded.
    func changeSet(transactionID: Int?) -> ChangeSet {
        struct Group { var created: [[UInt8]] = []; var updated: [[UInt8]] = []; var deleted: [[UInt8]] = []; var kind = IDKind.string }
        var groups: [String: [String: Group]] = [:]
        for (key, state) in states {
            var group = groups[key.alias, default: [:]][key.collection, default: Group()]
            group.kind = state.idKind
            switch (state.existedBefore, state.existsNow) {
            case (false, true): group.created.append(key.key)
            case (true, true): group.updated.append(key.key)
            case (true, false): group.deleted.append(key.key)
            case (false, false): continue
            }
            groups[key.alias, default: [:]][key.collection] = group
        }
        var result: [ChangeSet.CollectionChanges] = []
        for alias in groups.keys.sorted() {
            for (collection, group) in groups[alias]!.sorted(by: { $0.key < $1.key }) {
                func ids(_ keys: [[UInt8]]) -> [DocumentValue] {
                    keys.sorted { $0.lexicographicallyPrecedes($1) }.map { k in k.withUnsafeBytes { group.kind.value(ofKey: $0) } }
                }
                result.append(.init(alias: alias, collection: collection, created: ids(group.created),
                                    updated: ids(group.updated), deleted: ids(group.deleted)))
            }
        }
        return ChangeSet(collections: result, transactionID: transactionID)
    }
}

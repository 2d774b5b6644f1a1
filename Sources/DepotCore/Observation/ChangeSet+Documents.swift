// `ChangeSet` itself is the record engine's (DepotEngine): what one commit changed, by key.
// Here, what the document layer adds: a collection's changes by alias, and IDs typed by document.

extension ChangeSet {
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
}

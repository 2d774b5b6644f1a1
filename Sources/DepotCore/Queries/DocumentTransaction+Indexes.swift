
/// Which indexes a query may use. Index entries are written by the record pipeline
/// (`RecordPipeline.swift`) and indexes are built, dropped and rebuilt by the schema
/// reconciler (`SchemaReconciler.swift`); this file only chooses among the stored ones.
extension DocumentTransaction {
    func syncKeyspace(create: Bool) throws -> Keyspace? {
        try context.txn.keyspace(named: StoreLayout.syncDatabase(alias: alias), create: create, multiValue: true)
    }

    /// The stored indexes of `collection` a query can trust: built by the current format (and,
    /// when `declared` is given, declared so by the type), with their keyspaces.
    func queryableIndexes(collection: String, declared: [IndexDefinition]?) throws -> [(definition: IndexDefinition, keyspace: Keyspace)] {
        let schema = try context.schema(alias: alias, collection: collection)
        var result: [(definition: IndexDefinition, keyspace: Keyspace)] = []
        for index in schema.indexes where !schema.legacyIndexes.contains(index.name) {
            if let declared, !declared.contains(index) { continue }
            let name = StoreLayout.indexDatabase(alias: alias, collection: collection, index: index.name)
            if let ks = try context.txn.keyspace(named: name, create: false, multiValue: !index.unique) { result.append((index, ks)) }
        }
        return result
    }

    /// The index to use: equality on a unique index, then equality, then prefix, then a range.
    /// Conditions name field paths; an index serves the conditions on its field. A unique index
    /// holds no entry for nil (nil values are exempt from uniqueness), so it never serves a
    /// condition on nil: another index or a scan does.
    static func chooseIndex(for conditions: [FieldCondition], among indexes: [IndexDefinition]) -> (IndexDefinition, FieldCondition)? {
        func rank(_ c: FieldCondition, unique: Bool) -> Int? {
            if unique, case .null = c.value { return nil }
            switch c.op {
            case .equal: return unique ? 0 : 1
            case .prefix: return 2
            case .less, .lessOrEqual, .greater, .greaterOrEqual: return 3
            case .notEqual: return nil
            }
        }
        var best: (rank: Int, index: IndexDefinition, condition: FieldCondition)?
        for c in conditions {
            guard let index = indexes.first(where: { $0.field == c.field }), let r = rank(c, unique: index.unique) else { continue }
            if let current = best, current.rank <= r { continue }
            best = (r, index, c)
        }
        return best.map { ($0.index, $0.condition) }
    }
}

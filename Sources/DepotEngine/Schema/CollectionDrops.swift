/// Dropping collections and what remains of an alias: records (through the pipeline, recorded
/// as deleted), keyspaces, descriptors, index and sync-status records.
extension TransactionContext {
    /// Removes collection `collection` of `alias` entirely: its documents (recorded as
    /// deleted), its keyspace, its descriptor, its indexes and its sync-status entries.
    ///
    /// `applyingDeleteRules` false (a migration that moved the documents elsewhere) removes the
    /// records without running any delete rule: nothing was deleted, only moved.
    package func dropCollection(_ collection: String, alias: String, applyingDeleteRules: Bool = true) throws {
        let meta = try writableMeta()
        let txn = txn
        if let target = try existingTarget(alias: alias, collection: collection) {
            _ = try clearRecords(target, applyingDeleteRules: applyingDeleteRules)
            try txn.drop(target.keyspace)
        }
        let schema = try schema(alias: alias, collection: collection)
        for index in schema.indexes {
            let name = StoreLayout.indexDatabase(alias: alias, collection: collection, index: index.name)
            if let ks = try txn.keyspace(named: name, create: false, multiValue: !index.unique) { try txn.drop(ks) }
            _ = try txn.delete(forKey: Array((StoreLayout.indexMetaPrefix(alias: alias, collection: collection) + index.name).utf8), in: meta)
        }
        _ = try txn.delete(forKey: Array(StoreLayout.syncTrackingKey(alias: alias, collection: collection).utf8), in: meta)
        _ = try txn.delete(forKey: Array(StoreLayout.descriptorKey(alias: alias, collection: collection).utf8), in: meta)
        forgetCollection(alias: alias, collection: collection)
        try schemaDropped()
    }

    /// Drops what remains of `alias` once its collections are dropped: index records of
    /// collections no longer described, and its sync-status keyspace.
    package func dropAliasRemains(alias: String) throws {
        let meta = try writableMeta()
        for (metaKey, _) in try metaEntries(prefix: Array(StoreLayout.indexMetaPrefix(alias: alias).utf8)) {
            _ = try txn.delete(forKey: metaKey, in: meta)
        }
        if let ks = try txn.keyspace(named: StoreLayout.syncDatabase(alias: alias), create: false, multiValue: true) {
            try txn.drop(ks)
        }
        try schemaDropped()
    }
}

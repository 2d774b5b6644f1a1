extension TransactionContext {
    // MARK: Schema

    /// The store's schema version as this transaction sees it (read once per transaction).
    /// Settles a check a rebind left for later (see ``confirmVersion()``): what this context
    /// resolved at another version is forgotten here, before anything can use it.
    func schemaVersion() throws -> UInt64 {
        if let schemaVersionValue { return schemaVersionValue }
        let version = try CollectionSchema.currentVersion(meta: try metaKeyspace(), txn: txn)
        schemaVersionValue = version
        if let expected = versionToConfirm {
            versionToConfirm = nil
            if version != expected { forgetResolved() }
        }
        return version
    }

    /// The schema of a collection: from this transaction, the store's cache (same version), or
    /// the meta records.
    package func schema(alias: String, collection: String) throws -> CollectionSchema {
        try confirmPendingVersion()
        let key = CollectionName(alias: alias, collection: collection)
        if let local = schemas[key] { return local }
        let version = try schemaVersion()
        if !changedSchema, let cached = engine.cachedSchema(key, version: version) {
            schemas[key] = cached
            return cached
        }
        try StoreLayout.validateCollection(collection) // before its meta key is read
        let loaded = try CollectionSchema.load(alias: alias, collection: collection, meta: try metaKeyspace(), txn: txn)
        schemas[key] = loaded
        if !changedSchema { engine.cacheSchema(loaded, for: key, version: version) }
        return loaded
    }

    /// Records that schemas were removed in this transaction (an alias dropped).
    func schemaDropped() throws {
        if !changedSchema {
            schemaVersionValue = try CollectionSchema.bumpVersion(meta: try writableMeta(), txn: txn)
            changedSchema = true
        }
        schemas.removeAll()
        for target in targets.values { target.schemaLoaded = false }
        typeFacts.removeAll()
    }

    /// Records a schema change made in this transaction (meta records already written).
    func schemaChanged(alias: String, collection: String, to schema: CollectionSchema) throws {
        if !changedSchema {
            schemaVersionValue = try CollectionSchema.bumpVersion(meta: try writableMeta(), txn: txn)
            changedSchema = true
        }
        let key = CollectionName(alias: alias, collection: collection)
        schemas[key] = schema
        if let target = targets[key] { target.schemaLoaded = false }
    }
}

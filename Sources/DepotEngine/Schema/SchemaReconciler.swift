/// Reconciles a collection's stored schema with what a document type declares: a new index is
/// built from the stored documents, a removed one dropped, a changed one (other field or
/// uniqueness, or written in the old format) rebuilt; sync-status tracking is added (entries
/// built) or removed the same way. Runs in a write transaction the first time a type is used in
/// it; the schema version is bumped so that cached schemas (this process's and others') reload.
extension TransactionContext {
    /// Brings the stored schema of `target` to what a type (`typeName`, for messages) declares:
    /// its indexes, whether it tracks sync status, and its version.
    package func reconcile(_ target: RecordTarget, declared: [IndexDefinition], tracksSyncStatus: Bool, version: Int, typeName: String) throws {
        if !target.schemaLoaded {
            // A type older than the collection changes nothing (its legacy indexes included).
            let stored = try schema(alias: target.alias, collection: target.collection)
            if stored.typeVersion > version {
                throw DepotError.newerVersion(collection: target.collection, stored: stored.typeVersion, declared: version, typeName: typeName)
            }
            try dropUndeclaredLegacyIndexes(target, declared: declared)
        }
        try prepareForWriting(target) // (indexes of an earlier format are rebuilt there)
        var schema = target.schema
        if schema.typeVersion > version {
            throw DepotError.newerVersion(collection: target.collection, stored: schema.typeVersion, declared: version, typeName: typeName)
        }
        // In any order: stored definitions load sorted by name, a type declares them in its own
        // order (comparing the arrays reconciled, and bumped the schema version, in every write).
        let sameIndexes = schema.indexes == declared || schema.indexes.count == declared.count && Set(schema.indexes) == Set(declared)
        if sameIndexes && schema.tracksSyncStatus == tracksSyncStatus
            && (schema.typeVersion == version || version <= 1 && schema.typeVersion == 0) { return }
        if !declared.isEmpty, let transform = engine.recordTransform, !transform.allowsPlaintextIndexes {
            throw DepotError.invalidIndex(collection: target.collection, index: declared[0].name,
                                          detail: "the store transforms (encrypts) its records, but index keys would hold field values untransformed; drop the index or use a transform whose allowsPlaintextIndexes is true")
        }
        var names = Set<String>()
        for index in declared where !names.insert(index.name).inserted {
            throw DepotError.invalidIndex(collection: target.collection, index: index.name, detail: "\(typeName) declares two indexes with this name")
        }
        // A schema change is a write: refused to a handle without the transform of a sealed store
        // (it would, e.g., rebuild the sync index from sealed bytes it cannot read).
        try checkSealingOnce()
        let meta = try writableMeta()
        let txn = txn
        // Drop what is no longer declared as it is stored.
        for stored in schema.indexes where !declared.contains(stored) {
            let name = StoreLayout.indexDatabase(alias: target.alias, collection: target.collection, index: stored.name)
            if let ks = try txn.keyspace(named: name, create: false, multiValue: !stored.unique) { try txn.drop(ks) }
            _ = try txn.delete(forKey: Array((StoreLayout.indexMetaPrefix(alias: target.alias, collection: target.collection) + stored.name).utf8), in: meta)
        }
        schema.indexes.removeAll { !declared.contains($0) }
        // Build what is new.
        let missing = declared.filter { !schema.indexes.contains($0) }
        if !missing.isEmpty {
            try buildIndexes(missing, target: target)
            for index in missing {
                try txn.put(index.metaValue, forKey: Array((StoreLayout.indexMetaPrefix(alias: target.alias, collection: target.collection) + index.name).utf8), in: meta)
            }
        }
        schema.indexes = declared
        if schema.tracksSyncStatus != tracksSyncStatus {
            try rebuildSyncEntries(target, keep: tracksSyncStatus)
            let key = Array(StoreLayout.syncTrackingKey(alias: target.alias, collection: target.collection).utf8)
            if tracksSyncStatus { try txn.put([1], forKey: key, in: meta) } else { _ = try txn.delete(forKey: key, in: meta) }
            schema.tracksSyncStatus = tracksSyncStatus
        }
        if version > schema.typeVersion && version > 1 {
            try BigEndian<UInt64>.withBytes(of: UInt64(version)) { v in
                try Array(StoreLayout.typeVersionKey(alias: target.alias, collection: target.collection).utf8).withUnsafeBytes {
                    try txn.put(v, forKey: $0, in: meta)
                }
            }
            schema.typeVersion = version
        }
        try schemaChanged(alias: target.alias, collection: target.collection, to: schema)
        target.schemaLoaded = false
        try prepareForWriting(target)
    }

    /// Drops the indexes stored in an earlier format that the writing type no longer declares
    /// (as they are stored), before ``prepareForWriting(_:)`` would rebuild them: a rebuild can
    /// fail (a unique index finding one value twice in the current format), and it must not
    /// block the very write that removes the index.
    private func dropUndeclaredLegacyIndexes(_ target: RecordTarget, declared: [IndexDefinition]) throws {
        var schema = try schema(alias: target.alias, collection: target.collection)
        let undeclared = schema.indexes.filter { schema.legacyIndexes.contains($0.name) && !declared.contains($0) }
        guard !undeclared.isEmpty else { return }
        try requireWritable("write to collection '\(target.collection)'")
        try checkSealingOnce()
        let meta = try writableMeta()
        for stored in undeclared {
            let name = StoreLayout.indexDatabase(alias: target.alias, collection: target.collection, index: stored.name)
            if let ks = try txn.keyspace(named: name, create: false, multiValue: !stored.unique) { try txn.drop(ks) }
            _ = try txn.delete(forKey: Array(StoreLayout.indexMetaKey(alias: target.alias, collection: target.collection, index: stored.name).utf8), in: meta)
        }
        schema.indexes.removeAll { undeclared.contains($0) }
        schema.legacyIndexes.subtract(undeclared.map(\.name))
        try schemaChanged(alias: target.alias, collection: target.collection, to: schema)
    }

    /// Rebuilds the indexes of `schema` stored in an earlier format (``CollectionSchema/legacyIndexes``)
    /// in the current one, with the same definitions; returns the schema with them current. Run
    /// by the first write to the collection (``prepareForWriting(_:)``), whatever writes it.
    func upgradeLegacyIndexes(_ target: RecordTarget, schema: CollectionSchema) throws -> CollectionSchema {
        var schema = schema
        let legacy = schema.indexes.filter { schema.legacyIndexes.contains($0.name) }
        try checkSealingOnce()
        let meta = try writableMeta()
        for index in legacy {
            let name = StoreLayout.indexDatabase(alias: target.alias, collection: target.collection, index: index.name)
            if let ks = try txn.keyspace(named: name, create: false, multiValue: !index.unique) { try txn.drop(ks) }
        }
        do {
            try buildIndexes(legacy, target: target)
        } catch let error as DepotError where error.code == .uniqueIndexViolation {
            // Values the earlier format kept apart (an unsigned integer past Int64.max and the
            // equal Double) are one value now.
            throw DepotError.invalidIndex(collection: target.collection, index: legacy.filter(\.unique).map(\.name).joined(separator: ", "),
                                          detail: "rebuilding the unique index in the current key format found one value twice (\(error.message)): write the collection once with a type that no longer declares the index unique (that drops it), or change one of the two documents with the Depot version that wrote the index")
        }
        for index in legacy {
            try txn.put(index.metaValue, forKey: Array(StoreLayout.indexMetaKey(alias: target.alias, collection: target.collection, index: index.name).utf8), in: meta)
        }
        schema.legacyIndexes = []
        try schemaChanged(alias: target.alias, collection: target.collection, to: schema)
        return schema
    }

    /// Fills new index keyspaces from the stored documents (unique clashes are errors).
    private func buildIndexes(_ indexes: [IndexDefinition], target: RecordTarget) throws {
        let txn = txn
        let keyspaces = try indexes.map { index -> Keyspace in
            let name = StoreLayout.indexDatabase(alias: target.alias, collection: target.collection, index: index.name)
            guard let ks = try txn.keyspace(named: name, create: true, multiValue: !index.unique) else {
                throw DepotError.storageInconsistent("the index keyspace '\(index.name)' of \(target.collection) could not be created")
            }
            try txn.clear(ks)
            return ks
        }
        var entries: [(key: [UInt8], fields: [[UInt8]])] = []
        try txn.scan(target.keyspace, prefix: nil, reverse: false) { key, value in
            let payload = try RecordReader.open(value, alias: target.alias, collection: target.collection, key: key, kind: target.kind).payload
            do {
                entries.append(([UInt8](key), try IndexEntries.fields(indexes, payload: payload)))
            } catch {
                throw RecordReader.failure(error, alias: target.alias, collection: target.collection, kind: target.kind, key: key)
            }
            return true
        }
        for (key, fields) in entries {
            try key.withUnsafeBytes { k in
                // Unique entries as every write claims them (a clash is an error), then the others.
                try IndexEntries.claimUnique(indexes, in: keyspaces, of: target, key: k, new: fields, displayID: { displayIDOfKey(k, kind: target.kind) }, txn: txn)
                for (i, index) in indexes.enumerated() where !index.unique {
                    try fields[i].withUnsafeBytes { try txn.put(k, forKey: $0, in: keyspaces[i]) }
                }
            }
        }
    }

    /// Removes a collection's sync-status entries and, when `keep`, writes them again from the
    /// records' flags.
    private func rebuildSyncEntries(_ target: RecordTarget, keep: Bool) throws {
        let txn = txn
        guard let ks = try txn.keyspace(named: StoreLayout.syncDatabase(alias: target.alias), create: keep, multiValue: true) else { return }
        try IndexEntries.clearSync(ks, collection: target.collection, txn: txn)
        guard keep else { return }
        var entries: [(key: [UInt8], status: SyncStatus)] = []
        try txn.scan(target.keyspace, prefix: nil, reverse: false) { key, value in
            entries.append(([UInt8](key), SyncStatus(recordFlags: Record.peekHeader(value)?.flags ?? 0)))
            return true
        }
        for (key, status) in entries {
            try key.withUnsafeBytes { try IndexEntries.updateSync(ks, collection: target.collection, key: $0, old: nil, new: status, txn: txn) }
        }
    }
}

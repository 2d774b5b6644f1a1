import DepotLMDB

extension DocumentTransaction {
    // MARK: Keyspaces

    func indexKeyspace(collection: String, index: String, unique: Bool, create: Bool) throws -> Keyspace? {
        try context.txn.keyspace(named: StoreLayout.indexDatabase(alias: alias, collection: collection, index: index),
                                 create: create, multiValue: !unique)
    }

    func syncKeyspace(create: Bool) throws -> Keyspace? {
        try context.txn.keyspace(named: StoreLayout.syncDatabase(alias: alias), create: create, multiValue: true)
    }

    // MARK: Which indexes can be used

    /// The declared indexes of `D` that are built. In a write transaction, missing ones are
    /// built now from the stored documents; in a read transaction they are skipped (queries scan).
    func usableIndexes<D: Document>(_ type: D.Type) throws -> [DocumentIndex<D>] {
        let declared = D.indexes
        if declared.isEmpty { return declared }
        var usable: [DocumentIndex<D>] = []
        for index in declared {
            let name = StoreLayout.indexDatabase(alias: alias, collection: D.collection, index: index.name)
            let metaKey = StoreLayout.indexMetaKey(alias: alias, collection: D.collection, index: index.name)
            if try context.isIndexBuilt(name, metaKey: metaKey) {
                usable.append(index)
            } else if !isReadOnly {
                try build(index)
                try context.txn.put(Array((index.unique ? "unique" : "multi").utf8), forKey: Array(metaKey.utf8), in: try context.writableMeta())
                context.markIndexBuilt(name, unique: index.unique)
                usable.append(index)
            }
        }
        return usable
    }

    /// Fills an index from the documents already stored.
    private func build<D: Document>(_ index: DocumentIndex<D>) throws {
        guard let ks = try indexKeyspace(collection: D.collection, index: index.name, unique: index.unique, create: true) else { return }
        try context.txn.clear(ks)
        var documents: [(key: [UInt8], document: D)] = []
        try forEach(D.self) { document in
            documents.append((document.id.keyBytes, document))
            return true
        }
        for (key, document) in documents {
            try key.withUnsafeBytes { k in try addEntry(index, value: index.extract(document), key: k, keyspace: ks) }
        }
    }

    // MARK: Maintenance

    private func addEntry<D: Document>(_ index: DocumentIndex<D>, value: DocumentValue, key: UnsafeRawBufferPointer, keyspace: Keyspace) throws {
        if index.unique, case .null = value { return }
        let encoded = IndexKeyEncoding.encode(value)
        try encoded.withUnsafeBytes { indexKey in
            if index.unique {
                let clash = try context.txn.withValue(forKey: indexKey, in: keyspace) { existing -> String? in
                    existing.elementsEqual(key) ? nil : displayID(D.ID.idKind.value(ofKey: existing))
                } ?? nil
                if let clash {
                    throw DepotError.uniqueIndexViolation(alias: alias, collection: D.collection, index: index.name,
                                                          id: displayID(D.ID.idKind.value(ofKey: key)), conflictingID: clash)
                }
            }
            try context.txn.put(key, forKey: indexKey, in: keyspace)
        }
    }

    private func removeEntry<D: Document>(_ index: DocumentIndex<D>, value: DocumentValue, key: UnsafeRawBufferPointer, keyspace: Keyspace) throws {
        if index.unique, case .null = value { return }
        let encoded = IndexKeyEncoding.encode(value)
        try encoded.withUnsafeBytes { indexKey in
            if index.unique {
                // Only remove the entry if it still points at this document.
                let ours = try context.txn.withValue(forKey: indexKey, in: keyspace) { $0.elementsEqual(key) } ?? false
                if ours { _ = try context.txn.delete(forKey: indexKey, in: keyspace) }
            } else {
                _ = try context.txn.delete(forKey: indexKey, value: key, in: keyspace)
            }
        }
    }

    /// Checks unique indexes before `document` is written under `key`.
    func checkUniqueIndexes<D: Document>(_ indexes: [DocumentIndex<D>], for document: D, key: UnsafeRawBufferPointer) throws {
        for index in indexes where index.unique {
            let value = index.extract(document)
            if case .null = value { continue }
            guard let ks = try indexKeyspace(collection: D.collection, index: index.name, unique: true, create: true) else { continue }
            let clash = try IndexKeyEncoding.encode(value).withUnsafeBytes { indexKey in
                try context.txn.withValue(forKey: indexKey, in: ks) { existing -> String? in
                    existing.elementsEqual(key) ? nil : displayID(D.ID.idKind.value(ofKey: existing))
                } ?? nil
            }
            if let clash {
                throw DepotError.uniqueIndexViolation(alias: alias, collection: D.collection, index: index.name,
                                                      id: displayID(D.ID.idKind.value(ofKey: key)), conflictingID: clash)
            }
        }
    }

    /// Moves the entries of `key` from the old document's values to the new one's.
    func updateIndexes<D: Document>(_ indexes: [DocumentIndex<D>], old: D?, new: D?, key: UnsafeRawBufferPointer) throws {
        for index in indexes {
            let oldValue = old.map(index.extract)
            let newValue = new.map(index.extract)
            if let oldValue, let newValue, IndexKeyEncoding.encode(oldValue) == IndexKeyEncoding.encode(newValue) { continue }
            guard let ks = try indexKeyspace(collection: D.collection, index: index.name, unique: index.unique, create: true) else { continue }
            if let oldValue { try removeEntry(index, value: oldValue, key: key, keyspace: ks) }
            if let newValue { try addEntry(index, value: newValue, key: key, keyspace: ks) }
        }
    }

    /// Keeps the sync-status index in step: `old` and `new` are the statuses before and after
    /// (nil: absent).
    func updateSyncIndex(collection: String, key: UnsafeRawBufferPointer, old: SyncStatus?, new: SyncStatus?) throws {
        if old == new { return }
        guard let ks = try syncKeyspace(create: true) else { return }
        if let old {
            let k = [old.rawValue] + Array(collection.utf8)
            _ = try k.withUnsafeBytes { try context.txn.delete(forKey: $0, value: key, in: ks) }
        }
        if let new {
            let k = [new.rawValue] + Array(collection.utf8)
            try k.withUnsafeBytes { try context.txn.put(key, forKey: $0, in: ks) }
        }
    }

    /// Removes every index and sync entry of a collection (before it is cleared).
    func clearIndexes(collection: String) throws {
        let prefix = "index/" + alias + "/" + collection + "/"
        for (metaKey, kind) in try context.metaEntries(prefix: Array(prefix.utf8)) {
            let name = String(decoding: metaKey.dropFirst(prefix.utf8.count), as: UTF8.self)
            let unique = String(decoding: kind, as: UTF8.self) == "unique"
            if let ks = try indexKeyspace(collection: collection, index: name, unique: unique, create: false) {
                try context.txn.clear(ks)
            }
        }
        if let ks = try syncKeyspace(create: false) {
            for status in SyncStatus.allCases {
                let k = [status.rawValue] + Array(collection.utf8)
                _ = try k.withUnsafeBytes { try context.txn.delete(forKey: $0, in: ks) }
            }
        }
    }
}

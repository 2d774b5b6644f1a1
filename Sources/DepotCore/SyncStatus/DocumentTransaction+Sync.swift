import Foundation

extension DocumentTransaction {
    /// The sync status of a stored document, or nil when it is not stored.
    public func syncStatus<D: Document>(of type: D.Type, id: D.ID) throws -> SyncStatus? {
        guard let facts = try facts(D.self, create: false) else { return nil }
        return try id.withKeyBytes { key in
            if key.isEmpty || key.count > context.maxKeySize { return nil }
            return try context.txn.withValue(forKey: key, in: facts.target.keyspace) { Record.peekHeader($0).map { SyncStatus(recordFlags: $0.flags) } } ?? nil
        }
    }

    /// Sets the sync status of documents of `D`; returns the IDs that are not stored.
    /// The documents' content and revision stay as they are.
    @discardableResult
    public func setSyncStatus<D: Document>(_ status: SyncStatus, for type: D.Type, ids: [D.ID]) throws -> [D.ID] {
        try context.requireWritable("set the sync status of \(D.collection) documents")
        guard let facts = try facts(D.self, create: false) else { return ids }
        var missing: [D.ID] = []
        for id in ids {
            let found = try id.withKeyBytes { key in
                try context.setRecordStatus(facts.target, key: key, status: status, displayID: { displayID(id.documentValue) })
            }
            if !found { missing.append(id) }
        }
        return missing
    }

    /// Sets the sync status of one document; returns false when it is not stored.
    @discardableResult
    public func setSyncStatus<D: Document>(_ status: SyncStatus, for document: D) throws -> Bool {
        try setSyncStatus(status, for: D.self, ids: [document.id]).isEmpty
    }

    /// The documents of `D` with `status`, read through the sync-status index (types that
    /// track their status: ``Syncable`` ones, or with ``Document/tracksSyncStatus`` true).
    /// Other types are scanned.
    public func retrieve<D: Document>(_ type: D.Type, withSyncStatus status: SyncStatus) throws -> [D] {
        guard let facts = try facts(D.self, create: false) else { return [] }
        let db = facts.target.keyspace
        var result: [D] = []
        if try context.schema(alias: alias, collection: D.collection).tracksSyncStatus {
            guard let ks = try syncKeyspace(create: false) else { return [] }
            let key = [status.rawValue] + Array(D.collection.utf8)
            try context.txn.scan(ks, lower: nil, upper: nil, prefix: key, reverse: false) { indexKey, documentKey in
                guard indexKey.count == key.count else { return true } // another collection sharing the prefix
                if let d = try context.txn.withValue(forKey: documentKey, in: db, {
                    try decodeDocument(D.self, $0, facts: facts, key: documentKey)
                }) { result.append(d) }
                return true
            }
        } else {
            try context.txn.scan(db, prefix: nil, reverse: false) { key, value in
                if SyncStatus(recordFlags: value.count > 1 ? value[1] : 0) == status {
                    result.append(try decodeDocument(D.self, value, facts: facts, key: key))
                }
                return true
            }
        }
        return result
    }

    /// Every tracked document of this alias with `status`, of any type: `(collection, id)`
    /// pairs from the sync-status index.
    public func documents(withSyncStatus status: SyncStatus) throws -> [(collection: String, id: DocumentValue)] {
        guard let ks = try syncKeyspace(create: false) else { return [] }
        var result: [(collection: String, id: DocumentValue)] = []
        try context.txn.scan(ks, lower: nil, upper: nil, prefix: [status.rawValue], reverse: false) { indexKey, documentKey in
            let collection = String(decoding: indexKey.dropFirst(), as: UTF8.self)
            let name = StoreLayout.documentDatabase(alias: alias, collection: collection)
            let kind = try context.storedKind(alias: alias, collection: collection, name: name) ?? .string
            result.append((collection, kind.value(ofKey: documentKey)))
            return true
        }
        return result
    }

    // MARK: Unique IDs

    /// A new unique 64-bit ID, allocated in this write transaction from the store's persistent
    /// counter: strictly increasing across threads, processes and restarts, never reused. An ID
    /// returned in a transaction that then rolls back is not returned again in this process;
    /// another process may return it (the stored counter moved back): for an ID that leaves the
    /// process before the commit, use `store.uniqueIDs.next()`.
    ///
    /// - Throws: `DepotError` `.readOnlyTransaction` in a read transaction.
    public func nextUniqueID() throws -> UInt64 {
        try context.requireWritable("allocate a unique ID")
        return try context.allocateUniqueIDs(count: 1)
    }
}

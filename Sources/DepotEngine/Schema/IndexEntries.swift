/// The secondary-index and sync-status entries of records: what the write pipeline keeps in step
/// with every record it writes or deletes, and what index builds put. Index keys are read from
/// the stored fields (``IndexKeyEncoding``), so whichever path wrote a record, an index query
/// returns what a scan returns.
///
/// A non-unique index is a multi-value keyspace (index key → record keys); a unique one maps
/// its key to the one record key holding it. The sync-status index (one per alias, multi-value)
/// maps status byte + collection name to the record keys with that status.
package enum IndexEntries {
    /// The index keys of a stored record (envelope and payload), as the write that replaces or
    /// deletes it must remove them; nil when the schema has no index or the record cannot be
    /// opened (a damaged record's entries are left to `verify`).
    package static func storedFields(_ schema: CollectionSchema, record: UnsafeRawBufferPointer) -> [[UInt8]]? {
        guard schema.needsOldFields, let (_, payload) = try? Record.open(record) else { return nil }
        return try? fields(schema.indexes, payload: payload)
    }

    /// The index keys of a stored payload, one per index in `indexes` (in order), read straight
    /// from the bytes: only the path to each indexed field is walked.
    package static func fields(_ indexes: [IndexDefinition], payload: UnsafeRawBufferPointer) throws -> [[UInt8]] {
        try indexes.map { try IndexKeyEncoding.encode(stored: payload, path: $0.path) }
    }

    /// Puts the entry of each unique index for the record under `key` before the record is
    /// written, each with one conditional put: an entry already there must be this record's.
    /// When another record holds a value, the entries put here are taken back and nothing of
    /// the write remains (``DepotError/Code/uniqueIndexViolation``).
    /// `indexes` are kept in `keyspaces`: the target's schema for a write, the indexes being
    /// built for an index build.
    package static func claimUnique(_ indexes: [IndexDefinition], in keyspaces: [Keyspace], of target: RecordTarget,
                                    key: UnsafeRawBufferPointer, new: [[UInt8]], displayID: () -> String,
                                    txn: any StorageTransaction) throws {
        // The indexes whose entry this call put (a set of positions; no allocation for the first 64).
        var claimedMask: UInt64 = 0
        var claimedBeyond: [Int] = []
        for i in indexes.indices where indexes[i].unique {
            let value = new[i]
            if value.count == 1 && value[0] == IndexKeyEncoding.nullKey[0] { continue }
            var clash: String?
            let inserted = try value.withUnsafeBytes { indexKey in
                try txn.putIfAbsent(key, forKey: indexKey, in: keyspaces[i]) { existing in
                    if !existing.elementsEqual(key) { clash = displayIDOfKey(existing, kind: target.kind) }
                }
            }
            if inserted {
                if i < 64 { claimedMask |= 1 << UInt64(i) } else { claimedBeyond.append(i) }
            }
            if let clash {
                for j in indexes.indices where (j < 64 && claimedMask & (1 << UInt64(j)) != 0) || claimedBeyond.contains(j) {
                    try new[j].withUnsafeBytes { try txn.deleteIfPresent(forKey: $0, in: keyspaces[j]) }
                }
                let index = indexes[i]
                throw DepotError.uniqueIndexViolation(alias: target.alias, collection: target.collection, index: index.name,
                                                      id: displayID(), conflictingID: clash)
            }
        }
    }

    /// Moves the record under `key` from the index keys `old` to `new` (nil: absent) in every
    /// index of `target`'s schema. A unique index's new entry is already there
    /// (``claimUnique(_:in:of:key:new:displayID:txn:)``); its old one is removed only while it
    /// still points at this record.
    package static func update(_ target: RecordTarget, key: UnsafeRawBufferPointer, old: [[UInt8]]?, new: [[UInt8]]?,
                               txn: any StorageTransaction) throws {
        for (i, index) in target.schema.indexes.enumerated() {
            let oldValue = old?[i], newValue = new?[i]
            if oldValue == newValue { continue }
            let ks = target.indexKeyspaces[i]
            if let oldValue, !(index.unique && oldValue == IndexKeyEncoding.nullKey) {
                try oldValue.withUnsafeBytes { indexKey in
                    if index.unique {
                        // Only remove the entry if it still points at this document.
                        let ours = try txn.withValue(forKey: indexKey, in: ks) { $0.elementsEqual(key) } ?? false
                        if ours { try txn.deleteIfPresent(forKey: indexKey, in: ks) }
                    } else {
                        try txn.deleteIfPresent(forKey: indexKey, value: key, in: ks)
                    }
                }
            }
            if let newValue, !index.unique {
                try newValue.withUnsafeBytes { try txn.put(key, forKey: $0, in: ks) }
            }
        }
    }

    /// The sync-status index's key of the records of `collection` with `status`.
    package static func syncKey(_ status: SyncStatus, collection: String) -> [UInt8] {
        [status.rawValue] + Array(collection.utf8)
    }

    /// Keeps the sync-status index `ks` in step for the record under `key`: `old` and `new` are
    /// its statuses before and after (nil: absent).
    package static func updateSync(_ ks: Keyspace, collection: String, key: UnsafeRawBufferPointer, old: SyncStatus?, new: SyncStatus?,
                                   txn: any StorageTransaction) throws {
        if old == new { return }
        if let old {
            try syncKey(old, collection: collection).withUnsafeBytes { try txn.deleteIfPresent(forKey: $0, value: key, in: ks) }
        }
        if let new {
            try syncKey(new, collection: collection).withUnsafeBytes { try txn.put(key, forKey: $0, in: ks) }
        }
    }

    /// Removes every sync-status entry of `collection` from the sync-status index `ks`.
    package static func clearSync(_ ks: Keyspace, collection: String, txn: any StorageTransaction) throws {
        for status in SyncStatus.allCases {
            try syncKey(status, collection: collection).withUnsafeBytes { try txn.deleteIfPresent(forKey: $0, in: ks) }
        }
    }
}

/// The record pipeline: the one path by which every writer — typed parks, unidentified values,
/// dynamic objects, seeding, the key/value kit, sync-status changes and deletes — changes a
/// record. For each record it checks the key against the storage's real limit, reads the old
/// record once, checks the expected revision, seals the new record (envelope, revision, flags,
/// checksum), writes it, keeps every secondary index and the sync-status index of the
/// collection's stored schema in step (from the stored fields, so whichever path wrote a
/// document, an index query returns what a scan returns), and records the change.
extension TransactionContext {
    /// Loads the schema of `target` and opens its index keyspaces for writing.
    func prepareForWriting(_ target: RecordTarget) throws {
        if target.schemaLoaded { return }
        try requireWritable("write to collection '\(target.collection)'")
        var schema = try schema(alias: target.alias, collection: target.collection)
        // Indexes of an earlier key format are rebuilt by the first write, whoever writes: a
        // writer must never add keys of one format to an index holding the other's.
        if !schema.legacyIndexes.isEmpty { schema = try upgradeLegacyIndexes(target, schema: schema) }
        target.schema = schema
        target.indexKeyspaces = try schema.indexes.map { index in
            guard let ks = try txn.keyspace(named: StoreLayout.indexDatabase(alias: target.alias, collection: target.collection, index: index.name),
                                            create: true, multiValue: !index.unique) else {
                throw DepotError.storageInconsistent("the index keyspace '\(index.name)' of \(target.collection) could not be opened")
            }
            return ks
        }
        target.syncKeyspace = schema.tracksSyncStatus
            ? try txn.keyspace(named: StoreLayout.syncDatabase(alias: target.alias), create: true, multiValue: true) : nil
        target.schemaLoaded = true
    }

    /// Checks a key against the storage's limit (``RecordKeyRule``); errors name the collection.
    @inline(__always)
    func checkKey(_ key: UnsafeRawBufferPointer, target: RecordTarget) throws {
        let limit = maxKeySize
        if _fastPath(key.count > 0 && key.count <= limit) { return }
        throw RecordKeyRule.violation(count: key.count, limit: limit, collection: target.collection, isKeyValue: target.isKeyValue)
    }

    /// Writes the record under `key`: `encode` appends the payload. Returns the new revision.
    @discardableResult
    package func writeRecord(_ target: RecordTarget, key: UnsafeRawBufferPointer, flags: UInt8, expected: UInt64? = nil,
                             displayID: () -> String, encode: (inout [UInt8]) throws -> Void) throws -> UInt64 {
        writeBegins()
        try checkSealingOnce()
        try prepareForWriting(target)
        try checkKey(key, target: target)
        try captureUndo(target, key: key)
        let schema = target.schema
        let txn = txn
        // With no revision to match, the record is put as if new: an insert then costs one
        // B-tree descent, and the same put attempt reads the record it finds (and its indexed
        // fields). A conditional park checks its revision first, before encoding parks any
        // reference.
        let optimistic = expected == nil
        // The old record, read once: its revision, status and indexed fields.
        var old: Record.Header?
        var oldFields: [[UInt8]]?
        if !optimistic {
            old = try txn.withValue(forKey: key, in: target.keyspace) { bytes -> Record.Header in
                let header = Record.peekHeader(bytes) ?? Record.Header(flags: 0, revision: 0)
                oldFields = IndexEntries.storedFields(schema, record: bytes)
                return header
            }
            if let expected, expected != (old?.revision ?? 0) {
                throw DepotError.revisionConflict(alias: target.alias, collection: target.collection, id: displayID(), expected: expected, actual: old?.revision)
            }
        }
        var buffer = takeBuffer()
        defer { giveBack(buffer) }
        Record.begin(&buffer, flags: flags, revision: 0)
        do {
            try encode(&buffer)
        } catch let error as EncodingError {
            throw DepotError.encodingFailed(collection: target.collection, id: displayID(), fieldPath: error.fieldPath, detail: encodingDetail(error))
        }
        var revision = (old?.revision ?? 0) &+ 1
        Record.setHeader(&buffer, flags: flags, revision: revision)
        Record.seal(&buffer)
        var newFields: [[UInt8]] = []
        if !schema.indexes.isEmpty {
            newFields = try buffer.withUnsafeBytes { all in
                try IndexEntries.fields(schema.indexes, payload: UnsafeRawBufferPointer(rebasing: all[Record.headerSize...]))
            }
            try IndexEntries.claimUnique(schema.indexes, in: target.indexKeyspaces, of: target, key: key, new: newFields, displayID: displayID, txn: txn)
        }
        if optimistic {
            var found: Record.Header?
            let inserted = try buffer.withUnsafeBytes { bytes in
                try txn.putExpectingAbsent(bytes, forKey: key, in: target.keyspace) { stored in
                    found = Record.peekHeader(stored) ?? Record.Header(flags: 0, revision: 0)
                    oldFields = IndexEntries.storedFields(schema, record: stored)
                }
            }
            if !inserted {
                // A driver that reports a stored record must show it: nothing was written otherwise.
                guard let found else {
                    throw DepotError.storageInconsistent("the storage reported '\(displayID())' in \(target.collection) as present without its record; nothing was written")
                }
                // An update: the next revision, sealed again, put over the stored record.
                old = found
                revision = found.revision &+ 1
                Record.setHeader(&buffer, flags: flags, revision: revision)
                Record.seal(&buffer)
                try buffer.withUnsafeBytes { try txn.put($0, forKey: key, in: target.keyspace) }
            }
        } else {
            try buffer.withUnsafeBytes { try txn.put($0, forKey: key, in: target.keyspace) }
        }
        if !schema.indexes.isEmpty { try IndexEntries.update(target, key: key, old: oldFields, new: newFields, txn: txn) }
        if let sync = target.syncKeyspace {
            try IndexEntries.updateSync(sync, collection: target.collection, key: key,
                                        old: old.map { SyncStatus(recordFlags: $0.flags) }, new: SyncStatus(recordFlags: flags), txn: txn)
        }
        if let slot = target.slot { recorder?.record(slot: slot, key: key, existedBefore: old != nil, existsNow: true) }
        if target.isKeyValue { noteKeyValueWrite(target, key: key) }
        if !_parkedReferences.isEmpty {
            _parkedReferences[.init(target: ObjectIdentifier(target), key: PackedKey(key))] = nil
        }
        return revision
    }

    /// Deletes the record under `key`, with the delete rules of its collection unless
    /// `applyingRules` is false (undo and redo restore every record of a step themselves).
    /// Returns whether it was stored. With rules, all or nothing where the driver has
    /// savepoints: a rule that fails (deny) undoes what the others did.
    @discardableResult
    package func deleteRecord(_ target: RecordTarget, key: UnsafeRawBufferPointer, applyingRules: Bool = true) throws -> Bool {
        writeBegins()
        try checkSealingOnce()
        try prepareForWriting(target)
        if key.isEmpty || key.count > maxKeySize { return false }
        if applyingRules, !deleteRules(of: target).isEmpty {
            return try allOrNothing {
                // A record whose delete is under way further up (a cascade came back to it) is left to it.
                guard try applyDeleteRules(target, key: key) else { return false }
                return try removeRecord(target, key: key)
            }
        }
        return try removeRecord(target, key: key)
    }

    /// Deletes the record under `key` with its index and sync entries, no rules applied.
    private func removeRecord(_ target: RecordTarget, key: UnsafeRawBufferPointer) throws -> Bool {
        try captureUndo(target, key: key)
        let schema = target.schema
        var oldFields: [[UInt8]]?
        guard let old = try txn.withValue(forKey: key, in: target.keyspace, { bytes -> Record.Header in
            oldFields = IndexEntries.storedFields(schema, record: bytes)
            return Record.peekHeader(bytes) ?? Record.Header(flags: 0, revision: 0)
        }) else { return false }
        guard try txn.delete(forKey: key, in: target.keyspace) else { return false }
        if !schema.indexes.isEmpty { try IndexEntries.update(target, key: key, old: oldFields, new: nil, txn: txn) }
        if let sync = target.syncKeyspace {
            try IndexEntries.updateSync(sync, collection: target.collection, key: key, old: SyncStatus(recordFlags: old.flags), new: nil, txn: txn)
        }
        if let slot = target.slot { recorder?.record(slot: slot, key: key, existedBefore: true, existsNow: false) }
        if target.isKeyValue { noteKeyValueWrite(target, key: key) }
        if !_parkedReferences.isEmpty {
            _parkedReferences[.init(target: ObjectIdentifier(target), key: PackedKey(key))] = nil
        }
        return true
    }

    /// Sets the sync status of the record under `key` (content and revision unchanged).
    /// Returns false when it is not stored; a damaged record is never re-sealed.
    package func setRecordStatus(_ target: RecordTarget, key: UnsafeRawBufferPointer, status: SyncStatus, displayID: () -> String) throws -> Bool {
        writeBegins()
        try checkSealingOnce()
        try prepareForWriting(target)
        if key.isEmpty || key.count > maxKeySize { return false }
        guard var record = try txn.withValue(forKey: key, in: target.keyspace, { [UInt8]($0) }) else { return false }
        do {
            _ = try record.withUnsafeBytes { try Record.open($0) }
        } catch {
            throw DepotError.checksumMismatch(alias: target.alias, collection: target.collection, id: displayID())
        }
        let old = SyncStatus(recordFlags: record[1])
        if old == status { return true }
        try captureUndo(target, key: key)
        record[1] = (record[1] & ~0x0E) | status.recordFlags
        Record.seal(&record)
        try record.withUnsafeBytes { try txn.put($0, forKey: key, in: target.keyspace) }
        if let sync = target.syncKeyspace { try IndexEntries.updateSync(sync, collection: target.collection, key: key, old: old, new: status, txn: txn) }
        if let slot = target.slot { recorder?.record(slot: slot, key: key, existedBefore: true, existsNow: true) }
        if target.isKeyValue { noteKeyValueWrite(target, key: key) }
        return true
    }

    /// Deletes every record of `target` with its index and sync entries. Returns how many.
    /// With delete rules, all or nothing (see ``deleteRecord(_:key:applyingRules:)``).
    package func clearRecords(_ target: RecordTarget, applyingDeleteRules: Bool = true) throws -> Int {
        writeBegins()
        try checkSealingOnce()
        try prepareForWriting(target)
        if !applyingDeleteRules || deleteRules(of: target).isEmpty { return try removeAllRecords(target) }
        return try allOrNothing {
            // Counted first: a cascade within the collection deletes some of them one by one.
            let count = try txn.count(target.keyspace)
            var keys: [[UInt8]] = []
            try txn.scan(target.keyspace, prefix: nil, reverse: false) { key, _ in keys.append([UInt8](key)); return true }
            for key in keys { _ = try key.withUnsafeBytes { try applyDeleteRules(target, key: $0) } }
            _ = try removeAllRecords(target)
            return count
        }
    }

    /// Deletes every record of `target` with its index and sync entries, no rules applied.
    private func removeAllRecords(_ target: RecordTarget) throws -> Int {
        let txn = txn
        let count = try txn.count(target.keyspace)
        if undoLog != nil {
            var keys: [[UInt8]] = []
            try txn.scan(target.keyspace, prefix: nil, reverse: false) { key, _ in keys.append([UInt8](key)); return true }
            for key in keys { try key.withUnsafeBytes { try captureUndo(target, key: $0) } }
        }
        if let slot = target.slot, let recorder {
            try txn.scan(target.keyspace, prefix: nil, reverse: false) { key, _ in
                recorder.record(slot: slot, key: key, existedBefore: true, existsNow: false)
                return true
            }
        }
        if target.isKeyValue {
            // Keys only: read past any record transform (no record is opened for them).
            try txn.untransformed.scan(target.keyspace, prefix: nil, reverse: false) { key, _ in
                noteKeyValueWrite(target, key: key)
                return true
            }
        }
        for ks in target.indexKeyspaces { try txn.clear(ks) }
        if let sync = target.syncKeyspace { try IndexEntries.clearSync(sync, collection: target.collection, txn: txn) }
        try txn.clear(target.keyspace)
        parkedReferences.removeAll()
        return count
    }

    /// Notes a key/value record written or deleted (see ``keyValueWrites``).
    func noteKeyValueWrite(_ target: RecordTarget, key: UnsafeRawBufferPointer) {
        _keyValueWrites[target.alias, default: [:]].updateValue(keyValueWriter, forKey: [UInt8](key))
    }

    /// Captures the before-image of `key` when this transaction records undo history.
    @inline(__always)
    func captureUndo(_ target: RecordTarget, key: UnsafeRawBufferPointer) throws {
        if let log = _undoLog { try log.captureBefore(target, key: key, txn: txn) }
    }
}

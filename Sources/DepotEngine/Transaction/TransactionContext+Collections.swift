extension TransactionContext {
    // MARK: Collections

    /// The collection `collection` of `alias` as the record pipeline writes it, checking (and
    /// on first write recording) the kind of its IDs. Returns nil when it does not exist and
    /// `create` is false; `create` in a read-only transaction is a typed error.
    package func target(alias: String, collection: String, kind: IDKind, create: Bool) throws -> RecordTarget? {
        try confirmPendingVersion()
        let key = CollectionName(alias: alias, collection: collection)
        if let cached = targets[key] {
            if cached.kind != kind {
                throw DepotError.idKindMismatch(alias: alias, collection: collection, stored: cached.kind, requested: kind)
            }
            return cached
        }
        if let written = try cachedWriteTarget(key, kind: kind) { return written }
        if create { try requireWritable("write to collection '\(collection)'") }
        let name = StoreLayout.documentDatabase(alias: alias, collection: collection)
        try StoreLayout.validateCollection(collection)
        let stored = try storedKind(alias: alias, collection: collection, name: name)
        if let stored, stored != kind {
            throw DepotError.idKindMismatch(alias: alias, collection: collection, stored: stored, requested: kind)
        }
        if stored == nil && create { try StoreLayout.validateNewNames(alias: alias, collection: collection) }
        guard let db = try txn.keyspace(named: name, create: create) else { return nil }
        if stored == nil && create {
            try txn.put(Array(kind.rawValue.utf8), forKey: Array(StoreLayout.descriptorKey(alias: alias, collection: collection).utf8), in: try writableMeta())
            pendingDescriptors.append((name, kind, txn.nestingDepth))
        }
        return remember(key, keyspace: db, kind: stored ?? kind)
    }

    /// The collection of a document type as an earlier read transaction of the same schema
    /// version resolved it (see ``EngineCore/ReadTarget``), remembered in this transaction; nil
    /// when none did. Read transactions only.
    package func cachedReadTarget(type: ObjectIdentifier, alias: String, kind: IDKind, typeVersion: Int,
                                  typeName: () -> String) throws -> RecordTarget? {
        let version = try schemaVersion()
        guard let cached = engine.readTarget(.init(type: type, alias: alias), version: version), cached.kind == kind,
              txn.isCurrent(cached.keyspace) else { return nil }
        if cached.typeVersion > typeVersion {
            throw DepotError.newerVersion(collection: cached.collection, stored: cached.typeVersion, declared: typeVersion, typeName: typeName())
        }
        let key = CollectionName(alias: alias, collection: cached.collection)
        if let known = targets[key] { return known }
        return remember(key, keyspace: cached.keyspace, kind: cached.kind)
    }

    /// Offers a collection resolved in this read transaction to later ones (same schema version).
    package func rememberReadTarget(_ target: RecordTarget, type: ObjectIdentifier, typeVersion: Int) throws {
        guard txn.isReadOnly else { return }
        engine.rememberReadTarget(.init(collection: target.collection, keyspace: target.keyspace, kind: target.kind, typeVersion: typeVersion),
                                  for: .init(type: type, alias: target.alias), version: try schemaVersion())
    }

    /// A collection whatever its ID kind (for export, schemaless reads and administration).
    package func existingTarget(alias: String, collection: String) throws -> RecordTarget? {
        try confirmPendingVersion()
        let key = CollectionName(alias: alias, collection: collection)
        if let cached = targets[key] { return cached }
        // Before its meta keys are read: a name too long for them is a name error, not LMDB's.
        try StoreLayout.validateCollection(collection)
        let name = StoreLayout.documentDatabase(alias: alias, collection: collection)
        guard let kind = try storedKind(alias: alias, collection: collection, name: name) else { return nil }
        guard let db = try txn.keyspace(named: name, create: false) else { return nil }
        return remember(key, keyspace: db, kind: kind)
    }

    /// The key/value kit's records of `alias` (reported as collection `$kv`, string keys).
    package func keyValueTarget(alias: String, create: Bool) throws -> RecordTarget? {
        try confirmPendingVersion()
        if let cached = kvTargets[alias] { return cached }
        if create { try requireWritable("write key/value entries") }
        let name = StoreLayout.keyValueDatabase(alias: alias)
        // A new alias spelled in NFC (see `StoreLayout.validateNewNames`); an existing one as stored.
        if create, try txn.keyspace(named: name, create: false) == nil { try StoreLayout.validateNewNames(alias: alias, collection: nil) }
        guard let ks = try txn.keyspace(named: name, create: create) else { return nil }
        let target = RecordTarget(alias: alias, collection: StoreLayout.keyValueCollection, keyspace: ks, kind: .string,
                                  depth: txn.nestingDepth, slot: recorder?.slot(alias: alias, collection: StoreLayout.keyValueCollection, kind: .string),
                                  isKeyValue: true)
        target.schemaLoaded = true // no indexes, no sync index
        kvTargets[alias] = target
        return target
    }

    /// A target for `key` made now, kept for this transaction.
    func remember(_ key: CollectionName, keyspace: Keyspace, kind: IDKind) -> RecordTarget {
        let target = RecordTarget(alias: key.alias, collection: key.collection, keyspace: keyspace, kind: kind, depth: txn.nestingDepth,
                                  slot: recorder?.slot(alias: key.alias, collection: key.collection, kind: kind))
        targets[key] = target
        return target
    }

    /// The ID kind of a collection (`name` is its database), from this transaction, the
    /// store's descriptors or its descriptor record; nil when it has none.
    package func storedKind(alias: String, collection: String, name: String) throws -> IDKind? {
        if let pending = pendingDescriptors.last(where: { $0.name == name }) { return pending.kind }
        if !droppedDatabases.contains(name), let known = engine.knownKind(of: name) { return known }
        guard let meta = try metaKeyspace() else { return nil }
        let raw = try txn.get(Array(StoreLayout.descriptorKey(alias: alias, collection: collection).utf8), in: meta)
        guard let raw else { return nil }
        guard let kind = IDKind(rawValue: String(decoding: raw, as: UTF8.self)) else {
            throw DepotError.corruptRecord(alias: alias, collection: collection, id: "(descriptor)", detail: "unknown ID kind")
        }
        return kind
    }

    /// Drops cached handles of a collection whose database was dropped in this transaction.
    func forgetCollection(alias: String, collection: String) {
        targets[CollectionName(alias: alias, collection: collection)] = nil
        typeFacts.removeAll()
        let name = StoreLayout.documentDatabase(alias: alias, collection: collection)
        pendingDescriptors.removeAll { $0.name == name }
        droppedDatabases.insert(name)
    }
}

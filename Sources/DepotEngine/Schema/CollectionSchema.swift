import Foundation

/// One secondary index as the store records it: a name, the field path it reads from stored
/// documents, and whether values must be unique.
package struct IndexDefinition: Hashable, Sendable {
    package var name: String
    package var field: String {
        didSet { path = IndexFieldPath(field) }
    }
    package var unique: Bool
    /// `field`, parsed once: what the record pipeline walks to in each stored document.
    package private(set) var path: IndexFieldPath

    package init(name: String, field: String, unique: Bool) {
        self.name = name
        self.field = field
        self.unique = unique
        path = IndexFieldPath(field)
    }

    package static func == (a: IndexDefinition, b: IndexDefinition) -> Bool {
        a.name == b.name && a.field == b.field && a.unique == b.unique
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(field)
        hasher.combine(unique)
    }

    /// The meta record's value: `v3`, NUL, `u` or `m`, NUL, the field path.
    package var metaValue: [UInt8] { Array("v3\u{0}\(unique ? "u" : "m")\u{0}\(field)".utf8) }

    /// Reads a meta record. Records of an older format come back with `legacy` true: queries do
    /// not use their entries, and the first write to the collection rebuilds them
    /// (`TransactionContext.upgradeLegacyIndexes`). Those written
    /// before field paths were stored (`unique` / `multi`) had entries kept only by typed
    /// parks; `v2` entries keyed integers and fractional numbers apart (a range over both
    /// missed one kind: `IndexKeyEncoding.appendNumber` is one order now).
    package static func parse(name: String, metaValue: [UInt8]) -> (IndexDefinition, legacy: Bool)? {
        let text = String(decoding: metaValue, as: UTF8.self)
        if text == "unique" || text == "multi" { return (IndexDefinition(name: name, field: name, unique: text == "unique"), true) }
        let parts = text.split(separator: "\u{0}", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "v3" || parts[0] == "v2", parts[1] == "u" || parts[1] == "m", !parts[2].isEmpty else { return nil }
        return (IndexDefinition(name: name, field: String(parts[2]), unique: parts[1] == "u"), parts[0] == "v2")
    }
}

/// What the record pipeline maintains for one collection of one alias, as stored in the meta
/// records: its secondary indexes and whether it keeps a sync-status index. Every writer reads
/// it, so an index stays right whichever path wrote the document.
@usableFromInline
package struct CollectionSchema: Equatable, Sendable {
    package var indexes: [IndexDefinition] = []
    /// Index records in the old format (to be rebuilt by the next reconciliation).
    package var legacyIndexes: Set<String> = []
    package var tracksSyncStatus = false
    /// The highest document-type version that wrote the collection (0: none declared).
    package var typeVersion = 0

    /// A schema with these parts (none by default).
    package init(indexes: [IndexDefinition] = [], legacyIndexes: Set<String> = [], tracksSyncStatus: Bool = false, typeVersion: Int = 0) {
        self.indexes = indexes
        self.legacyIndexes = legacyIndexes
        self.tracksSyncStatus = tracksSyncStatus
        self.typeVersion = typeVersion
    }

    package static let empty = CollectionSchema()

    /// Whether a write must look at the old record's fields.
    package var needsOldFields: Bool { !indexes.isEmpty }

    /// Loads the schema of `alias`/`collection` from the meta records of `txn`.
    package static func load(alias: String, collection: String, meta: Keyspace?, txn: any StorageTransaction) throws -> CollectionSchema {
        guard let meta else { return .empty }
        var schema = CollectionSchema()
        let prefix = Array(StoreLayout.indexMetaPrefix(alias: alias, collection: collection).utf8)
        for (key, value) in try txn.entries(meta, prefix: prefix) {
            let name = String(decoding: key.dropFirst(prefix.count), as: UTF8.self)
            guard let (definition, legacy) = IndexDefinition.parse(name: name, metaValue: value) else {
                throw DepotError.corruptRecord(alias: alias, collection: collection, id: "(index \(name))", detail: "unreadable index definition")
            }
            schema.indexes.append(definition)
            if legacy { schema.legacyIndexes.insert(name) }
        }
        let syncKey = Array(StoreLayout.syncTrackingKey(alias: alias, collection: collection).utf8)
        schema.tracksSyncStatus = try txn.withValue(forKey: syncKey, in: meta) { _ in true } ?? false
        let versionKey = Array(StoreLayout.typeVersionKey(alias: alias, collection: collection).utf8)
        schema.typeVersion = try txn.withValue(forKey: versionKey, in: meta) { bytes -> Int in
            guard let version = Int(exactly: try BigEndian<UInt64>.decode(bytes)) else {
                throw DepotError.corruptRecord(alias: alias, collection: collection, id: "(type version)", detail: "the stored type version is out of range")
            }
            return version
        } ?? 0
        return schema
    }

    /// The schema version counter of the store (bumped by every schema change, so that
    /// processes and cached schemas notice).
    package static func version(meta: Keyspace?, txn: any StorageTransaction) throws -> UInt64 {
        guard let meta else { return 0 }
        return try txn.withValue(forKey: StoreLayout.schemaVersionKey, in: meta) { try BigEndian<UInt64>.decode($0) } ?? 0
    }

    /// ``version(meta:txn:)`` at the start of a transaction, read with
    /// `StorageTransaction.stableValue(forKey:in:)`: a driver may take the value it saw last
    /// on trust and check it before the commit (a change by another process then fails the
    /// write, which runs again). A transaction that changes the schema reads the version itself
    /// (``bumpVersion(meta:txn:)``).
    package static func currentVersion(meta: Keyspace?, txn: any StorageTransaction) throws -> UInt64 {
        guard let meta, let value = try txn.stableValue(forKey: StoreLayout.schemaVersionKey, in: meta) else { return 0 }
        return try value.withUnsafeBytes { try BigEndian<UInt64>.decode($0) }
    }

    /// Bumps the store's schema version counter in `txn`; returns the new version.
    package static func bumpVersion(meta: Keyspace, txn: any StorageTransaction) throws -> UInt64 {
        let next = try version(meta: meta, txn: txn) &+ 1
        try BigEndian<UInt64>.withBytes(of: next) { v in
            try StoreLayout.schemaVersionKey.withUnsafeBytes { try txn.put(v, forKey: $0, in: meta) }
        }
        return next
    }
}

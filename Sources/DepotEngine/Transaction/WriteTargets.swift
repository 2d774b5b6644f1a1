import Foundation

/// Collections as committed write transactions resolved them for writing (keyspace, ID kind,
/// schema, index and sync keyspaces), reused by later write transactions of the same schema
/// version instead of validating the name, reading the descriptor and the schema and opening
/// each index keyspace by name again: a write transaction of one document (a service's
/// `store.write { park }` per request) pays for that once, not per transaction.
///
/// Valid for one schema version: every schema change (an index added or removed, a collection
/// or alias dropped) bumps the version, and an entry of another version is never used; a
/// keyspace handle that the storage no longer has (`StorageTransaction.isCurrent(_:)`) is not
/// used either. Entries come only from transactions that committed without changing a schema or
/// dropping a keyspace. Write paths only (the lock is never taken by a read).
///
/// `@unchecked Sendable`: `entries` and `version` are guarded by `lock`.
final class WriteTargets: @unchecked Sendable {
    /// A collection resolved for writing.
    struct Entry {
        let keyspace: Keyspace
        let kind: IDKind
        let schema: CollectionSchema
        let indexKeyspaces: [Keyspace]
        let syncKeyspace: Keyspace?
    }

    private let lock = NSLock()
    private var version: UInt64 = 0
    private var entries: [TransactionContext.CollectionName: Entry] = [:]
    /// At most this many collections are kept (then the cache starts over).
    static let capacity = 1_024

    /// The entry of `name` resolved at schema version `version`, if any.
    func entry(_ name: TransactionContext.CollectionName, version: UInt64) -> Entry? {
        lock.withLock { self.version == version ? entries[name] : nil }
    }

    /// Keeps what a committed write transaction of schema version `version` resolved.
    func remember(_ resolved: [(TransactionContext.CollectionName, Entry)], version: UInt64) {
        lock.withLock {
            if self.version != version {
                // Only move forward: a transaction of an older snapshot does not evict newer entries.
                if version < self.version { return }
                self.version = version
                entries.removeAll(keepingCapacity: true)
            }
            if entries.count + resolved.count > Self.capacity { entries.removeAll(keepingCapacity: true) }
            for (name, entry) in resolved { entries[name] = entry }
        }
    }
}

extension TransactionContext {
    /// The collection `name` as an earlier committed write transaction of this schema version
    /// resolved it, remembered in this transaction with its schema loaded; nil when none did, when
    /// this transaction changed a schema or dropped a keyspace, or when a handle is no longer current.
    func cachedWriteTarget(_ name: CollectionName, kind: IDKind) throws -> RecordTarget? {
        guard !txn.isReadOnly, !changedSchema, droppedDatabases.isEmpty else { return nil }
        let version = try schemaVersion()
        guard let entry = engine.writeTargets.entry(name, version: version), entry.kind == kind,
              txn.isCurrent(entry.keyspace), entry.indexKeyspaces.allSatisfy({ txn.isCurrent($0) }),
              entry.syncKeyspace.map({ txn.isCurrent($0) }) ?? true else { return nil }
        let target = remember(name, keyspace: entry.keyspace, kind: entry.kind)
        target.schema = entry.schema
        target.indexKeyspaces = entry.indexKeyspaces
        target.syncKeyspace = entry.syncKeyspace
        target.schemaLoaded = true
        target.fromWriteCache = true
        return target
    }

    /// After a commit: offers the collections this write transaction resolved for writing to
    /// later ones (see ``WriteTargets``).
    func publishWriteTargets() {
        guard !txn.isReadOnly, !changedSchema, droppedDatabases.isEmpty, let version = schemaVersionValue else { return }
        var resolved: [(CollectionName, WriteTargets.Entry)] = []
        for (name, target) in targets where target.schemaLoaded && !target.fromWriteCache && !target.isKeyValue {
            resolved.append((name, .init(keyspace: target.keyspace, kind: target.kind, schema: target.schema,
                                         indexKeyspaces: target.indexKeyspaces, syncKeyspace: target.syncKeyspace)))
        }
        if !resolved.isEmpty { engine.writeTargets.remember(resolved, version: version) }
    }
}

import DepotLMDB
import Foundation

extension Store {
    /// An isolated store with the same schema, kept in its own named databases in the same
    /// environment. Nothing is written until something is parked in it.
    public func alias(_ name: String) throws -> Store {
        try StoreLayout.validateAlias(name)
        return Store(core: core, alias: name, autosave: autosave)
    }

    /// The aliases that hold (or held) collections, sorted.
    public func aliases() throws -> [String] {
        try read { tx in
            let keys = try tx.context.metaEntries(prefix: Array(StoreLayout.descriptorRoot.utf8)).map { String(decoding: $0.key, as: UTF8.self) }
            return Set(keys.compactMap { $0.split(separator: "/", maxSplits: 2).dropFirst().first.map(String.init) }).sorted()
        }
    }

    /// Deletes every document of alias `name`; its collections stay known.
    @discardableResult
    public func clearAlias(_ name: String) throws -> Int {
        try StoreLayout.validateAlias(name)
        return try write { tx in try tx.alias(name).deleteEverything() }
    }

    /// Removes alias `name` entirely: its documents, collections, indexes and descriptors.
    public func dropAlias(_ name: String) throws {
        try StoreLayout.validateAlias(name)
        var dropped: [String] = []
        try write { tx in
            let view = try tx.alias(name)
            let context = tx.context
            let meta = try context.writableMeta()
            for collection in try view.collections() {
                if let target = try context.existingTarget(alias: name, collection: collection) {
                    _ = try view.clearRecords(target) // records the deletions
                    try context.txn.drop(target.keyspace)
                }
                context.forgetCollection(alias: name, collection: collection)
                _ = try context.txn.delete(forKey: Array(StoreLayout.descriptorKey(alias: name, collection: collection).utf8), in: meta)
                dropped.append(StoreLayout.documentDatabase(alias: name, collection: collection))
            }
            // Index keyspaces and definitions, sync tracking, the alias's sync-status keyspace.
            let indexPrefix = StoreLayout.indexMetaPrefix(alias: name)
            for (metaKey, value) in try context.metaEntries(prefix: Array(indexPrefix.utf8)) {
                let rest = String(decoding: metaKey.dropFirst(indexPrefix.utf8.count), as: UTF8.self)
                if let slash = rest.firstIndex(of: "/") {
                    let collection = String(rest[..<slash]), index = String(rest[rest.index(after: slash)...])
                    let unique = IndexDefinition.parse(name: index, metaValue: value)?.0.unique ?? false
                    let db = StoreLayout.indexDatabase(alias: name, collection: collection, index: index)
                    if let ks = try context.txn.keyspace(named: db, create: false, multiValue: !unique) { try context.txn.drop(ks) }
                }
                _ = try context.txn.delete(forKey: metaKey, in: meta)
            }
            for (metaKey, _) in try context.metaEntries(prefix: Array(StoreLayout.syncTrackingPrefix(alias: name).utf8)) {
                _ = try context.txn.delete(forKey: metaKey, in: meta)
            }
            if let ks = try context.txn.keyspace(named: StoreLayout.syncDatabase(alias: name), create: false, multiValue: true) {
                try context.txn.drop(ks)
            }
            try context.schemaDropped()
        }
        core.forget(databases: dropped)
    }

}

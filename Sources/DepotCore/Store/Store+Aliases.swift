import Foundation

extension Store {
    /// An isolated store with the same schema, kept in its own named databases in the same
    /// environment. Nothing is written until something is parked in it.
    public func alias(_ name: String) throws -> Store {
        try StoreLayout.validateAlias(name)
        return Store(core: core, alias: name, autosave: autosave)
    }

    /// Whether alias `name` holds (or held) key/value entries (``KeyValueStore``). An alias used
    /// by the key/value kit alone has no collections, so ``aliases()`` does not list it.
    public func holdsKeyValueEntries(alias name: String) throws -> Bool {
        try StoreLayout.validateAlias(name)
        return try read { tx in try tx.context.keyValueTarget(alias: name, create: false) != nil }
    }

    /// The aliases that hold (or held) collections, sorted (an alias used only by the key/value
    /// kit is not among them: ``holdsKeyValueEntries(alias:)``).
    public func aliases() throws -> [String] {
        try read { tx in
            let keys = try tx.context.metaEntries(prefix: Array(StoreLayout.descriptorRoot.utf8)).map { String(decoding: $0.key, as: UTF8.self) }
            return Set(keys.compactMap { $0.split(separator: "/", maxSplits: 2).dropFirst().first.map(String.init) }).sorted()
        }
    }

    /// Deletes every document and every key/value entry (``KeyValueStore``) of alias `name`, in
    /// one transaction; its collections stay known. Returns how many were deleted.
    @discardableResult
    public func clearAlias(_ name: String) throws -> Int {
        try StoreLayout.validateAlias(name)
        return try write { tx in
            let view = try tx.alias(name)
            return try view.deleteEverything() + view.deleteKeyValueEntries()
        }
    }

    /// Removes alias `name` entirely: its documents, key/value entries, collections, indexes and
    /// descriptors. Returns whether it held anything (false for an alias never used, such as a
    /// misspelt name: nothing is removed then).
    @discardableResult
    public func dropAlias(_ name: String) throws -> Bool {
        try StoreLayout.validateAlias(name)
        var dropped: [String] = []
        var held = false
        try write { tx in
            let view = try tx.alias(name)
            held = try view.deleteKeyValueEntries() > 0
            for collection in try view.collections() {
                try view.context.dropCollection(collection, alias: view.alias)
                dropped.append(StoreLayout.documentDatabase(alias: name, collection: collection))
            }
            held = held || !dropped.isEmpty
            try view.context.dropAliasRemains(alias: view.alias)
        }
        core.engine.forget(databases: dropped)
        return held
    }

}

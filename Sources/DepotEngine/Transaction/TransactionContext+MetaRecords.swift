/// The meta keyspace's records that are not a collection's schema (see ``StoreLayout`` for the
/// keys): read by prefix, and the few the features keep there, written only here.
extension TransactionContext {
    /// Meta records whose keys start with `prefix` (none when the meta keyspace is absent).
    package func metaEntries(prefix: [UInt8]) throws -> [(key: [UInt8], value: [UInt8])] {
        guard let meta = try metaKeyspace() else { return [] }
        return try txn.entries(meta, prefix: prefix)
    }

    /// The meta keyspace of a write transaction.
    func writableMeta() throws -> Keyspace {
        try requireWritable("change the store's meta data")
        guard let meta = try metaKeyspace() else { throw DepotError.storageInconsistent("the store's meta data is missing") }
        return meta
    }

    /// Records that migration `name` of `alias` ran, as the `order`-th (0-based) of the alias.
    package func recordMigration(_ name: String, alias: String, order: UInt64) throws {
        let key = Array((StoreLayout.migrationPrefix(alias: alias) + name).utf8)
        let value = withUnsafeBytes(of: order.bigEndian) { [UInt8]($0) }
        try txn.put(value, forKey: key, in: try writableMeta())
    }

    /// Reserves `count` unique IDs (see ``UniqueIDs``) in this write transaction and returns the first.
    package func allocateUniqueIDs(count: UInt64) throws -> UInt64 {
        try engine.uniqueIDs().allocate(count: count, in: txn)
    }
}

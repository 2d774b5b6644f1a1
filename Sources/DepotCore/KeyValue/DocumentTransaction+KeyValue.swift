import Foundation

extension DocumentTransaction {
    /// Deletes every key/value entry of this transaction's alias through the record pipeline
    /// (so change sets report each key as deleted, and undo sees them); once committed, the
    /// process's key/value caches of the alias (except `keep`) drop their saved values of those
    /// keys. Returns how many entries were deleted.
    func deleteKeyValueEntries(except keep: KeyValueStore? = nil) throws -> Int {
        try context.requireWritable("delete key/value entries")
        guard let target = try context.keyValueTarget(alias: alias, create: false) else { return 0 }
        var keys: [[UInt8]] = []
        // Keys only: read past any record transform (no record is opened for them).
        try context.txn.untransformed.scan(target.keyspace, prefix: nil, reverse: false) { key, _ in
            keys.append([UInt8](key))
            return true
        }
        // The commit drops the deleted keys from the caches (see `TransactionContext.of`).
        let previous = context.keyValueWriter
        context.keyValueWriter = keep.map(ObjectIdentifier.init)
        defer { context.keyValueWriter = previous }
        var deleted = 0
        for key in keys where try key.withUnsafeBytes({ try context.deleteRecord(target, key: $0) }) {
            deleted += 1
        }
        return deleted
    }
}

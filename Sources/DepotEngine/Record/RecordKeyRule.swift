/// The one rule for record keys (document IDs, key/value keys): 1 to `limit` bytes, the
/// storage's real limit (`StorageTransaction.maxKeySize`). The write pipeline checks every key
/// with it; the unit of work and the key/value store check theirs before anything is written.
package enum RecordKeyRule {
    /// Nil when a key of `count` bytes is fine; else the error, naming the collection (never the
    /// key's content). (The write pipeline checks its fast path inline and calls
    /// ``violation(count:limit:collection:isKeyValue:)`` only for a key that breaks it.)
    package static func problem(count: Int, limit: Int, collection: String, isKeyValue: Bool) -> DepotError? {
        if _fastPath(count > 0 && count <= limit) { return nil }
        return violation(count: count, limit: limit, collection: collection, isKeyValue: isKeyValue)
    }

    /// The error of a key of `count` bytes that breaks the rule.
    package static func violation(count: Int, limit: Int, collection: String, isKeyValue: Bool) -> DepotError {
        let what = isKeyValue ? "a key/value key" : "the ID of a document in collection '\(collection)'"
        return DepotError.invalidKey(detail: count == 0 ? "\(what) is empty" : "\(what) is \(count) bytes; the limit is \(limit)")
    }
}

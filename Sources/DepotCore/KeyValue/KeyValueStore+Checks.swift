import Foundation

/// What a key/value save checks before it writes anything.
extension KeyValueStore {
    /// `entries` without deletions of keys the storage cannot hold (nothing can be stored
    /// under one: dropped from the cache too), after checking the rest: every value encodes and
    /// every key obeys the record pipeline's key rule.
    func checked(_ entries: [KeyValueCacheKey: Entry]) throws -> [KeyValueCacheKey: Entry] {
        for (key, entry) in entries where !entry.deleted && entry.bytes == nil {
            throw DepotError.encodingFailed(collection: "$kv", id: key.text, fieldPath: "", detail: entry.encodingError.map { "\(type(of: $0))" } ?? "not encodable")
        }
        let limit = try store.core.maxKeySize()
        var entries = entries
        for key in entries.keys.sorted() {
            let count = key.text.utf8.count
            guard RecordKeyRule.problem(count: count, limit: limit, collection: "$kv", isKeyValue: true) != nil else { continue }
            if entries[key]?.deleted == true {
                entries[key] = nil
                lock.withLock { if cache[key]?.deleted == true { put(key, nil) } }
                continue
            }
            let what = count == 0 ? "an empty key" : "a key of \(count) bytes (the limit is \(limit))"
            throw DepotError.invalidKey(detail: "a value was set under \(what); nothing was saved: set that key to nil or drop it with clearCache(forKey:), and the other values save")
        }
        return entries
    }
}

import Foundation

extension KeyValueStore {
    /// The keys that begin with `prefix` (all keys when it is empty), in byte order: the saved
    /// keys, with this cache's unsaved sets added and its unsaved removals left out.
    ///
    /// - Parameters:
    ///   - prefix: only keys that begin with it ("": every key).
    ///   - limit: at most this many keys (nil: all).
    /// - Throws: the store's read errors.
    public func keys(withPrefix prefix: String = "", limit: Int? = nil) throws -> [String] {
        let max = limit ?? .max
        guard max > 0 else { return [] }
        // Arrays, not sets of String: the unsaved keys are distinct by bytes already.
        let (added, removed) = lock.withLock { () -> ([String], [String]) in
            var added: [String] = [], removed: [String] = []
            for key in dirtyKeys where key.text.utf8.starts(with: prefix.utf8) {
                if cache[key]?.deleted == true { removed.append(key.text) } else { added.append(key.text) }
            }
            return (added, removed)
        }
        var saved: [String] = []
        try store.read { tx in
            guard let target = try tx.context.keyValueTarget(alias: store.alias, create: false) else { return }
            // Enough saved keys to fill `limit` after the unsaved removals are left out.
            let wanted = max > Int.max - removed.count ? .max : max + removed.count
            // Keys only: read past any record transform (no record is opened for them).
            try tx.context.txn.untransformed.scan(target.keyspace, prefix: prefix.isEmpty ? nil : Array(prefix.utf8), reverse: false) { key, _ in
                saved.append(String(decoding: key, as: UTF8.self))
                return saved.count < wanted
            }
        }
        // By bytes, as stored: a Set<String> would merge keys that are canonically equivalent
        // ("é" and "e\u{301}") but stored apart. Saved keys are distinct already; only the
        // cache's changes are compared with them.
        var keys = saved
        if !removed.isEmpty {
            let removedBytes = Set(removed.map { Array($0.utf8) })
            keys.removeAll { removedBytes.contains(Array($0.utf8)) }
        }
        if !added.isEmpty {
            let savedBytes = Set(keys.map { Array($0.utf8) })
            keys += added.filter { !savedBytes.contains(Array($0.utf8)) }
            keys.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }
        return Array(keys.prefix(max))
    }
}

import Foundation

/// What the cache holds, dropping values from memory, removing them from disk, and eviction
/// notices (GBStorage's `isCached`, `removeAllFromMemory`, `removeAllPermanently`).
extension KeyValueStore {
    /// Whether memory holds a value for `key` (saved or not). A key set to nil and not yet saved
    /// holds no value: false.
    public func isCached(_ key: String) -> Bool {
        lock.withLock { cache[KeyValueCacheKey(key)].map { !$0.deleted } ?? false }
    }

    /// The keys whose values memory holds (saved or not), sorted.
    public var cachedKeys: [String] {
        lock.withLock { cache.filter { !$0.value.deleted }.keys.sorted().map(\.text) }
    }

    /// Called with every key that leaves the cache, on the thread that caused it, after the
    /// cache's lock is released (so it may read the cache). It never receives a value.
    public var onEviction: (@Sendable (KeyValueEviction) -> Void)? {
        get { evictionHub.callback }
        set { evictionHub.callback = newValue }
    }

    /// A stream of every key that leaves the cache from now on (never a value); it ends when the
    /// `KeyValueStore` is deallocated. A slow consumer keeps the newest 10,000 notices.
    public func evictions() -> AsyncStream<KeyValueEviction> { evictionHub.stream() }

    /// Drops every value from memory, **unsaved ones included** (GBStorage's meaning: the cache is
    /// the only copy of an unsaved value, so those changes are lost; call ``save()`` first to keep
    /// them). Saved values are read from disk again on their next use.
    public func clearCache() {
        dropAll(setUpTo: .max, reason: .cleared)
    }

    /// Drops `key` from memory, saved or not (an unsaved value or deletion is lost).
    public func clearCache(forKey key: String) {
        drop([key], reason: .cleared)
    }

    /// Removes every value of this namespace (the store's alias) from memory, unsaved ones
    /// included; disk is untouched. The same as ``clearCache()``, under GBStorage's name
    /// (`removeAllFromMemory`).
    public func removeAll() {
        clearCache()
    }

    /// Removes every key/value entry of this namespace (the store's alias) from disk, in one
    /// transaction through the record pipeline (change sets report each key as deleted), and
    /// drops the values memory held, unsaved ones included. A value set by another thread while
    /// this runs stays (unsaved). The process's other caches of the alias drop their saved values
    /// of the removed keys.
    ///
    /// - Throws: the store's write errors; then nothing was removed and memory is unchanged.
    public func removeAllPermanently() throws {
        let startedAt = lock.withLock { clock }
        try store.write { tx in _ = try tx.deleteKeyValueEntries(except: self) }
        dropAll(setUpTo: startedAt, reason: .removed)
    }

    /// Removes `key` from disk (through the record pipeline) and from memory. Returns whether
    /// it was saved on disk.
    @discardableResult
    public func deletePermanently(_ key: String) throws -> Bool {
        let deleted = try store.write { tx -> Bool in
            guard let target = try tx.context.keyValueTarget(alias: store.alias, create: true) else { return false }
            // The commit drops the key from the other caches; this one drops it below.
            let previous = tx.context.keyValueWriter
            tx.context.keyValueWriter = ObjectIdentifier(self)
            defer { tx.context.keyValueWriter = previous }
            return try Array(key.utf8).withUnsafeBytes { try tx.context.deleteRecord(target, key: $0) }
        }
        drop([key], reason: .removed)
        return deleted
    }

    // MARK: Internals

    /// Drops `keys` from memory, saved or not, and reports them.
    func drop(_ keys: [String], reason: KeyValueEviction.Reason) {
        let evicted = lock.withLock { () -> [KeyValueEviction] in
            keys.compactMap { key in
                guard let old = cache[KeyValueCacheKey(key)] else { return nil }
                put(KeyValueCacheKey(key), nil)
                return KeyValueEviction(key: key, reason: reason, discardedUnsavedChange: old.dirty)
            }
        }
        evictionHub.publish(evicted)
    }

    /// Drops every entry set or read at or before `version` (the cache's clock), and reports them.
    func dropAll(setUpTo version: UInt64, reason: KeyValueEviction.Reason) {
        let evicted = lock.withLock { () -> [KeyValueEviction] in
            let gone = cache.filter { $0.value.version <= version }
            for key in gone.keys { put(key, nil) }
            return gone.sorted { $0.key < $1.key }
                .map { KeyValueEviction(key: $0.key.text, reason: reason, discardedUnsavedChange: $0.value.dirty) }
        }
        evictionHub.publish(evicted)
    }
}

import Foundation
import DepotSupport

/// A cached key/value facade over a store (GBStorageController): values of any `Codable` type
/// under string keys, kept in a bounded least-recently-used cache, written to disk only when
/// saved.
///
/// ```swift
/// let kv = store.keyValue()
/// kv["name"] = "Ada"              // in memory only
/// try kv.save()                   // every dirty key in one transaction
/// let name: String? = kv["name"]  // cache, then disk
/// try await kv.preload("big")     // load and decode in the background
/// ```
///
/// The subscript reads `nil` both for a missing key and for a value that does not decode as the
/// asked type; ``value(forKey:as:)`` throws instead.
///
/// **The cache is the only copy of unsaved values** (as in GBStorage): the bounds never evict
/// them, but ``clearCache()``, ``clearCache(forKey:)`` and ``removeAll()`` drop them, and they
/// are then lost. ``isCached(_:)`` and ``cachedKeys`` say what memory holds; ``onEviction`` and
/// ``evictions()`` report every key that leaves the cache (never its value).
///
/// **Coherence**: a saved value is dropped from the cache (and read from disk on the next use)
/// when another writer changes its key: another `KeyValueStore` of this process on the same
/// store (at its save), undo or redo (``UndoHistory``: every cache, this one included), or
/// another process, once this store watches for that with
/// ``Store/watchExternalChanges(every:)`` (before the change notice reaches any observer or
/// stream). Unsaved values are kept: they are written over the other writer's at ``save()``.
///
/// **Values are saved as they are at the save**: a value of a class type (set, or handed out
/// by the cache) may change in place after it was set; ``save()`` encodes such values again and
/// writes every one whose encoding differs from the bytes last set or saved, so a change made
/// in place is saved, and ``hasUnsavedChanges`` counts it. Other values are copies.
public final class KeyValueStore: @unchecked Sendable {
    // @unchecked Sendable: every mutable property is guarded by `lock`.
    /// The cached value of an entry preloaded as bytes, decoded on first use.
    struct Undecoded: Sendable {}

    struct Entry {
        var value: any Sendable
        var bytes: [UInt8]?       // encoded record payload; nil while the value failed to encode
        var encodingError: (any Error)?
        var dirty: Bool
        var deleted = false
        var lastUse: UInt64
        var version: UInt64 = 0
        /// Encodes the value again, for a value of a class type (nil for others): it may have
        /// changed in place since `bytes` were made.
        var encode: (@Sendable () throws -> [UInt8])? = nil
    }

    /// The store the values are kept in.
    public let store: Store
    /// At most this many values in the cache (unsaved ones are never evicted).
    public let maxEntries: Int
    /// At most this many encoded bytes in the cache (unsaved ones are never evicted).
    public let maxBytes: Int
    let lock = NSLock()
    var cache: [KeyValueCacheKey: Entry] = [:]
    var clock: UInt64 = 0
    var bytesCached = 0
    /// Keys whose cached value is unsaved (never evicted).
    var dirtyKeys = Set<KeyValueCacheKey>()
    /// Keys whose cached value is an instance of a class (encoded again at each save: it may
    /// have changed in place), so that a save looks at those, not at the whole cache.
    var classKeys = Set<KeyValueCacheKey>()
    /// Saved entries by last use, for eviction.
    var lru = KeyValueLRU()
    let evictionHub = KeyValueEvictionHub()
    private var hits = 0
    private var misses = 0
    /// Counts the changes to what the cache holds (sets, saves, drops): a value loaded from
    /// disk is cached only when none happened while it was loaded, so a load never replaces a
    /// value set meanwhile (nor brings back one another writer changed).
    private var changes: UInt64 = 0
    /// Runs between a load from disk and its insertion into the cache (tests widen the race).
    var afterLoadForTesting: (@Sendable () -> Void)?

    init(store: Store, maxEntries: Int, maxBytes: Int) {
        self.store = store
        self.maxEntries = max(1, maxEntries)
        self.maxBytes = max(1, maxBytes)
        KeyValueCacheRegistry.shared.register(self, core: store.core)
    }

    deinit { evictionHub.finish() }

    /// Drops the saved (not the unsaved) cached values of `keys`: another writer changed them.
    func dropSaved(_ keys: [String]) {
        let evicted = lock.withLock { () -> [KeyValueEviction] in
            // A load of one of these keys under way (not cached yet) must not cache what it read.
            if !keys.isEmpty { changes &+= 1 }
            var evicted: [KeyValueEviction] = []
            for key in keys {
                guard let entry = cache[KeyValueCacheKey(key)], !entry.dirty else { continue }
                put(KeyValueCacheKey(key), nil)
                evicted.append(KeyValueEviction(key: key, reason: .changedElsewhere, discardedUnsavedChange: false))
            }
            return evicted
        }
        evictionHub.publish(evicted)
    }

    static func keyspaceName(alias: String) -> String { StoreLayout.keyValueDatabase(alias: alias) }

    /// Cache hits and misses so far, and what the cache holds.
    public var statistics: (hits: Int, misses: Int, entries: Int, bytes: Int) {
        lock.withLock { (hits, misses, cache.count, bytesCached) }
    }

    /// Whether values were set but not saved, or a cached value of a class type was changed in
    /// place since it was set, loaded or saved (found by encoding it again).
    public var hasUnsavedChanges: Bool {
        if lock.withLock({ !dirtyKeys.isEmpty }) { return true }
        return !pending(nil).isEmpty
    }

    /// The value under `key` as `T`: from the cache, else from disk (then cached).
    /// Setting keeps the value in memory only (nil marks the key for deletion) until ``save()``.
    public subscript<T: Codable & Sendable>(key: String) -> T? {
        get { (try? value(forKey: key, as: T.self)) ?? nil }
        set { set(newValue, forKey: key) }
    }

    /// The value under `key` as `T`, or nil when absent.
    ///
    /// - Throws: a decoding error naming the key when the stored value is not a `T`.
    public func value<T: Codable & Sendable>(forKey key: String, as type: T.Type = T.self) throws -> T? {
        if let cached: Entry = lock.withLock({ () -> Entry? in
            let cacheKey = KeyValueCacheKey(key)
            guard var entry = cache[cacheKey] else { return nil }
            clock += 1
            entry.lastUse = clock
            put(cacheKey, entry)
            hits += 1
            return entry
        }) {
            if cached.deleted { return nil }
            if let typed = cached.value as? T { return typed }
            guard let bytes = cached.bytes else { return nil }
            return try decode(T.self, bytes, key: key)
        }
        let since = lock.withLock { () -> UInt64 in
            misses += 1
            return changes
        }
        guard let bytes = try load(key) else { return nil }
        let decoded = try decode(T.self, bytes, key: key)
        insert(KeyValueCacheKey(key), Entry(value: decoded, bytes: bytes, encodingError: nil, dirty: false, lastUse: 0, encode: Self.encoder(for: decoded)),
               loadedSince: since)
        return decoded
    }

    /// Sets the value under `key` in memory (nil: delete at the next save).
    public func set<T: Codable & Sendable>(_ value: T?, forKey key: String) {
        guard let value else {
            insert(KeyValueCacheKey(key), Entry(value: Optional<Int>.none as Int?, bytes: nil, encodingError: nil, dirty: true, deleted: true, lastUse: 0))
            return
        }
        let encode = Self.encoder(for: value)
        do {
            let bytes = try BinaryEncoder().encode(value)
            insert(KeyValueCacheKey(key), Entry(value: value, bytes: bytes, encodingError: nil, dirty: true, lastUse: 0, encode: encode))
        } catch {
            insert(KeyValueCacheKey(key), Entry(value: value, bytes: nil, encodingError: error, dirty: true, lastUse: 0, encode: encode))
        }
    }

    /// Writes every unsaved value in one transaction, each as it is now (see the type's
    /// discussion of values changed in place). On error nothing is written and the values stay
    /// unsaved.
    public func save() throws {
        if lock.withLock({ dirtyKeys.isEmpty && classKeys.isEmpty }) { return } // nothing to write: no transaction
        try write { pending(nil) }
    }

    /// Writes the unsaved value of `key` (if any), as it is now.
    public func save(_ key: String) throws {
        let cacheKey = KeyValueCacheKey(key)
        if lock.withLock({ !dirtyKeys.contains(cacheKey) && !classKeys.contains(cacheKey) }) { return }
        try write { pending(key) }
    }

    /// What a save of `only` (nil: every key) writes: the unsaved entries, and the cached values
    /// of class types whose encoding changed in place; a class value is encoded now, so it is
    /// written as it is at the save. Encodes outside the lock.
    private func pending(_ only: String?) -> [KeyValueCacheKey: Entry] {
        let candidates = lock.withLock { () -> [KeyValueCacheKey: Entry] in
            var found: [KeyValueCacheKey: Entry] = [:]
            if let only = only.map(KeyValueCacheKey.init) {
                if let entry = cache[only], entry.dirty || entry.encode != nil { found[only] = entry }
                return found
            }
            for key in dirtyKeys { found[key] = cache[key] }
            for key in classKeys where found[key] == nil { found[key] = cache[key] }
            return found
        }
        var result: [KeyValueCacheKey: Entry] = [:]
        for (key, var entry) in candidates {
            if let encode = entry.encode, !entry.deleted {
                do {
                    let now = try encode()
                    if !entry.dirty && now == entry.bytes { continue } // unchanged since loaded or saved
                    entry.bytes = now
                    entry.encodingError = nil
                } catch {
                    entry.bytes = nil
                    entry.encodingError = error
                }
            } else if !entry.dirty {
                continue
            }
            result[key] = entry
        }
        return result
    }

    /// Encodes `value` again at save time when it is an instance of a class (it may change in
    /// place); nil for other values, which the cache holds as copies.
    private static func encoder<T: Encodable & Sendable>(for value: T) -> (@Sendable () throws -> [UInt8])? {
        guard type(of: value) is AnyClass else { return nil }
        return { try BinaryEncoder().encode(value) }
    }

    /// Loads and decodes `key` into the cache off the calling task.
    public func preload<T: Codable & Sendable>(_ key: String, as type: T.Type) async throws {
        try await BlockingCalls.shared.run { [self] in _ = try value(forKey: key, as: T.self) }
    }

    /// Loads the raw bytes of `key` into the cache off the calling task (decoded on first use).
    public func preload(_ key: String) async throws {
        try await BlockingCalls.shared.run { [self] in
            let since = lock.withLock { () -> UInt64? in cache[KeyValueCacheKey(key)] == nil ? changes : nil }
            guard let since, let bytes = try load(key) else { return }
            insert(KeyValueCacheKey(key), Entry(value: Undecoded(), bytes: bytes, encodingError: nil, dirty: false, lastUse: 0), loadedSince: since)
        }
    }

    // MARK: Raw payloads (for Persistent's repository)

    /// The encoded payload under `key` on disk (bypassing the cache).
    func loadPayload(_ key: String) throws -> [UInt8]? {
        drop([key], reason: .cleared)
        return try load(key)
    }

    /// Writes an already encoded payload (nil deletes) under `key` now.
    func savePayload(_ bytes: [UInt8]?, forKey key: String) throws {
        let entry = Entry(value: bytes ?? [], bytes: bytes, encodingError: nil, dirty: true, deleted: bytes == nil, lastUse: 0)
        try write { [KeyValueCacheKey(key): entry] }
        drop([key], reason: .cleared)
    }

    // MARK: Internals

    /// Caches `entry`. `loadedSince`: for a value loaded from disk, what ``changes`` was when
    /// the load began: it is cached only when the cache did not change meanwhile (a value set
    /// while it loaded stays unsaved, a value another writer changed stays dropped).
    private func insert(_ key: KeyValueCacheKey, _ entry: Entry, loadedSince: UInt64? = nil) {
        if loadedSince != nil { lock.withLock { afterLoadForTesting }?() }
        let evicted = lock.withLock { () -> [KeyValueEviction] in
            if let loadedSince, changes != loadedSince || cache[key] != nil { return [] }
            var entry = entry
            clock += 1
            entry.lastUse = clock
            entry.version = clock
            put(key, entry)
            return evict()
        }
        evictionHub.publish(evicted)
    }

    /// Evicts least-recently-used saved values until the bounds hold; returns the notices to
    /// publish once the lock is released. The lock is held.
    private func evict() -> [KeyValueEviction] {
        var evicted: [KeyValueEviction] = []
        while cache.count > maxEntries || bytesCached > maxBytes {
            let victim = lru.popOldest { use, key in
                guard let entry = cache[key] else { return false }
                return !entry.dirty && entry.lastUse == use
            }
            guard let victim else { break } // only unsaved entries are left
            put(victim, nil)
            evicted.append(KeyValueEviction(key: victim.text, reason: .capacity, discardedUnsavedChange: false))
        }
        return evicted
    }

    /// Stores or removes the entry of `key` (under `lock`), keeping the byte count, the unsaved
    /// keys and the saved entries' use order in step with the cache.
    func put(_ key: KeyValueCacheKey, _ entry: Entry?) {
        if let old = cache[key] { bytesCached -= old.bytes?.count ?? 0 }
        cache[key] = entry
        if entry?.dirty ?? true { changes &+= 1 }
        if entry?.encode != nil {
            classKeys.insert(key)
        } else if !classKeys.isEmpty {
            classKeys.remove(key)
        }
        guard let entry else {
            dirtyKeys.remove(key)
            return
        }
        bytesCached += entry.bytes?.count ?? 0
        if entry.dirty {
            dirtyKeys.insert(key)
            return
        }
        dirtyKeys.remove(key)
        lru.push(entry.lastUse, key)
        if lru.count > 2 * cache.count + 64 {
            lru.rebuild(cache.compactMap { $0.value.dirty ? nil : ($0.value.lastUse, $0.key) })
        }
    }

    private func load(_ key: String) throws -> [UInt8]? {
        try store.read { tx -> [UInt8]? in
            guard let ks = try tx.context.txn.keyspace(named: Self.keyspaceName(alias: store.alias), create: false) else { return nil }
            return try tx.context.txn.withValue(forKey: Array(key.utf8), in: ks) { record -> [UInt8] in
                do {
                    return [UInt8](try Record.open(record).1)
                } catch Record.Problem.sealed {
                    throw DepotError.transformRequired(alias: store.alias, collection: "$kv", id: key)
                } catch {
                    throw DepotError.checksumMismatch(alias: store.alias, collection: "$kv", id: key)
                }
            }
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8], key: String) throws -> T {
        do {
            return try BinaryDecoder().decode(T.self, from: bytes)
        } catch let error as DecodingError {
            throw DepotError.decodingFailed(alias: store.alias, collection: "$kv", id: key, fieldPath: error.fieldPath, detail: decodingDetail(error))
        } catch let error as BinaryCodecError {
            throw DepotError.corruptRecord(alias: store.alias, collection: "$kv", id: key, detail: "\(error)")
        }
    }

    /// Writes what `collect` returns, taken inside the write transaction: of two saves, the one
    /// that commits later wrote the newer values (a snapshot taken before waiting for the writer
    /// could commit an older value over a newer one). Checked first, in the transaction, so
    /// that nothing of a bad batch is written on any driver.
    private func write(_ collect: () -> [KeyValueCacheKey: Entry]) throws {
        var entries: [KeyValueCacheKey: Entry] = [:]
        try store.write { tx in
            entries = try checked(collect())
            if entries.isEmpty { return }
            // Through the record pipeline: sealed records, revisions, created vs updated.
            guard let target = try tx.context.keyValueTarget(alias: store.alias, create: true) else { return }
            // This cache holds what it writes; the commit drops these keys from the others.
            let previous = tx.context.keyValueWriter
            tx.context.keyValueWriter = ObjectIdentifier(self)
            defer { tx.context.keyValueWriter = previous }
            for (cacheKey, entry) in entries.sorted(by: { $0.key < $1.key }) {
                let key = cacheKey.text
                try Array(key.utf8).withUnsafeBytes { k in
                    if entry.deleted {
                        _ = try tx.context.deleteRecord(target, key: k)
                    } else if let bytes = entry.bytes {
                        try tx.context.writeRecord(target, key: k, flags: 0, displayID: { key }) { $0.append(contentsOf: bytes) }
                    }
                }
            }
        }
        if entries.isEmpty { return }
        let evicted = lock.withLock { () -> [KeyValueEviction] in
            changes &+= 1
            for (key, saved) in entries {
                guard var current = cache[key], current.version == saved.version else { continue } // set again meanwhile
                if current.deleted {
                    put(key, nil)
                } else {
                    current.dirty = false
                    current.bytes = saved.bytes // what was written: a later change in place is compared with it
                    put(key, current)
                }
            }
            return evict()
        }
        evictionHub.publish(evicted)
    }
}

extension Store {
    /// A cached key/value facade on this store's alias (values in the keyspace
    /// `depot.kv/<alias>`), bounded to `maxEntries` values and `maxBytes` encoded bytes.
    public func keyValue(maxEntries: Int = 1_000, maxBytes: Int = 64 << 20) -> KeyValueStore {
        KeyValueStore(store: self, maxEntries: maxEntries, maxBytes: maxBytes)
    }
}

import Foundation

/// The live key/value caches of this process, by store core, so that a change of a key reaches
/// every cache holding it: commits of other processes (through ``ExternalChangeWatcher``, before
/// any observer or stream is told) and every commit of this process that wrote key/value records
/// (a save of another ``KeyValueStore``, undo and redo: see `TransactionContext.of`).
///
/// `@unchecked Sendable`: `entries` is only touched with `lock` held.
final class KeyValueCacheRegistry: @unchecked Sendable {
    static let shared = KeyValueCacheRegistry()

    private struct Weak { weak var cache: KeyValueStore? }
    /// A store core and an alias: caches are listed per alias, so that a write of one alias
    /// costs nothing to the caches of the others.
    private struct Key: Hashable {
        let core: ObjectIdentifier
        let alias: String
    }
    private let lock = NSLock()
    private var entries: [Key: [Weak]] = [:]

    /// Registers a cache of `core` (held weakly).
    func register(_ cache: KeyValueStore, core: StoreCore) {
        let key = Key(core: ObjectIdentifier(core), alias: cache.store.alias)
        lock.withLock {
            var list = entries[key, default: []].filter { $0.cache != nil }
            list.append(Weak(cache: cache))
            entries[key] = list
        }
    }

    /// The live caches of `alias` on `core`.
    private func caches(of core: StoreCore, alias: String) -> [KeyValueStore] {
        let key = Key(core: ObjectIdentifier(core), alias: alias)
        return lock.withLock {
            guard let all = entries[key] else { return [] }
            let list = all.filter { $0.cache != nil }
            if list.count != all.count { entries[key] = list.isEmpty ? nil : list }
            return list.compactMap(\.cache)
        }
    }

    /// Drops `keys` of `alias` from every cache of `core` except `saver` (which holds what it
    /// just saved).
    func invalidate(keys: [String], alias: String, core: StoreCore, except saver: KeyValueStore? = nil) {
        if keys.isEmpty { return }
        for cache in caches(of: core, alias: alias) where cache !== saver {
            cache.dropSaved(keys)
        }
    }

    /// Drops the key/value records a committed transaction of `core` wrote (by alias and key,
    /// with the cache that wrote each: `TransactionContext.keyValueWrites`) from every cache of
    /// `core` but that writer's, which holds what it wrote.
    func invalidate(_ writes: [String: [[UInt8]: ObjectIdentifier?]], core: StoreCore) {
        for (alias, written) in writes {
            for cache in caches(of: core, alias: alias) {
                let me = ObjectIdentifier(cache)
                let keys = written.compactMap { key, writer in writer == me ? nil : String(decoding: key, as: UTF8.self) }
                if !keys.isEmpty { cache.dropSaved(keys.sorted()) }
            }
        }
    }

    /// Drops every key/value key named by `changes` from the caches of `core`.
    func invalidate(_ changes: ChangeSet, core: StoreCore) {
        for part in changes.collections where part.collection == "$kv" {
            let keys = (part.created + part.updated + part.deleted).compactMap { id -> String? in
                if case .string(let key) = id { return key }
                return nil
            }
            invalidate(keys: keys, alias: part.alias, core: core)
        }
    }
}

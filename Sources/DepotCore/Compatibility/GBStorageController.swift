// GBStorageController's names for Depot's calls (lmirosevic/GBStorage, goonbee's
// `GBStorageController`, Objective-C), spelled as Swift imports the selectors.
//
// A port from GBStorageController maps as follows. `GBStorage(namespace)` (the namespaced
// shared controller) is a ``KeyValueStore`` of the store's alias:
// `store.alias(namespace).keyValue()`; keep one per namespace, as GBStorage kept singletons.
// Values are `Codable & Sendable` (GBStorage's were `NSCoding`).
//
// Same name, same meaning in Depot (not repeated here): the subscript
// (`objectForKeyedSubscript:` / `setObject:forKeyedSubscript:`; setting is in memory only
// until a save), `save(_:)` of one key, `save()` (GBStorage 1.x), `preload(_:)`,
// `clearCache()`, `clearCache(forKey:)`, `deletePermanently(_:)` (GBStorage 1.x) and
// `removeAllPermanently()`. As in GBStorage, the memory cache is the only copy of an unsaved
// value: dropping it from memory loses it.
//
// Not forwarded, and why:
// - `setObject:forKey:withSize:` and `maxInMemoryCacheCapacity`: Depot's cache is bounded by
//   entry count and encoded bytes, set when it is made (`keyValue(maxEntries:maxBytes:)`), and
//   never evicts unsaved values.
// - `persistImmediately:`: set the value, then `save(key)`.
//
// Each forward below calls the one Depot call named in its documentation.

import Foundation

extension KeyValueStore {
    /// GBStorage's `storageNamespace`: forwards to the alias of ``store`` (``Store/alias``).
    public var storageNamespace: String {
        store.alias
    }

    /// GBStorage's `saveAll`: forwards to ``save()`` (every unsaved value, in one transaction).
    public func saveAll() throws {
        try save()
    }

    /// GBStorage's `preloadIntoMemory:`: forwards to ``preload(_:)``.
    ///
    /// Asynchronous: it returns once the value is in memory (GBStorage returned at once).
    public func preloadIntoMemory(_ key: String) async throws {
        try await preload(key)
    }

    /// GBStorage's `removeFromMemory:`: forwards to ``clearCache(forKey:)``; disk is untouched,
    /// an unsaved value of `key` is lost.
    public func removeFromMemory(_ key: String) {
        clearCache(forKey: key)
    }

    /// GBStorage's `removeAllFromMemory`: forwards to ``clearCache()``; disk is untouched,
    /// unsaved values are lost.
    public func removeAllFromMemory() {
        clearCache()
    }

    /// GBStorage's `removePermanently:`: forwards to ``deletePermanently(_:)`` (from disk and
    /// memory). Returns whether the key was saved on disk.
    @discardableResult
    public func removePermanently(_ key: String) throws -> Bool {
        try deletePermanently(key)
    }
}

// GBStorageController's names (Sources/DepotCore/Compatibility/GBStorageController.swift): each
// forward is called by its GBStorage name and checked against the Depot call it forwards to.

import DepotLMDB
import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

@Suite("Compatibility: GBStorageController")
struct GBStorageControllerCompatibilityTests {
    let folder = TemporaryFolder("gb-compat")
    let store: Store
    init() throws { store = try Store(path: folder.sub("store")) }

    /// What another process would read from disk: a fresh cache on the same store.
    private func onDisk(_ key: String) -> String? { store.keyValue()[key] }

    @Test func storageNamespaceForwardsToAlias() throws {
        #expect(store.keyValue().storageNamespace == store.alias)
        let namespaced = try store.alias("some.namespace").keyValue()
        #expect(namespaced.storageNamespace == "some.namespace")
        namespaced["name"] = "Luka"
        try namespaced.saveAll()
        #expect(onDisk("name") == nil, "namespaces do not share keys")
    }

    @Test func saveAllForwardsToSave() throws {
        let storage = store.keyValue()
        storage["name"] = "Luka"
        storage["city"] = "London"
        #expect(storage.hasUnsavedChanges)
        try storage.saveAll()
        #expect(!storage.hasUnsavedChanges, "every key saved, as save() does")
        #expect(onDisk("name") == "Luka" && onDisk("city") == "London")
    }

    @Test func preloadIntoMemoryForwardsToPreload() async throws {
        let writer = store.keyValue()
        writer["bigObject"] = "payload"
        try writer.save()
        let storage = store.keyValue()
        #expect(!storage.isCached("bigObject"))
        try await storage.preloadIntoMemory("bigObject")
        #expect(storage.isCached("bigObject"), "in memory, as after preload")
        #expect((storage["bigObject"] as String?) == "payload")
        #expect(storage.statistics.hits == 1 && storage.statistics.misses == 0, "served from memory")
    }

    @Test func removeFromMemoryForwardsToClearCacheForKey() throws {
        let storage = store.keyValue()
        storage["name"] = "Luka"
        storage["city"] = "London"
        try storage.save()
        storage.removeFromMemory("name")
        #expect(!storage.isCached("name") && storage.isCached("city"), "only that key leaves memory")
        #expect((storage["name"] as String?) == "Luka", "still on disk")
        storage["draft"] = "unsaved"
        storage.removeFromMemory("draft")
        #expect((storage["draft"] as String?) == nil, "an unsaved value is lost, as with clearCache(forKey:)")
    }

    @Test func removeAllFromMemoryForwardsToClearCache() throws {
        let storage = store.keyValue()
        storage["name"] = "Luka"
        try storage.save()
        storage["draft"] = "unsaved"
        storage.removeAllFromMemory()
        #expect(storage.cachedKeys.isEmpty)
        #expect((storage["name"] as String?) == "Luka", "disk untouched")
        #expect((storage["draft"] as String?) == nil, "unsaved values are lost")
    }

    @Test func removePermanentlyForwardsToDeletePermanently() throws {
        let storage = store.keyValue()
        storage["bigObject"] = "payload"
        try storage.save()
        #expect(try storage.removePermanently("bigObject"), "it was on disk")
        #expect(!storage.isCached("bigObject"))
        #expect(onDisk("bigObject") == nil)
        #expect(try storage.removePermanently("bigObject") == false, "gone: as deletePermanently, false")
    }
}

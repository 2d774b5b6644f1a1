import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

/// A value set under a key the storage cannot hold (empty, or longer than its limit) fails the
/// save with an error that says how to save the others; setting that key to nil undoes it.
@Suite("Kits: key/value keys the storage cannot hold")
struct KeyValueBadKeyTests {
    @Test func aBadKeyFailsTheSaveUntilItIsSetToNil() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let kv = store.keyValue()
        let long = String(repeating: "k", count: 4_000)
        kv["good"] = 1
        kv[long] = 2
        let error = #expect(throws: DepotError.self) { try kv.save() }
        #expect(error?.code == .invalidKey)
        #expect(error?.message.contains("4000 bytes") == true)
        #expect(error?.message.contains("set that key to nil") == true)
        #expect(error?.message.contains(long) == false)
        #expect(store.keyValue()["good"] as Int? == nil) // nothing saved
        kv[long] = nil as Int?
        try kv.save()
        #expect(!kv.hasUnsavedChanges)
        #expect(store.keyValue()["good"] as Int? == 1)
    }

    @Test func anEmptyKeySetToNilSavesNothing() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let kv = store.keyValue()
        kv[""] = 5
        #expect(throws: DepotError.self) { try kv.save() }
        kv[""] = nil as Int?
        try kv.save()
        #expect(!kv.hasUnsavedChanges)
    }
}

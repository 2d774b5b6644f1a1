import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

extension KeyValueKey {
    static var volume: KeyValueKey<Int> { .init("volume", default: 5) }
    static var nickname: KeyValueKey<String?> { .init("nickname") }
    static var settings: KeyValueKey<Settings> { .init("settings", default: Settings(volume: 1, name: "default")) }
}

/// The README's example of the property wrapper.
struct Preferences {
    @StoredValue var volume: Int
    @StoredValue var nickname: String?
    init(kv: KeyValueStore) {
        _volume = StoredValue(.volume, in: kv)
        _nickname = StoredValue(.nickname, in: kv)
    }
}

@Suite("Kits: typed key/value keys")
struct KeyValueKeyTests {
    @Test(arguments: DriverKind.allCases)
    func defaultsWhenAbsentThenStoredValues(_ kind: DriverKind) throws {
        let folder = TemporaryFolder()
        let store = try kind.makeStore(folder)
        let kv = store.keyValue()
        #expect(kv[.volume] == 5)
        #expect(kv[.nickname] == nil)
        #expect(kv[.settings] == Settings(volume: 1, name: "default"))
        #expect(!kv.hasValue(for: .volume))
        kv[.volume] += 1
        kv[.nickname] = "Ada"
        kv[.settings].volume = 9
        #expect(kv[.volume] == 6 && kv[.nickname] == "Ada" && kv[.settings].volume == 9)
        #expect(kv.hasUnsavedChanges)
        try kv.save()
        // A fresh cache reads from disk: typed and string-keyed views agree.
        let again = store.keyValue()
        #expect(again[.volume] == 6)
        #expect(again["volume"] as Int? == 6)
        #expect(again[.nickname] == "Ada")
        #expect(again["nickname"] as String? == "Ada")
        #expect(again[.settings] == Settings(volume: 9, name: "default"))
        #expect(try again.value(for: .volume) == 6)
    }

    @Test func nilAndResetDeleteTheKey() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let kv = store.keyValue()
        kv[.nickname] = "Ada"
        kv[.volume] = 8
        try kv.save()
        kv[.nickname] = nil
        kv.reset(.volume)
        #expect(kv[.nickname] == nil && kv[.volume] == 5)
        try kv.save(.nickname)
        try kv.save(.volume)
        let fresh = store.keyValue()
        #expect(fresh["nickname"] as String? == nil)
        #expect(!fresh.hasValue(for: .nickname) && !fresh.hasValue(for: .volume))
        #expect(fresh[.volume] == 5)
    }

    @Test func aValueOfAnotherTypeReadsTheDefaultOrThrows() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let kv = store.keyValue()
        kv["volume"] = "loud"
        try kv.save()
        let fresh = store.keyValue()
        #expect(fresh[.volume] == 5, "the subscript never traps and never reads nil")
        #expect(throws: DepotError.self) { try fresh.value(for: .volume) }
    }

    @Test func storedValueSavesOnSetAndResets() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let preferences = Preferences(kv: store.keyValue())
        #expect(preferences.volume == 5 && preferences.nickname == nil)
        preferences.volume = 7
        preferences.nickname = "Wess"
        #expect(!preferences.$volume.keyValueStore.hasUnsavedChanges, "saved at once")
        let other = Preferences(kv: store.keyValue())
        #expect(other.volume == 7 && other.nickname == "Wess")
        preferences.$volume.reset()
        #expect(store.keyValue()[.volume] == 5)
    }

    @Test func storedValueWithoutSaveOnSetWaitsForSave() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let kv = store.keyValue()
        let volume = StoredValue(.volume, in: kv, saveOnSet: false)
        volume.wrappedValue = 3
        #expect(kv.hasUnsavedChanges)
        #expect(store.keyValue()[.volume] == 5)
        try volume.projectedValue.save()
        #expect(store.keyValue()[.volume] == 3)
    }

    @Test func readmeExample() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let kv = store.keyValue()
        // As in the README.
        kv[.volume] += 1
        kv[.nickname] = nil
        try kv.save(.volume)
        let preferences = Preferences(kv: kv)
        #expect(preferences.volume == 6)
        preferences.volume = 7
        #expect(store.keyValue()["volume"] as Int? == 7)
        #expect(kv[.nickname] == nil)
    }
}

@Suite("Kits: key/value keys against the storage's limit")
struct KeyValueKeyLimitTests {
    /// The key rule is the record pipeline's (the driver's own limit), and a save with one bad
    /// key stores none of its entries.
    @Test(arguments: DriverKind.allCases)
    func anOversizedKeyFailsTheWholeSave(_ kind: DriverKind) throws {
        let folder = TemporaryFolder()
        let store = try kind.makeStore(folder)
        let kv = store.keyValue()
        kv.set(1, forKey: "fine")
        kv.set(2, forKey: String(repeating: "k", count: 600))
        let refused = #expect(throws: DepotError.self) { try kv.save() }
        #expect(refused?.code == .invalidKey)
        #expect(refused?.message.contains("a key of 600 bytes (the limit is 511)") == true, "\(String(describing: refused))")
        let fresh = store.keyValue()
        #expect(try fresh.value(forKey: "fine", as: Int.self) == nil, "nothing of the failed save is stored")
        // The good key alone saves.
        kv.set(1, forKey: "fine")
        try kv.save("fine")
        #expect(try store.keyValue().value(forKey: "fine", as: Int.self) == 1)
    }
}

import Foundation
import Testing
import DepotTestSupport
@testable import Depot
@testable import DepotCore
import DepotLMDB

@Suite("Kits: persistent single object")
struct PersistentTests {
    @Test func loadResetMutateSaveSynchronize() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        do {
            let settings = try Persistent<Settings>(key: "settings", store: store)
            #expect(settings.value == nil)
            settings.reset(Settings(volume: 1, name: "a"))
            settings.value?.volume = 7
            try settings.save()
            settings.value?.name = "saved on deinit"
        }
        let again = try Persistent<Settings>(key: "settings", store: store)
        #expect(again.value == Settings(volume: 7, name: "saved on deinit"))
        // Another handle in this process writes: the first one is told and updated.
        final class Box: @unchecked Sendable { var seen: [Settings?] = [] }
        let box = Box()
        again.onExternalChange = { box.seen.append($0) }
        let other = try Persistent<Settings>(key: "settings", store: try Store(path: folder.path))
        other.value = Settings(volume: 9, name: "other")
        try other.save()
        #expect(box.seen == [Settings(volume: 9, name: "other")])
        #expect(again.value?.volume == 9)
        // Its own saves are not reported as external.
        again.value?.volume = 10
        try again.save()
        #expect(box.seen.count == 1)
        try again.synchronize()
        #expect(again.value?.volume == 10)
    }

    @Test func fileRepositoryNoticesAnotherWriter() async throws {
        let folder = TemporaryFolder()
        let repository = try FileRepository(folder: URL(fileURLWithPath: folder.path), interval: 0.02)
        let object = try Persistent<Settings>(key: "prefs", repository: repository)
        object.reset(Settings(volume: 1, name: "mine"))
        try object.flush()
        var changes = object.externalChanges.makeAsyncIterator()
        // Someone else replaces the file.
        try await Task.sleep(for: .milliseconds(50))
        try repository.save(try BinaryEncoder().encode(Settings(volume: 2, name: "theirs")), forKey: "prefs")
        let seen = await changes.next()
        #expect(seen == Settings(volume: 2, name: "theirs"))
        #expect(object.value?.name == "theirs")
    }

    /// An empty key named the repository's folder (saving it failed with the file system's
    /// "is a directory"); a long one passed the file-name limit: both are `invalidKey` now.
    @Test func fileRepositoryKeysThatCannotNameAFileAreRefused() throws {
        let folder = TemporaryFolder()
        let repository = try FileRepository(folder: URL(fileURLWithPath: folder.path))
        for key in ["", String(repeating: "k", count: 256), String(repeating: "é", count: 50)] {
            let save = #expect(throws: DepotError.self) { try repository.save([1], forKey: key) }
            #expect(save?.code == .invalidKey, "\(key.count): \(String(describing: save))")
            #expect(throws: DepotError.self) { _ = try repository.load(key) }
            #expect(throws: DepotError.self) { _ = try Persistent<Settings>(key: key, repository: repository) }
        }
        try repository.save([1], forKey: String(repeating: "k", count: 255))
        #expect(try repository.load(String(repeating: "k", count: 255)) == [1])
    }
}

@Suite("Kits: persistent objects share one watcher")
struct SharedWatcherTests {
    /// Many observed keys of one store share one external-change watcher (one thread, one
    /// lease), which stops when the last observation goes.
    @Test func observationsOfOneStoreShareAWatcher() async throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let repository = StoreRepository(store: store)
        let other = StoreRepository(store: try store.alias("B"))
        let second = try Store(path: folder.path)
        weak let shared: ExternalChangeWatcher?
        do {
            var tokens = try (0..<20).map { i in try repository.observe("k\(i)") {} }
            tokens.append(try other.observe("x") {})
            let watchers = tokens.compactMap { ($0 as? StoreRepository.ObservationToken)?.watcher }
            #expect(watchers.count == 21)
            #expect(Set(watchers.map(ObjectIdentifier.init)).count == 1, "one watcher for the store")
            shared = watchers.first
            let handle = try StoreRepository(store: second).observe("k0") {}
            #expect((handle as? StoreRepository.ObservationToken)?.watcher === watchers.first, "another handle on the same files shares it")
        }
        #expect(await eventually { shared == nil }, "the last observation gone, the watcher stopped and went")
        let again = try repository.observe("k0") {}
        #expect((again as? StoreRepository.ObservationToken)?.watcher != nil, "a new observation starts a new one")
    }

    /// Starting a shared watcher takes a lease (a write): it must not hold the table's lock
    /// meanwhile, or a writer releasing an observation of another store waits for it forever.
    @Test func startingAWatcherDoesNotBlockAWriterReleasingAnother() throws {
        let first = TemporaryFolder(), second = TemporaryFolder()
        let store1 = try Store(path: first.path), store2 = try Store(path: second.path)
        let held = LockedBox<Persistent<Int>?>(try Persistent<Int>(key: "b", store: store2))
        let inWrite = DispatchSemaphore(value: 0), writerDone = DispatchSemaphore(value: 0)
        Thread {
            try? store1.write { _ in
                inWrite.signal()
                Thread.sleep(forTimeInterval: 0.3) // the other thread is starting store1's watcher
                held.set(nil)                      // releases store2's observation
            }
            writerDone.signal()
        }.start()
        inWrite.wait()
        let created = DispatchSemaphore(value: 0)
        Thread {
            _ = try? Persistent<Int>(key: "a", store: store1)
            created.signal()
        }.start()
        #expect(writerDone.wait(timeout: .now() + 20) == .success, "the writer finished")
        #expect(created.wait(timeout: .now() + 20) == .success, "the persistent object was created")
    }

    /// A stored value that does not decode as the type, and a value that cannot be encoded,
    /// fail as DepotError naming the key and the field path.
    @Test func codecFailuresAreDepotErrors() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let number = try Persistent<Int>(key: "n", store: store)
        number.reset(7)
        try number.save()
        let wrong = #expect(throws: DepotError.self) { try Persistent<Settings>(key: "n", store: store) }
        #expect(wrong?.code == .decodingFailed && wrong?.id == "n", "\(String(describing: wrong))")
        let refused = try Persistent<UnencodableSetting>(key: "r", store: store)
        refused.reset(UnencodableSetting())
        let error = #expect(throws: DepotError.self) { try refused.save() }
        #expect(error?.code == .encodingFailed && error?.id == "r", "\(String(describing: error))")
        #expect(error?.fieldPath == "inner", "\(String(describing: error))")
        refused.reset(nil)
    }
}

/// A value whose `inner` field refuses to be encoded.
struct UnencodableSetting: Codable, Sendable {
    struct Inner: Codable, Sendable {
        init() {}
        func encode(to encoder: any Encoder) throws {
            throw EncodingError.invalidValue(0, .init(codingPath: encoder.codingPath, debugDescription: "refused"))
        }
    }
    var inner = Inner()
}


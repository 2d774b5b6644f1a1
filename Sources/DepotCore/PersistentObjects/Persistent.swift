import Foundation

/// Where a ``Persistent`` object keeps its encoded value.
public protocol PersistentRepository: AnyObject, Sendable {
    /// The bytes stored under `key`, or nil.
    func load(_ key: String) throws -> [UInt8]?
    /// Stores `bytes` under `key` (nil deletes it).
    func save(_ bytes: [UInt8]?, forKey key: String) throws
    /// Calls `handler` after someone else changed `key` (another process, another handle).
    /// Returns a token that keeps the observation alive; nil when the repository cannot observe.
    func observe(_ key: String, _ handler: @escaping @Sendable () -> Void) throws -> AnyObject?
    /// Where ``Persistent`` logs errors it cannot throw (saving in deinit, reloading after an
    /// external change). Off by default.
    var logger: DepotLogger { get }
}

extension PersistentRepository {
    /// Off: repositories that log say so.
    public var logger: DepotLogger { .disabled }
}

/// One persistent value bound to a key (PersistentObject): loaded when created, changed in
/// memory, written by ``save()`` (and on ``flush()`` and deinit), reloaded by ``synchronize()``,
/// and replaced when another process or handle commits a new value — the owner is told through
/// ``onExternalChange`` and ``externalChanges``.
///
/// A value of a class type may be changed in place (`settings.value?.volume = 7` on a class
/// changes the object, not the property): ``hasUnsavedChanges`` then compares its encoding with
/// the bytes last loaded or saved, so ``flush()`` and the save on release write it as it is.
///
/// ```swift
/// let settings = try Persistent<Settings>(key: "settings", store: store)
/// if settings.value == nil { settings.reset(Settings()) }
/// settings.value?.volume = 7
/// try settings.save()
/// ```
public final class Persistent<Value: Codable & Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `current`, `dirty`, the handler and continuations are guarded by `lock`.
    /// The key the value is stored under.
    public let key: String
    /// The repository it is stored in.
    public let repository: any PersistentRepository
    private let lock = NSLock()
    private var current: Value?
    private var savedBytes: [UInt8]?
    private var dirty = false
    private var token: AnyObject?
    private var handler: (@Sendable (Value?) -> Void)?
    private var continuations: [UUID: AsyncStream<Value?>.Continuation] = [:]

    /// Binds to `key` in `repository` and loads the stored value (nil when there is none).
    public init(key: String, repository: any PersistentRepository) throws {
        self.key = key
        self.repository = repository
        let bytes = try repository.load(key)
        savedBytes = bytes
        current = try bytes.map { try Self.decoded($0, key: key) }
        token = try repository.observe(key) { [weak self] in self?.externalChange() }
    }

    /// Binds to `key` in a store (the store's key/value keyspace of its alias).
    public convenience init(key: String, store: Store) throws {
        try self.init(key: key, repository: StoreRepository(store: store))
    }

    deinit {
        do { try flush() } catch { logError("persistent object: saving on deinit failed; the change is lost", error) }
    }

    /// The value (nil until ``reset(_:)`` when nothing was stored). Setting it marks it unsaved.
    public var value: Value? {
        get { lock.withLock { current } }
        set { lock.withLock { current = newValue; dirty = true } }
    }

    /// Replaces the value (unsaved until ``save()``).
    public func reset(_ value: Value?) { self.value = value }

    /// Whether the value changed since it was loaded or saved: set, or, for a value of a class
    /// type, changed in place (its encoding differs from the bytes last loaded or saved).
    public var hasUnsavedChanges: Bool {
        let state: (dirty: Bool, value: Value?, saved: [UInt8]?) = lock.withLock { (dirty, current, savedBytes) }
        if state.dirty { return true }
        let value = state.value, saved = state.saved
        guard let value, type(of: value) is AnyClass else { return false } // other values are copies
        // A value that no longer encodes counts as changed: saving it reports the error.
        return (try? BinaryEncoder().encode(value)) != saved
    }

    /// Writes the value to the repository now.
    public func save() throws {
        let value = lock.withLock { current }
        let bytes = try value.map { try Self.encoded($0, key: key) }
        // Known before the write, so that the change notice of our own save is not taken for
        // someone else's.
        let previous = lock.withLock { () -> [UInt8]? in
            defer { savedBytes = bytes }
            return savedBytes
        }
        do {
            try repository.save(bytes, forKey: key)
        } catch {
            lock.withLock { savedBytes = previous }
            throw error
        }
        lock.withLock { dirty = false }
    }

    /// Saves if there are unsaved changes (the hook to call when the app goes to the background).
    public func flush() throws {
        if hasUnsavedChanges { try save() }
    }

    /// Saves unsaved changes, then reloads the stored value.
    public func synchronize() throws {
        try flush()
        try reload(notify: false)
    }

    /// Called with the new value when another writer changed it.
    public var onExternalChange: (@Sendable (Value?) -> Void)? {
        get { lock.withLock { handler } }
        set { lock.withLock { handler = newValue } }
    }

    /// New values written by other writers, as they arrive.
    public var externalChanges: AsyncStream<Value?> {
        let (stream, continuation) = AsyncStream<Value?>.makeStream()
        let id = UUID()
        lock.withLock { continuations[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.lock.withLock { _ = self?.continuations.removeValue(forKey: id) } }
        return stream
    }

    private func externalChange() {
        do { try reload(notify: true) } catch { logError("persistent object: reloading after an external change failed", error) }
    }

    /// The value stored as `bytes`; codec errors as `DepotError` naming the key and field path.
    private static func decoded(_ bytes: [UInt8], key: String) throws -> Value {
        do {
            return try BinaryDecoder().decode(Value.self, from: bytes)
        } catch {
            throw DepotError.decoding(error, of: "persistent value '\(key)'", id: key)
        }
    }

    /// The bytes of `value`; an encoding error as `DepotError` naming the key and field path.
    private static func encoded(_ value: Value, key: String) throws -> [UInt8] {
        do {
            return try BinaryEncoder().encode(value)
        } catch {
            throw DepotError.encoding(error, of: "persistent value '\(key)'", id: key)
        }
    }

    private func logError(_ message: String, _ error: any Error) {
        repository.logger.log(.error, message, metadata: ["key": key, "error": "\(error)"], source: "Depot")
    }

    private func reload(notify: Bool) throws {
        let bytes = try repository.load(key)
        let changed: Bool = lock.withLock { bytes != savedBytes }
        guard changed || !notify else { return } // our own save, seen again
        let value = try bytes.map { try Self.decoded($0, key: key) }
        let (handler, sinks) = lock.withLock { () -> ((@Sendable (Value?) -> Void)?, [AsyncStream<Value?>.Continuation]) in
            current = value
            savedBytes = bytes
            dirty = false
            return (self.handler, Array(continuations.values))
        }
        if notify && changed {
            handler?(value)
            for sink in sinks { sink.yield(value) }
        }
    }
}

/// A ``PersistentRepository`` in a store: the key/value keyspace of the store's alias, observed
/// through the store's change sets (other handles in this process) and an
/// ``ExternalChangeWatcher`` (other processes).
package final class StoreRepository: PersistentRepository, @unchecked Sendable {
    // @unchecked Sendable: immutable after init; Store and KeyValueStore are Sendable.
    let store: Store
    let kv: KeyValueStore
    private var watcher: ExternalChangeWatcher?

    /// A repository over `store`.
    package init(store: Store) {
        self.store = store
        self.kv = store.keyValue(maxEntries: 1, maxBytes: 1)
    }

    package func load(_ key: String) throws -> [UInt8]? { try kv.loadPayload(key) }
    /// The store's logger (its environment's `EnvironmentOptions.logger`).
    package var logger: DepotLogger { store.core.driver.logger }

    package func save(_ bytes: [UInt8]?, forKey key: String) throws { try kv.savePayload(bytes, forKey: key) }

    package func observe(_ key: String, _ handler: @escaping @Sendable () -> Void) throws -> AnyObject? {
        let observer = KeyObserver(alias: store.alias, key: key, handler: handler)
        store.addObserver(observer)
        let watcher = try Self.acquireWatcher(for: store)
        return ObservationToken(observer: observer, watcher: watcher, core: ObjectIdentifier(store.core))
    }

    /// One external-change watcher per store (its core), shared by every observed key while any
    /// observation holds it: one polling thread and one lease however many persistent objects
    /// there are (one each made m objects cost m threads polling and decoding every change).
    private static func acquireWatcher(for store: Store) throws -> ExternalChangeWatcher {
        let id = ObjectIdentifier(store.core)
        if let shared = sharedWatchersLock.withLock({ () -> ExternalChangeWatcher? in
            guard let shared = sharedWatchers[id] else { return nil }
            sharedWatchers[id]?.users += 1
            return shared.watcher
        }) { return shared }
        // Started outside the lock: taking its lease is a write, which may wait for a writer
        // that is itself releasing an observation (and so waiting for this lock).
        let started = try store.watchExternalChanges()
        let (watcher, extra) = sharedWatchersLock.withLock { () -> (ExternalChangeWatcher, ExternalChangeWatcher?) in
            if let shared = sharedWatchers[id] { // another thread was first
                sharedWatchers[id]?.users += 1
                return (shared.watcher, started)
            }
            sharedWatchers[id] = (started, 1)
            return (started, nil)
        }
        extra?.stop()
        return watcher
    }

    /// An observation of the store with core `id` ended: the last one stops the watcher.
    fileprivate static func releaseWatcher(core id: ObjectIdentifier) {
        let last: ExternalChangeWatcher? = sharedWatchersLock.withLock {
            guard let shared = sharedWatchers[id] else { return nil }
            if shared.users > 1 {
                sharedWatchers[id]?.users -= 1
                return nil
            }
            sharedWatchers[id] = nil
            return shared.watcher
        }
        last?.stop()
    }

    private static let sharedWatchersLock = NSLock()
    // Guarded by `sharedWatchersLock`. A watcher keeps its core alive, so an entry's key names
    // that core while the entry exists.
    nonisolated(unsafe) private static var sharedWatchers: [ObjectIdentifier: (watcher: ExternalChangeWatcher, users: Int)] = [:]

    final class KeyObserver: StoreObserver, @unchecked Sendable {
        // @unchecked Sendable: immutable.
        let alias: String, key: String, handler: @Sendable () -> Void
        init(alias: String, key: String, handler: @escaping @Sendable () -> Void) {
            self.alias = alias; self.key = key; self.handler = handler
        }
        func store(_ store: Store, didCommit changes: ChangeSet) {
            guard let part = changes.changes(in: "$kv", alias: alias) else { return }
            let id = DocumentValue.string(key)
            if part.updated.contains(id) || part.created.contains(id) || part.deleted.contains(id) { handler() }
        }
    }

    final class ObservationToken {
        let observer: KeyObserver
        let watcher: ExternalChangeWatcher
        let core: ObjectIdentifier
        init(observer: KeyObserver, watcher: ExternalChangeWatcher, core: ObjectIdentifier) {
            self.observer = observer
            self.watcher = watcher
            self.core = core
        }
        deinit { StoreRepository.releaseWatcher(core: core) }
    }
}

/// A ``PersistentRepository`` of plain files: one file per key in a folder, watched by polling
/// its modification time (other processes writing the file are noticed within `interval`).
public final class FileRepository: PersistentRepository, @unchecked Sendable {
    // @unchecked Sendable: immutable; file operations are atomic renames.
    /// The folder.
    public let folder: URL
    let interval: Double

    /// Shortest and longest polling interval in seconds (shorter ones would spin a core).
    public static let intervalRange: ClosedRange<Double> = 0.001...3_600

    /// Files in `folder` (created if missing); changes polled every `interval` seconds.
    /// - Throws: `DepotError` `.invalidOption` naming `FileRepository(interval:)` and its range
    ///   when `interval` is outside ``intervalRange`` (or not a number); the file system's error
    ///   when the folder cannot be created.
    public init(folder: URL, interval: Double = 0.1) throws {
        guard Self.intervalRange.contains(interval) else {
            throw DepotError.invalidOption("FileRepository(interval:)", allowed: "0.001 to 3600 seconds")
        }
        self.folder = folder
        self.interval = interval
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    /// The file of `key`: its name percent-encoded.
    /// - Throws: `DepotError` `.invalidKey` for an empty key (it would name the folder) or one
    ///   whose file name would pass the file system's 255 bytes.
    func url(_ key: String) throws -> URL {
        let name = key.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? key
        if name.isEmpty { throw DepotError.invalidKey(detail: "a FileRepository key must not be empty") }
        if name.utf8.count > 255 {
            throw DepotError.invalidKey(detail: "a FileRepository key is a file name: at most 255 bytes once percent-encoded (this one has \(name.utf8.count))")
        }
        return folder.appendingPathComponent(name)
    }

    public func load(_ key: String) throws -> [UInt8]? {
        FileManager.default.contents(atPath: try url(key).path).map { [UInt8]($0) }
    }

    public func save(_ bytes: [UInt8]?, forKey key: String) throws {
        let file = try url(key)
        if let bytes { try Data(bytes).write(to: file, options: .atomic) } else { try? FileManager.default.removeItem(at: file) }
    }

    public func observe(_ key: String, _ handler: @escaping @Sendable () -> Void) throws -> AnyObject? {
        let poller = Poller(path: try url(key).path, interval: interval, handler: handler)
        poller.start()
        return poller
    }

    final class Poller: @unchecked Sendable {
        // @unchecked Sendable: `stopped` and `stamp` are touched by the polling thread and deinit under `lock`.
        let path: String, interval: Double, handler: @Sendable () -> Void
        let lock = NSLock()
        var stopped = false
        var stamp: Date?
        init(path: String, interval: Double, handler: @escaping @Sendable () -> Void) {
            self.path = path; self.interval = interval; self.handler = handler
            stamp = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
        }
        func start() {
            Thread { [weak self] in
                while let self, !self.lock.withLock({ self.stopped }) {
                    Thread.sleep(forTimeInterval: self.interval)
                    let now = (try? FileManager.default.attributesOfItem(atPath: self.path))?[.modificationDate] as? Date
                    let changed = self.lock.withLock { () -> Bool in
                        defer { self.stamp = now }
                        return now != self.stamp
                    }
                    if changed { self.handler() }
                }
            }.start()
        }
        deinit { lock.withLock { stopped = true } }
    }
}

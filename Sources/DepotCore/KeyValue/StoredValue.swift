/// A property wrapper over one typed key of a key/value store, for app code (Defaults'
/// `@Default`): reading returns the stored value or the key's default; setting writes it.
///
/// ```swift
/// struct Preferences {
///     @StoredValue var volume: Int
///     @StoredValue var nickname: String?
///     init(kv: KeyValueStore) {
///         _volume = StoredValue(.volume, in: kv)
///         _nickname = StoredValue(.nickname, in: kv)
///     }
/// }
/// let preferences = Preferences(kv: store.keyValue())
/// preferences.volume = 7           // saved at once
/// try preferences.$volume.save()   // with `saveOnSet: false`, saves when you say
/// preferences.$volume.reset()      // back to the default
/// ```
///
/// With `saveOnSet` (the default), each set is saved at once; if the save fails the value stays
/// unsaved in the store's memory (a later ``KeyValueStore/save()`` retries it) and the error is
/// logged through the store's driver logger. With `saveOnSet: false`, sets stay in memory until
/// saved, like the store's subscripts.
///
/// `Sendable`: its fields are immutable and Sendable (``KeyValueStore`` guards its own state).
@propertyWrapper
public struct StoredValue<Value: Codable & Sendable>: Sendable {
    /// The key the value is stored under.
    public let key: KeyValueKey<Value>
    /// The store the value is kept in.
    public let keyValueStore: KeyValueStore
    /// Whether each set is saved at once.
    public let saveOnSet: Bool

    /// Binds to `key` in `store`.
    public init(_ key: KeyValueKey<Value>, in store: KeyValueStore, saveOnSet: Bool = true) {
        self.key = key
        self.keyValueStore = store
        self.saveOnSet = saveOnSet
    }

    /// The stored value, or the key's default.
    public var wrappedValue: Value {
        get { keyValueStore[key] }
        nonmutating set {
            keyValueStore[key] = newValue
            if saveOnSet { saveLogging() }
        }
    }

    /// The wrapper itself (`$name`): ``save()``, ``reset()``, ``key``.
    public var projectedValue: StoredValue<Value> { self }

    /// Writes the unsaved value now.
    public func save() throws { try keyValueStore.save(key) }

    /// Deletes the stored value, so the key reads its default again (saved at once with
    /// `saveOnSet`, else at the next save).
    public func reset() {
        keyValueStore.reset(key)
        if saveOnSet { saveLogging() }
    }

    private func saveLogging() {
        do {
            try keyValueStore.save(key)
        } catch {
            keyValueStore.store.driver.logger.log(.error, "stored value: saving '\(key.name)' failed; it stays unsaved in memory",
                                                  metadata: ["error": "\(error)"], source: "Depot")
        }
    }
}

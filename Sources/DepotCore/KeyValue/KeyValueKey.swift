/// A typed key for the key/value kit, in the manner of the Defaults library: a name, a value
/// type and a default value, declared once and used everywhere.
///
/// ```swift
/// extension KeyValueKey {
///     static var volume: KeyValueKey<Int> { .init("volume", default: 5) }
///     static var nickname: KeyValueKey<String?> { .init("nickname") }
/// }
/// let kv = store.keyValue()
/// kv[.volume] += 1                 // 6: the default when absent, never nil
/// try kv.save(.volume)
/// kv.reset(.volume)                // back to the default at the next save
/// ```
///
/// The value is stored under ``name`` exactly as the string-keyed API stores it, so
/// `kv[.volume]` and `kv["volume"] as Int?` read the same record.
public struct KeyValueKey<Value: Codable & Sendable>: Sendable {
    /// The string key the value is stored under.
    public let name: String
    /// The value read when the key is absent (or holds a value that does not decode as `Value`).
    public let defaultValue: Value

    /// A key named `name` whose value is `defaultValue` until one is stored.
    public init(_ name: String, default defaultValue: Value) {
        self.name = name
        self.defaultValue = defaultValue
    }

    /// A key for an optional value: nil until one is stored.
    public init<Wrapped>(_ name: String) where Value == Wrapped? {
        self.name = name
        self.defaultValue = nil
    }
}

extension KeyValueStore {
    /// The value under `key`: from the cache, else from disk, else `key.defaultValue` (also when
    /// the stored value does not decode as `Value`). Setting keeps the value in memory until
    /// ``save()`` (or ``save(_:)-(KeyValueKey<Value>)``); setting nil for an optional value
    /// deletes the key at the next save.
    public subscript<Value>(key: KeyValueKey<Value>) -> Value {
        get { (try? value(for: key)) ?? key.defaultValue }
        set {
            if let optional = newValue as? any OptionalValue, optional.isNone {
                set(Value?.none, forKey: key.name)
            } else {
                set(newValue, forKey: key.name)
            }
        }
    }

    /// The value under `key`, or `key.defaultValue` when absent.
    ///
    /// - Throws: a decoding error naming the key when the stored value is not a `Value`.
    public func value<Value>(for key: KeyValueKey<Value>) throws -> Value {
        // A stored nil optional is never written (it deletes the key), so absent means default.
        try value(forKey: key.name, as: Value.self) ?? key.defaultValue
    }

    /// Whether a value that decodes as `Value` is stored (or set and unsaved) under `key`.
    public func hasValue<Value>(for key: KeyValueKey<Value>) -> Bool {
        (try? value(forKey: key.name, as: Value.self)) != nil
    }

    /// Marks `key` for deletion at the next save: it then reads its default again.
    public func reset<Value>(_ key: KeyValueKey<Value>) {
        set(Value?.none, forKey: key.name)
    }

    /// Writes the unsaved value of `key` (if any).
    public func save<Value>(_ key: KeyValueKey<Value>) throws {
        try save(key.name)
    }
}

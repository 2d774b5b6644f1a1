#if Postgres
import Foundation

/// Values of keys that every write reads and that rarely change (the document layer's schema
/// version), as the driver's transactions last read them, by keyspace ID and key — or that the
/// key was absent (a store whose collections never changed their schema has no version key:
/// its writes take that absence on trust as well). Only a hint:
/// a write that takes one on trust checks it before it commits (see
/// ``PostgresTransaction/stableValue(forKey:in:)``), and a failed check or a write of the key
/// by this driver forgets it.
/// `@unchecked Sendable`: `values` is only touched under `lock` (as in ``KeyspaceCache``).
final class StableValues: @unchecked Sendable {
    private struct Entry: Hashable {
        var keyspace: Int32
        var key: [UInt8]
    }

    /// What was read of a key: its value, or nil when it was absent.
    struct Seen {
        let value: [UInt8]?
    }

    private let lock = NSLock()
    private var values: [Entry: Seen] = [:]

    /// What was last read of `key`, or nil when nothing is kept.
    func seen(keyspace: Int32, key: [UInt8]) -> Seen? {
        lock.withLock { values[Entry(keyspace: keyspace, key: key)] }
    }

    /// Keeps `value` (nil: absent) as what `key` holds.
    func store(_ value: [UInt8]?, keyspace: Int32, key: [UInt8]) {
        lock.withLock { values[Entry(keyspace: keyspace, key: key)] = Seen(value: value) }
    }

    func forget(keyspace: Int32, key: [UInt8]) {
        lock.withLock { values[Entry(keyspace: keyspace, key: key)] = nil }
    }

    /// Forgets `key` of `keyspace` if it is kept (a write of it); cheap when nothing of that
    /// keyspace is kept.
    func forget(keyspace: Int32, key: UnsafeRawBufferPointer) {
        lock.withLock {
            guard values.keys.contains(where: { $0.keyspace == keyspace && $0.key.elementsEqual(key) }) else { return }
            values[Entry(keyspace: keyspace, key: [UInt8](key))] = nil
        }
    }
}
#endif

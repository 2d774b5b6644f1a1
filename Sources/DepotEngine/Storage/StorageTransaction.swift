
/// One ordered keyspace (byte keys → byte values) of a storage backend, as the document layer
/// sees it. For LMDB a keyspace is a named database and `handle` its `MDB_dbi`; other drivers
/// give `handle` whatever meaning they like.
public struct Keyspace: Hashable, Sendable {
    /// The keyspace's name.
    public let name: String
    /// The driver's handle for it.
    public let handle: UInt32
    /// Creates a keyspace value (drivers do this).
    public init(name: String, handle: UInt32) {
        self.name = name
        self.handle = handle
    }
}

/// The narrow interface through which the document layer reaches storage: keyspaces with
/// get, put, delete and ordered scans inside a transaction, plus savepoints and an after-commit
/// hook. LMDB's `Transaction` (`DepotLMDB`) is the default implementation; keys and values are lent as
/// buffers so that the hot path copies nothing.
///
/// Errors: an operation throws its driver's error wrapped, as ``DepotError/storage(_:)`` makes
/// it (code `storage`, the driver's error as ``DepotError/underlyingError``), so that code inside
/// a transaction closure catches ``DepotError`` only — the LMDB and PostgreSQL drivers do; the
/// store wraps whatever else reaches it when the transaction ends.
public protocol StorageTransaction: AnyObject {
    var isReadOnly: Bool { get }
    /// The longest key a keyspace accepts, in bytes (LMDB: the environment's limit, 511 by
    /// default; other drivers: 511 unless they say otherwise).
    var maxKeySize: Int { get }
    /// How many savepoints are open (0 at the top level).
    var nestingDepth: Int { get }
    /// State the document layer keeps for the transaction's lifetime. It refers back to the
    /// transaction: a driver sets it to nil when the transaction ends (the document layer also
    /// does for its closure-scoped transactions), or the two keep each other alive.
    var attachment: AnyObject? { get set }
    /// Runs after a successful top-level commit. A driver lets go of its handlers once they ran
    /// or the transaction rolled back: they capture state that refers back to the transaction.
    func afterCommit(_ handler: @escaping () -> Void)
    /// The keyspace `name`, created if `create`; nil when absent and not created. A `multiValue`
    /// keyspace keeps several sorted values per key (LMDB's dupSort; values ≤ 511 bytes).
    func keyspace(named name: String, create: Bool, multiValue: Bool) throws -> Keyspace?
    /// Calls `body` with the value under `key` (valid only during the call); nil when absent.
    func withValue<R>(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R?
    /// Calls `body` with the value under `key` (valid only during the call) and returns true;
    /// returns false when absent. The same as ``withValue(forKey:in:_:)``, without generics:
    /// the document layer's hot read path.
    func readValue(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool
    /// Stores `value` under `key` only when the key is absent; when it is present, stores nothing,
    /// calls `existing` with the stored value (valid only during the call) and returns false.
    /// The document layer's insert path (LMDB: one B-tree descent either way).
    func putIfAbsent(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace,
                     existing: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool
    /// The document layer's insert of a record it expects to be new:
    /// ``putIfAbsent(_:forKey:in:existing:)``, except that a driver whose answers cost a round
    /// trip may return true at once, before it knows, and go on as if the key was absent. It
    /// must then make sure that a transaction in which the key turns out to be present never
    /// commits: the transaction fails (before or at `COMMIT`) and the driver's `write` runs the
    /// closure again, where this call answers like ``putIfAbsent(_:forKey:in:existing:)``. So
    /// the answer a committed transaction acted on is always the true one. The default calls
    /// ``putIfAbsent(_:forKey:in:existing:)``.
    func putExpectingAbsent(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace,
                            existing: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool
    /// Stores `value` under `key`.
    func put(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws
    /// Deletes `key` (all its values); returns whether it was present.
    func delete(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws -> Bool
    /// Deletes one value of a key of a multi-value keyspace; returns whether it was present.
    func delete(forKey key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, in keyspace: Keyspace) throws -> Bool
    /// Visits entries in key order (or reverse): keys from `lower` (included) to `upper`
    /// (excluded), only those starting with `prefix` when given; `body` returns false to stop.
    func scan(_ keyspace: Keyspace, lower: [UInt8]?, upper: [UInt8]?, prefix: [UInt8]?, reverse: Bool,
              _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws
    /// Number of entries.
    func count(_ keyspace: Keyspace) throws -> Int
    /// Deletes every entry, keeping the keyspace.
    func clear(_ keyspace: Keyspace) throws
    /// Deletes the keyspace itself.
    func drop(_ keyspace: Keyspace) throws
    /// Runs `body` as a savepoint: undone alone when it throws.
    func savepoint<R>(_ body: () throws -> R) throws -> R
    /// Whether `keyspace`, obtained in an earlier transaction of the same store, still names the
    /// same keyspace in this one (LMDB: the same database handle, usable in this transaction).
    /// The document layer keeps resolved keyspaces across read transactions and checks them
    /// with this.
    func isCurrent(_ keyspace: Keyspace) -> Bool
    /// Identifies the driver's keyspace handles as they are now: while it is unchanged, every
    /// handle that ``isCurrent(_:)`` accepted before is current. nil: unknown (check each).
    var keyspaceHandlesVersion: Int? { get }
    /// Identifies the committed state a read transaction sees: two read transactions with the
    /// same value see the same data (LMDB: the snapshot's transaction ID). nil: unknown.
    var snapshotID: UInt64? { get }
    /// The number a write transaction commits as, from a sequence that grows with each commit
    /// (LMDB: the new snapshot's transaction ID), so that change sets can be put in commit
    /// order; nil: unknown, or a read transaction.
    var commitID: UInt64? { get }
    /// For a driver whose writers commit side by side (a database server): a number for this
    /// write transaction's change-log entry, from a sequence that readers follow up to
    /// ``changeLogHorizon()`` without missing one that commits later (PostgreSQL: the
    /// transaction ID). nil (the default): entries are numbered by the store's counter, which is
    /// exact where writers commit one at a time (LMDB) but makes every logging writer write one
    /// shared row.
    func changeLogStamp() throws -> UInt64?
    /// Puts `value` as this write transaction's change-log entry in `keyspace`, under the key
    /// ``changeLogStamp()`` gives (8 bytes, big-endian); false (nothing put) when the driver
    /// gives no stamps. A driver may let the server write the key (PostgreSQL: the transaction
    /// ID, in the statement that inserts the entry), so that the write need not wait for the
    /// stamp first. The default puts it under ``changeLogStamp()``.
    func appendChangeLogEntry(_ value: [UInt8], in keyspace: Keyspace) throws -> Bool
    /// In a read transaction of a driver with ``changeLogStamp()``: the stamp below which every
    /// writing transaction has ended (committed or rolled back), so that the change-log entries
    /// below it are all there is to read. nil when the driver gives no stamps.
    func changeLogHorizon() throws -> UInt64?
    /// The value under `key` (a copy; nil when absent), for a key that every write reads and
    /// that rarely changes: the document layer's schema version. A driver whose reads cost a
    /// round trip may answer with the value it saw last, without a read, and check later in
    /// the same transaction, before it commits, that the key still holds it (locked so that no
    /// other writer can change it before this transaction ends); when it does not, the write
    /// fails as retryable and runs again, and the driver reads the key afresh then. The default
    /// reads it with ``withValue(forKey:in:_:)``.
    func stableValue(forKey key: [UInt8], in keyspace: Keyspace) throws -> [UInt8]?
    /// Deletes `key` (all its values) where the caller needs no answer: a driver whose answers
    /// cost a round trip may send it without waiting (its failure then fails the transaction,
    /// before or at `COMMIT`). The default calls ``delete(forKey:in:)``.
    func deleteIfPresent(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws
    /// Deletes one value of a key of a multi-value keyspace where the caller needs no answer
    /// (see ``deleteIfPresent(forKey:in:)``). The default calls ``delete(forKey:value:in:)``.
    func deleteIfPresent(forKey key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, in keyspace: Keyspace) throws
}

extension StorageTransaction {
    /// Deletes through ``delete(forKey:in:)``, discarding its answer.
    public func deleteIfPresent(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws {
        _ = try delete(forKey: key, in: keyspace)
    }

    /// Deletes through ``delete(forKey:value:in:)``, discarding its answer.
    public func deleteIfPresent(forKey key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, in keyspace: Keyspace) throws {
        _ = try delete(forKey: key, value: value, in: keyspace)
    }

    /// No stamps: the change log is numbered by the store's counter.
    public func changeLogStamp() throws -> UInt64? { nil }
    /// The entry under ``changeLogStamp()``, when the driver gives stamps.
    public func appendChangeLogEntry(_ value: [UInt8], in keyspace: Keyspace) throws -> Bool {
        try putUnderChangeLogStamp(value, in: keyspace)
    }

    /// Puts `value` under ``changeLogStamp()`` (8 bytes, big-endian) through ``put(_:forKey:in:)``;
    /// false when the driver gives no stamps.
    package func putUnderChangeLogStamp(_ value: [UInt8], in keyspace: Keyspace) throws -> Bool {
        guard let stamp = try changeLogStamp() else { return false }
        try BigEndian<UInt64>.withBytes(of: stamp) { key in try value.withUnsafeBytes { try put($0, forKey: key, in: keyspace) } }
        return true
    }
    /// No stamps, no horizon.
    public func changeLogHorizon() throws -> UInt64? { nil }
    /// A read: ``withValue(forKey:in:_:)``.
    public func stableValue(forKey key: [UInt8], in keyspace: Keyspace) throws -> [UInt8]? {
        try get(key, in: keyspace)
    }

    /// Drivers whose keyspace handles never go stale (names, or handles that stay valid for
    /// the store's lifetime) need not implement ``isCurrent(_:)``.
    public func isCurrent(_ keyspace: Keyspace) -> Bool { true }
    /// Unknown by default: ``isCurrent(_:)`` is asked for each handle.
    public var keyspaceHandlesVersion: Int? { nil }
    /// Unknown by default: every read transaction reads what it needs afresh.
    public var snapshotID: UInt64? { nil }
    /// Unknown by default.
    public var commitID: UInt64? { nil }

    /// 511 bytes, LMDB's default limit (``StorageLimits/standardMaxKeySize``; drivers with
    /// another limit implement the requirement).
    public var maxKeySize: Int { StorageLimits.standardMaxKeySize }

    /// In terms of ``readValue(forKey:in:_:)`` and ``put(_:forKey:in:)``.
    public func putIfAbsent(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace,
                            existing: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        if try readValue(forKey: key, in: keyspace, existing) { return false }
        try put(value, forKey: key, in: keyspace)
        return true
    }

    /// Waits for the answer: ``putIfAbsent(_:forKey:in:existing:)``.
    public func putExpectingAbsent(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace,
                                   existing: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        try putIfAbsent(value, forKey: key, in: keyspace, existing: existing)
    }

    /// In terms of ``withValue(forKey:in:_:)``.
    public func readValue(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace,
                          _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        try withValue(forKey: key, in: keyspace) { try body($0); return true } ?? false
    }

    @inlinable package func keyspace(named name: String, create: Bool) throws -> Keyspace? {
        try keyspace(named: name, create: create, multiValue: false)
    }
    @inlinable package func scan(_ keyspace: Keyspace, prefix: [UInt8]?, reverse: Bool, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try scan(keyspace, lower: nil, upper: nil, prefix: prefix, reverse: reverse, body)
    }
    @inlinable package func put(_ value: [UInt8], forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws {
        try value.withUnsafeBytes { try put($0, forKey: key, in: keyspace) }
    }
    @inlinable package func withValue<R>(forKey key: [UInt8], in keyspace: Keyspace, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try key.withUnsafeBytes { try withValue(forKey: $0, in: keyspace, body) }
    }
    /// A copy of the value under `key`; nil when absent.
    @inlinable package func get(_ key: [UInt8], in keyspace: Keyspace) throws -> [UInt8]? {
        try withValue(forKey: key, in: keyspace) { [UInt8]($0) }
    }
    @inlinable package func put(_ value: [UInt8], forKey key: [UInt8], in keyspace: Keyspace) throws {
        try value.withUnsafeBytes { v in try key.withUnsafeBytes { k in try put(v, forKey: k, in: keyspace) } }
    }
    @inlinable package func delete(forKey key: [UInt8], in keyspace: Keyspace) throws -> Bool {
        try key.withUnsafeBytes { try delete(forKey: $0, in: keyspace) }
    }
    /// Entries whose keys start with `prefix`, copied.
    @inlinable package func entries(_ keyspace: Keyspace, prefix: [UInt8]) throws -> [(key: [UInt8], value: [UInt8])] {
        var result: [(key: [UInt8], value: [UInt8])] = []
        try scan(keyspace, prefix: prefix, reverse: false) { k, v in result.append(([UInt8](k), [UInt8](v))); return true }
        return result
    }
}

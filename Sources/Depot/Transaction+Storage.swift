import DepotCore
import DepotLMDB

/// An LMDB transaction is a storage transaction: keyspaces are named databases (their `dbi` is
/// the handle), entries are LMDB's, savepoints are child transactions.
/// Every operation's `LMDBError` reaches the document layer as a ``DepotError`` with code
/// `storage` (see `storage(_:)`).
extension Transaction: StorageTransaction {
    public func isCurrent(_ keyspace: Keyspace) -> Bool { isCurrentDatabase(named: keyspace.name, dbi: keyspace.handle) }
    public var keyspaceHandlesVersion: Int? { databaseHandlesVersion }
    public var snapshotID: UInt64? { isReadOnly && isActive ? UInt64(id) : nil }
    /// A write transaction commits as the snapshot after the one it began on (`mdb_txn_id`).
    public var commitID: UInt64? { !isReadOnly && isActive ? UInt64(id) : nil }

    private func database(_ keyspace: Keyspace) -> Database<RawBytesCodec, RawBytesCodec> {
        Database(handle: keyspace.handle, name: keyspace.name, flags: [], maxKeySize: maxKeySize)
    }

    public func keyspace(named name: String, create: Bool, multiValue: Bool) throws -> Keyspace? {
        do {
            let db = try ownDatabases {
                try openDatabase(name, key: RawBytesCodec.self, value: RawBytesCodec.self,
                                 flags: multiValue ? .dupSort : [], create: create && !isReadOnly)
            }
            return Keyspace(name: name, handle: db.dbi)
        } catch LMDBError.notFound {
            return nil
        } catch let error as LMDBError {
            throw DepotError.storage(error)
        }
    }

    public func withValue<R>(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try storage { try withValue(forKey: key, in: database(keyspace), body) }
    }

    public func readValue(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace,
                          _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        try storage { try withRawValue(forKey: key, dbi: keyspace.handle, database: keyspace.name, body) }
    }

    public func putIfAbsent(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace,
                            existing: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        try storage { try ownDatabases { try putIfAbsent(value, forKey: key, in: database(keyspace), existing: existing) } }
    }

    /// LMDB answers at once: ``putIfAbsent(_:forKey:in:existing:)``.
    public func putExpectingAbsent(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace,
                                   existing: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        try putIfAbsent(value, forKey: key, in: keyspace, existing: existing)
    }

    public func put(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws {
        try storage { try ownDatabases { try put(value, forKey: key, in: database(keyspace), flags: []) } }
    }

    public func delete(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws -> Bool {
        try storage { try ownDatabases { try delete(key, in: database(keyspace)) } }
    }

    public func delete(forKey key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, in keyspace: Keyspace) throws -> Bool {
        try storage { try ownDatabases { try delete(key, value: value, in: database(keyspace)) } }
    }

    public func scan(_ keyspace: Keyspace, lower: [UInt8]?, upper: [UInt8]?, prefix: [UInt8]?, reverse: Bool,
              _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        let db = database(keyspace).raw
        let range = KeyRange<[UInt8]>(lower: lower.map { .init(key: $0, inclusive: true) },
                                      upper: upper.map { .init(key: $0, inclusive: false) }, prefix: prefix)
        try storage { try forEachRaw(in: db, range: range, reverse: reverse, body) }
    }

    public func count(_ keyspace: Keyspace) throws -> Int { try storage { try count(database(keyspace)) } }
    public func clear(_ keyspace: Keyspace) throws { try storage { try ownDatabases { try clear(database(keyspace)) } } }
    public func drop(_ keyspace: Keyspace) throws { try storage { try ownDatabases { try drop(database(keyspace)) } } }
    public func savepoint<R>(_ body: () throws -> R) throws -> R { try storage { try nested { _ in try body() } } }
}

/// Runs `body`, turning an `LMDBError` into a ``DepotError`` with code `storage` (which
/// `catch LMDBError.<code>` still matches); other errors pass as they are.
@inline(__always)
func storage<R>(_ body: () throws -> R) throws -> R {
    do {
        return try body()
    } catch let error as LMDBError {
        throw DepotError.storage(error)
    }
}

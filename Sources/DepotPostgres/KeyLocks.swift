#if Postgres
import Foundation

/// The server-side locks of a `READ COMMITTED` write (``PostgresConfiguration/WriteIsolation/readCommitted``):
/// strict two-phase locking on keys, with PostgreSQL's transaction-level advisory locks (held
/// until `COMMIT` or `ROLLBACK`, so a crashed or vanished client releases them with its session).
///
/// - A point read takes a **shared** lock on its key, then reads: under `READ COMMITTED` the
///   read's snapshot is taken after the lock is granted, so it sees the last committed value,
///   and nobody can change that key before this transaction ends. A read of an absent key locks
///   it too (what `SERIALIZABLE` needs a predicate lock on a whole B-tree page for).
/// - A write takes an **exclusive** lock on its key (after a shared lock on its keyspace).
/// - A scan or count takes an **exclusive** lock on the whole keyspace, which every writer of
///   that keyspace holds shared: no writer of it commits while the scan's transaction runs, so
///   a range read is never changed under it (no phantoms).
/// - In a multi-value keyspace a reader of a key locks the key exclusively and a writer of
///   (key, value) locks the key shared and the pair exclusively: writers of different values
///   under one key (documents sharing an index value) do not block each other.
///
/// Transactions touching different keys never wait for or fail each other; two that read and
/// then write the same key can deadlock, and PostgreSQL cancels one (40P01), which is retried.
/// To keep counters and other keys read-then-written by every writer (Depot's `uid/next`,
/// `changelog/next`) from deadlocking each time, the driver remembers keys one of its writes
/// read and then wrote (``Hot``): later writes read them with an exclusive lock straight away,
/// and queue instead of deadlocking.
/// Key locks are 64-bit hashes (FNV-1a of the schema, keyspace id, key and value): a collision
/// costs waiting, never correctness.
struct KeyLocks: Sendable {
    /// Keys (lock ids) that a write of this driver read and then wrote. `@unchecked Sendable`:
    /// `ids` is only touched under `lock`.
    final class Hot: @unchecked Sendable {
        private let lock = NSLock()
        private var ids: Set<Int64> = []
        /// How many are remembered; past it the set starts over (a forgotten key costs one
        /// more deadlock, never correctness).
        static let capacity = 4096

        func contains(_ id: Int64) -> Bool { lock.withLock { ids.contains(id) } }

        func insert(_ id: Int64) {
            lock.withLock {
                if ids.count >= Self.capacity { ids.removeAll(keepingCapacity: true) }
                ids.insert(id)
            }
        }
    }

    /// The keys read-then-written by this driver's writes.
    let hot = Hot()

    /// Hash seed of the schema (advisory locks are per database, schemas share them).
    private let seed: UInt64
    /// The schema's class id for keyspace locks (the two-int4 form, a lock space apart from
    /// the bigint key locks).
    private let schemaClass: Int32

    init(schema: String) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in schema.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        seed = hash
        schemaClass = Int32(truncatingIfNeeded: hash >> 32)
    }

    /// The lock id of `key` (and `value`, for a pair of a multi-value keyspace) in `keyspace`.
    func id(keyspace: Int32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer? = nil) -> Int64 {
        var hash = seed
        func mix(_ byte: UInt8) { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        withUnsafeBytes(of: keyspace.bigEndian) { for byte in $0 { mix(byte) } }
        mix(value == nil ? 0 : 1)
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: key.count).bigEndian) { for byte in $0 { mix(byte) } }
        for byte in key { mix(byte) }
        if let value { for byte in value { mix(byte) } }
        return Int64(bitPattern: hash)
    }

    /// The statement taking the key lock `id`.
    static func key(_ id: Int64, exclusive: Bool) -> Statement {
        Statement(prepared: exclusive ? "SELECT pg_advisory_xact_lock($1::bigint)" : "SELECT pg_advisory_xact_lock_shared($1::bigint)", .of(id))
    }

    /// The statement taking the lock of a whole keyspace.
    func keyspace(_ keyspace: Int32, exclusive: Bool) -> Statement {
        let function = exclusive ? "pg_advisory_xact_lock" : "pg_advisory_xact_lock_shared"
        let (space, id) = keyspaceLockKey(keyspace)
        return Statement(prepared: "SELECT \(function)($1::int, $2::int)", .of(space, id))
    }

    /// The two int4 keys of the lock of `keyspace` (for statements that take it with another).
    func keyspaceLockKey(_ keyspace: Int32) -> (Int32, Int32) { (schemaClass, keyspace) }
}
#endif

#if Postgres
/// A key of a single-value keyspace, as ``PostgresTransaction/lockedValues`` keeps the values
/// read under their lock: compared by its bytes (a lock ID is a hash, which two keys can share).
struct LockedValue: Hashable {
    let keyspace: Int32
    let key: [UInt8]

    init(_ keyspace: Int32, _ key: UnsafeRawBufferPointer) {
        self.keyspace = keyspace
        self.key = [UInt8](key)
    }

    /// At most this many values per write.
    static let limit = 64
    /// Values larger than this are not kept.
    static let largest = 65_536
}
#endif

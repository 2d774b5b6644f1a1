import Foundation

/// Persistent unique 64-bit IDs (DLData's unique ID generator).
///
/// Each ID is handed out once, ever: the counter lives in the store's meta database and moves
/// forward in write transactions. IDs from one generator increase; IDs are allocated in blocks
/// (``blockSize``) to make ``next()`` cheap, so IDs handed to different processes interleave and a
/// crash skips the rest of a block — never reusing one. Use `DocumentTransaction.nextUniqueID()`
/// inside a write transaction: an ID it returns in a transaction that then rolls back is not
/// handed out again by this process (the counter in the file moves back with the rollback, so
/// another process may hand it out; use ``next()`` for IDs that leave the process before the
/// transaction commits).
public final class UniqueIDs: @unchecked Sendable {
    // @unchecked Sendable: `nextID`/`end` are guarded by `lock`; `core` is weak (the core owns the generator).
    static let counterKey = StoreLayout.uniqueIDCounterKey
    private weak var core: EngineCore?
    /// IDs reserved per write transaction.
    public let blockSize: UInt64
    private let lock = NSLock()
    private var nextID: UInt64 = 0
    private var end: UInt64 = 0
    /// Past every ID this process handed out, committed or not (guarded by `handedOutLock`,
    /// held only briefly: ``next()`` holds `lock` across a write transaction, and a write
    /// transaction allocating IDs must not wait for it). An ID allocated in a transaction that
    /// rolled back is not handed out again: the stored counter moves back, this does not.
    private var handedOut: UInt64 = 0
    private let handedOutLock = NSLock()

    init(core: EngineCore, blockSize: UInt64) {
        self.core = core
        self.blockSize = max(1, blockSize)
    }

    /// A new unique ID. Call it outside write transactions (it may run one to reserve a block).
    public func next() throws -> UInt64 {
        try lock.withLock {
            if nextID == end {
                guard let core else { throw DepotError.ownerReleased("the store of this unique-ID generator was released") }
                let start = try core.write { txn in try allocate(count: blockSize, in: txn) }
                nextID = start
                end = start + blockSize
            }
            defer { nextID += 1 }
            return nextID
        }
    }

    /// A new unique ID as 20 decimal digits, zero-padded, so string order is numeric order.
    public func nextString() throws -> String { Self.string(for: try next()) }

    /// The string form of an ID.
    package static func string(for id: UInt64) -> String {
        let digits = String(id)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }

    /// Reserves `count` IDs in the write transaction `txn` and returns the first: past both the
    /// stored counter and every ID this process handed out before (so a rolled-back
    /// transaction's IDs are not handed out again by this process).
    package func allocate(count: UInt64, in txn: any StorageTransaction) throws -> UInt64 {
        // The lock is not held across the storage's reads and writes (a driver whose writers
        // run side by side may make this wait for another transaction's commit).
        let floor = handedOutLock.withLock { handedOut }
        let first = try Self.allocate(count: count, in: txn, atLeast: floor)
        handedOutLock.withLock { handedOut = max(handedOut, first &+ count) }
        return first
    }

    /// Reserves `count` IDs in a write transaction, none below `floor`, and returns the first.
    private static func allocate(count: UInt64, in txn: any StorageTransaction, atLeast floor: UInt64) throws -> UInt64 {
        if txn.isReadOnly { throw DepotError(code: .readOnlyTransaction, message: "unique IDs are allocated in write transactions") }
        guard let meta = try txn.keyspace(named: StoreLayout.metaDatabase, create: true) else {
            throw DepotError.storageInconsistent("the store's meta data is missing")
        }
        let current = max(try txn.withValue(forKey: counterKey, in: meta) { try BigEndian<UInt64>.decode($0) } ?? 1, floor)
        let (after, overflow) = current.addingReportingOverflow(count)
        if overflow { throw DepotError.exhausted("the unique ID counter is exhausted") }
        try BigEndian<UInt64>.withBytes(of: after) { v in
            try counterKey.withUnsafeBytes { k in try txn.put(v, forKey: k, in: meta) }
        }
        return current
    }
}

import CDepotAtomic
import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Environment {
    /// An immutable copy of the database-handle cache (`Environment.databaseCache`), published
    /// for transactions that look a database up without the lock.
    ///
    /// **Reclamation.** Every change to the cache (a database opened, created or dropped)
    /// publishes a new copy; the one it replaces is *retired* and freed as soon as no look-up
    /// can still be reading it, so an application that creates and drops databases again and
    /// again keeps one copy (a few at most), not one per change. A look-up
    /// (`Environment.publishedDatabase(_:)`) brackets its use of a copy with a count on its
    /// thread's stripe of the ``TransactionGate`` (`TransactionGate.enterLookup()` and
    /// `exitLookup(_:)`):
    ///
    /// 1. the reader adds one to its stripe's look-up count;
    /// 2. it loads the published pointer and copies the record it wants out of that copy;
    /// 3. it subtracts one from the count.
    ///
    /// The publisher (holding `databaseLock`, so one at a time) stores the new pointer, retires
    /// the old copy, then visits every stripe until it sees its look-up count at zero
    /// (`TransactionGate.waitForLookups(within:)`); when every stripe was seen idle, it frees the
    /// retired copies. All these accesses are sequentially consistent, so they fall into one
    /// total order that agrees with each thread's program order. A look-up that loaded a retired
    /// copy loaded it before the store that replaced it, and added to its count before that:
    /// its count is visible to the publisher's later visit, unless its subtraction came first,
    /// and that subtraction (a release, read by the visit) orders the look-up's reads before
    /// the free. A look-up that adds to its count after the visit saw zero loads the pointer
    /// after the store, so it gets the new copy (or a later one), never a retired one. Hence a
    /// copy is freed only when every look-up that could have loaded it has finished.
    ///
    /// The visit waits a little (look-ups are a dictionary search: nanoseconds, and they take
    /// no lock, so one never waits for the publisher); if a stripe stays busy past that (a thread
    /// preempted in the middle of a look-up, or threads sharing a stripe that look up without
    /// pause), the retired copies stay until a later publication finds every stripe idle.
    ///
    /// **Cost on the read path:** two atomic additions on the calling thread's own stripe (the
    /// cache line its reader registration already writes, shared with no other thread while
    /// fewer than ``TransactionGate/stripeCount`` threads read): no lock, and no write to memory
    /// other threads use. Retaining the copy instead would write its reference count, one cache
    /// line shared by every reading thread; counting on the transaction-long reader
    /// registration would let one long read transaction keep every copy published meanwhile.
    ///
    /// **Version.** Freed copies' addresses may be reused, so a copy's identity cannot tell
    /// the handle tables apart: ``version`` counts the publications instead (see
    /// `Transaction.databaseHandlesVersion`), and is stored where readers load it without
    /// dereferencing a copy, after the pointer, so that a reader that read a version then finds
    /// that copy or a later one.
    final class DatabaseCacheSnapshot: Sendable {
        /// Database handles by name, as in `Environment.databaseCache`.
        let records: [String: DatabaseRecord]
        /// The number of this publication: 1 for the first, one more for each next one.
        let version: Int

        init(_ records: [String: DatabaseRecord], version: Int) {
            self.records = records
            self.version = version
        }
    }

    /// How long a publication waits for the stripes' look-ups to end before leaving the retired
    /// copies to a later one.
    static let snapshotReclaimWaitNanoseconds: UInt64 = 2_000_000

    /// Publishes ``databaseCache`` for lock-free readers and frees the copies no look-up can
    /// still read. The caller holds `databaseLock`.
    func publishDatabaseCache() {
        let snapshot = DatabaseCacheSnapshot(databaseCache, version: (currentDatabaseSnapshot?.version ?? 0) + 1)
        cdepot_atomic_store_pointer_seq_cst(publishedDatabases, Unmanaged.passUnretained(snapshot).toOpaque())
        cdepot_atomic_store(publishedDatabasesVersion, snapshot.version)
        if let previous = currentDatabaseSnapshot { retiredDatabaseSnapshots.append(previous) }
        currentDatabaseSnapshot = snapshot
        if !retiredDatabaseSnapshots.isEmpty && gate.waitForLookups(within: Self.snapshotReclaimWaitNanoseconds) {
            retiredDatabaseSnapshots.removeAll()
        }
    }

    /// How many published copies of the database cache are alive (the current one included);
    /// tests check that it stays bounded.
    package var retainedDatabaseSnapshotCount: Int {
        databaseLock.withLock { retiredDatabaseSnapshots.count + (currentDatabaseSnapshot == nil ? 0 : 1) }
    }

    /// The version of the published database cache (see `Transaction.databaseHandlesVersion`):
    /// it rises with every change and never repeats (0 before the first database is opened).
    var databaseHandlesVersion: Int { cdepot_atomic_load(publishedDatabasesVersion) }

    /// The published handle of database `name`, without the lock (see ``DatabaseCacheSnapshot``
    /// for why the copy read here cannot be freed meanwhile).
    @inline(__always)
    func publishedDatabase(_ name: String) -> DatabaseRecord? {
        let stripe = gate.enterLookup()
        defer { gate.exitLookup(stripe) }
        guard let raw = cdepot_atomic_load_pointer_seq_cst(publishedDatabases) else { return nil }
        return Unmanaged<DatabaseCacheSnapshot>.fromOpaque(raw)._withUnsafeGuaranteedRef { $0.records[name] }
    }
}

extension TransactionGate {
    /// The look-up count of `stripe` (offset 24): look-ups of the published database cache in
    /// progress on the stripe's threads (see `Environment.DatabaseCacheSnapshot`).
    @inline(__always)
    static func lookupCounter(_ stripe: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Int> {
        (stripe + 24).assumingMemoryBound(to: Int.self)
    }

    /// Registers a look-up of the published database cache on the calling thread's stripe;
    /// returns the stripe for ``exitLookup(_:)``.
    @inline(__always)
    func enterLookup() -> UnsafeMutableRawPointer {
        let stripe = currentStripe()
        _ = cdepot_atomic_add(Self.lookupCounter(stripe), 1)
        return stripe
    }

    /// Ends a look-up registered with ``enterLookup()``.
    @inline(__always)
    func exitLookup(_ stripe: UnsafeMutableRawPointer) {
        _ = cdepot_atomic_add(Self.lookupCounter(stripe), -1)
    }

    /// Visits every stripe until it has been seen with no look-up in progress; returns false
    /// when one stayed busy for `nanoseconds` (the caller keeps what it meant to free).
    func waitForLookups(within nanoseconds: UInt64) -> Bool {
        var deadline: UInt64?
        for index in 0..<Self.stripeCount {
            let counter = Self.lookupCounter(stripes + index * Self.stripeStride)
            while cdepot_atomic_load(counter) != 0 {
                let now = monotonicNanoseconds()
                if let deadline, now >= deadline { return false }
                if deadline == nil { deadline = now + nanoseconds }
                sched_yield()
            }
        }
        return true
    }
}

import CDepotAtomic
import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps LMDB's process-local rules for one environment:
///
/// - one write transaction at a time in this process (and no write inside a write on one thread);
/// - `mdb_env_set_mapsize` only while no transaction of this process is active;
/// - no new transaction once the environment is closed, and no close while one is alive;
/// - a reset read transaction kept per reading thread, which `read {}` renews instead of
///   beginning anew.
///
/// **Readers take no lock and share no written memory.** Each thread has a stripe (chosen by
/// ``ThreadIndex``): a cache line with its reader count and its cached reset transaction. A reader
/// adds one to its stripe's count, then reads ``state`` (written only by close and map resizing,
/// so every core keeps it cached); an exclusive request stores ``state`` first, then sums the
/// counts. Both use sequentially consistent atomics, so at least one of the two sees the other
/// (Dekker's argument): a reader that sees the request steps back and waits on the lock, and the
/// requester waits until the counts are zero. Writers, close and resizing use the lock. The
/// stripe also counts look-ups of the published database cache in progress, so that a replaced
/// copy is freed only when none can still read it (see `Environment.DatabaseCacheSnapshot`).
///
/// `@unchecked Sendable`: the stripes and ``state`` are accessed with atomics only; every other
/// stored property is read and written with `lock` held.
@usableFromInline
final class TransactionGate: @unchecked Sendable {
    @usableFromInline let lock = ConditionLock()
    /// Bit ``exclusiveBit``: map resizing, panic recovery or close wants no reader (or a writer
    /// holds new readers back); bit ``closedBit``: closed; the bits above count the times new
    /// readers were held back (see ``readerBeganCleanly(_:)``). Written under `lock` only, read by
    /// readers without it.
    @usableFromInline let state: UnsafeMutablePointer<Int>
    /// ``stripeCount`` stripes of ``stripeStride`` bytes: the reader count (`Int`) at offset 0,
    /// the cached ``Transaction`` (retained, holding a reset `MDB_txn*` in
    /// ``Transaction/pooledHandle``) at offset 8, at offset 16 whether this stripe may cache one,
    /// and at offset 24 the count of look-ups of the published database cache in progress
    /// (see `Environment.DatabaseCacheSnapshot`).
    @usableFromInline let stripes: UnsafeMutableRawPointer
    @usableFromInline static let stripeCount = 64
    @usableFromInline static let stripeStride = 128
    @usableFromInline static let exclusiveBit = 1
    @usableFromInline static let closedBit = 2
    /// The flag bits of ``state``; the rest is the generation of ``holdNewReaders()``.
    @usableFromInline static let flagBits = 3
    @usableFromInline static let generationUnit = 4
    /// The process that opened the environment.
    @usableFromInline let ownerPID: Int32
    /// Set when LMDB reported `MDB_PANIC`: the environment must be reopened before the next
    /// transaction (see `Environment.recoverFromPanicIfNeeded`).
    @usableFromInline var panicked = false
    /// Whether the writer holds new readers back (``holdNewReaders()``).
    private var newReadersHeld = false
    private var writerActive = false
    /// Set by ``abandonWriter()``; guarded by `lock`.
    private var writerAbandoned = false
    private var writerThread = pthread_t(bitPattern: 0)
    private var writersWaiting = 0

    /// `poolLimit`: how many stripes keep a reset read transaction (the threads numbered below it).
    init(poolLimit: Int, ownerPID: Int32) {
        self.ownerPID = ownerPID
        // A cache line of its own: every reader loads it, only close, resizing and drops write it.
        state = UnsafeMutableRawPointer.allocate(byteCount: Self.stripeStride, alignment: Self.stripeStride)
            .initializeMemory(as: Int.self, repeating: 0, count: Self.stripeStride / MemoryLayout<Int>.stride)
        stripes = .allocate(byteCount: Self.stripeCount * Self.stripeStride, alignment: Self.stripeStride)
        stripes.initializeMemory(as: UInt8.self, repeating: 0, count: Self.stripeCount * Self.stripeStride)
        for index in 0..<Self.stripeCount {
            (stripes + index * Self.stripeStride + 16).storeBytes(of: index < poolLimit ? 1 : 0, as: Int.self)
        }
    }

    deinit {
        // Close drained the cached transactions (and aborted their handles); release any left.
        for index in 0..<Self.stripeCount {
            if let cached = cdepot_atomic_exchange_pointer(Self.cachedSlot(stripes + index * Self.stripeStride), nil) {
                Unmanaged<Transaction>.fromOpaque(cached).release()
            }
        }
        state.deallocate()
        stripes.deallocate()
    }

    // MARK: Readers

    /// The calling thread's stripe.
    @inlinable @inline(__always)
    func currentStripe() -> UnsafeMutableRawPointer {
        stripes + (ThreadIndex.current & (Self.stripeCount - 1)) * Self.stripeStride
    }

    @inlinable @inline(__always)
    static func counter(_ stripe: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Int> {
        stripe.assumingMemoryBound(to: Int.self)
    }

    @inlinable @inline(__always)
    static func cachedSlot(_ stripe: UnsafeMutableRawPointer) -> UnsafeMutablePointer<UnsafeMutableRawPointer?> {
        (stripe + 8).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
    }

    /// Registers a reader on the calling thread's stripe; returns the stripe (to give to
    /// ``exitReader(_:returning:)``), the stripe's cached transaction object (holding a reset
    /// `MDB_txn*`), if it has one, and the ``state`` it saw (for ``readerBeganCleanly(_:)``).
    @inlinable
    func enterReader() throws(LMDBError) -> (stripe: UnsafeMutableRawPointer, cached: Transaction?, seen: Int) {
        try checkProcess("begin read transaction")
        let stripe = currentStripe()
        _ = cdepot_atomic_add(Self.counter(stripe), 1)
        var seen = cdepot_atomic_load(state)
        if _slowPath(seen & Self.flagBits != 0) { seen = try enterReaderWaiting(stripe) }
        guard let cached = cdepot_atomic_exchange_pointer(Self.cachedSlot(stripe), nil) else { return (stripe, nil, seen) }
        return (stripe, Unmanaged<Transaction>.fromOpaque(cached).takeRetainedValue(), seen)
    }

    /// After a reader began its `MDB_txn*`: whether no writer started holding new readers back
    /// since ``enterReader()`` saw `seen`. When one did, the transaction may have begun while
    /// that writer committed a database it created or dropped: its snapshot can then hold the
    /// database while LMDB has not yet made the handle usable (it does so only after the commit
    /// wrote the new snapshot), so the reader begins again.
    @inlinable @inline(__always)
    func readerBeganCleanly(_ seen: Int) -> Bool {
        // The transaction's reads of LMDB's meta page and handle table come before this load.
        cdepot_atomic_fence_acquire()
        return cdepot_atomic_load(state) == seen
    }

    /// The reader met an exclusive request or a closed gate: steps back, waits for the request
    /// to end under the lock, and registers again (or throws when closed); the ``state`` then.
    @usableFromInline @discardableResult
    func enterReaderWaiting(_ stripe: UnsafeMutableRawPointer) throws(LMDBError) -> Int {
        _ = cdepot_atomic_add(Self.counter(stripe), -1)
        lock.lock()
        defer { lock.unlock() }
        while cdepot_atomic_load(state) & Self.exclusiveBit != 0 {
            // The writer holding new readers back may read on its own thread: let it.
            if newReadersHeld && writerActive && pthread_equal(writerThread, pthread_self()) != 0 { break }
            lock.wait()
        }
        if cdepot_atomic_load(state) & Self.closedBit != 0 { throw Self.closedError("begin read transaction") }
        // Under the lock: no exclusive request can start before the count is visible.
        _ = cdepot_atomic_add(Self.counter(stripe), 1)
        return cdepot_atomic_load(state)
    }

    /// Unregisters a reader of `stripe`, keeping `cached` (a transaction object no one else holds,
    /// with a reset `MDB_txn*` in its ``Transaction/pooledHandle``) in the stripe's cache when
    /// it is free. Returns it when it was not kept (the caller aborts its handle).
    @inlinable
    func exitReader(_ stripe: UnsafeMutableRawPointer, returning cached: Transaction?) -> Transaction? {
        guard let cached else {
            _ = cdepot_atomic_add(Self.counter(stripe), -1)
            return nil
        }
        return exitReader(stripe, keeping: cached) ? nil : cached
    }

    /// ``exitReader(_:returning:)`` with a transaction to keep: returns whether it was kept.
    /// (No optional to copy: the one reference counted is the cache's.)
    @inlinable
    func exitReader(_ stripe: UnsafeMutableRawPointer, keeping cached: Transaction) -> Bool {
        var kept = false
        if (stripe + 16).load(as: Int.self) != 0 {
            let raw = Unmanaged.passRetained(cached).toOpaque()
            if cdepot_atomic_compare_exchange_pointer(Self.cachedSlot(stripe), nil, raw) != 0 {
                kept = true
            } else {
                Unmanaged<Transaction>.fromOpaque(raw).release()
            }
        }
        _ = cdepot_atomic_add(Self.counter(stripe), -1)
        return kept
    }

    /// The number of registered readers (and handle uses) right now.
    func activeReaderCount() -> Int {
        var total = 0
        for index in 0..<Self.stripeCount {
            total += cdepot_atomic_load(Self.counter(stripes + index * Self.stripeStride))
        }
        return total
    }

    /// Takes every cached reset transaction out of the stripes. The caller holds the lock with
    /// the exclusive bit set (or the gate closed), so no reader can take or return one meanwhile.
    func drainCachedTransactions() -> [OpaquePointer] {
        var handles: [OpaquePointer] = []
        for index in 0..<Self.stripeCount {
            if let cached = cdepot_atomic_exchange_pointer(Self.cachedSlot(stripes + index * Self.stripeStride), nil) {
                let txn = Unmanaged<Transaction>.fromOpaque(cached).takeRetainedValue()
                if let handle = txn.pooledHandle { handles.append(handle) }
                txn.pooledHandle = nil
            }
        }
        return handles
    }

    // MARK: Writer

    /// Waits until no other write transaction of this process is active, then claims the writer.
    /// A write begun on a thread that already holds the writer fails with `EDEADLK`.
    func acquireWriter() throws(LMDBError) {
        try checkProcess("begin write transaction")
        let me = pthread_self()
        lock.lock()
        defer { lock.unlock() }
        if isClosedHoldingLock { throw Self.closedError("begin write transaction") }
        if writerActive && pthread_equal(writerThread, me) != 0 {
            throw LMDBError(code: LMDBError.deadlock.code, operation: "begin write transaction",
                            detail: "this thread already has a write transaction open; use txn.nested {} for a child transaction")
        }
        if writerAbandoned { throw Self.abandonedWriterError() }
        writersWaiting += 1
        while writerActive {
            if writerAbandoned {
                writersWaiting -= 1
                throw Self.abandonedWriterError()
            }
            lock.wait()
        }
        writersWaiting -= 1
        if isClosedHoldingLock { lock.broadcast(); throw Self.closedError("begin write transaction") }
        writerActive = true
        writerThread = me
    }

    /// An explicit write transaction was released, still open, on another thread than the one
    /// that began it: the writer is held for good (LMDB's lock belongs to that thread). Writers
    /// waiting and to come fail with ``abandonedWriterError()`` instead of waiting forever.
    func abandonWriter() {
        lock.withLock {
            writerAbandoned = true
            lock.broadcast()
        }
    }

    /// The error of a write that can never begin (see ``abandonWriter()``).
    static func abandonedWriterError() -> LMDBError {
        LMDBError(code: LMDBError.badTransaction.code, operation: "begin write transaction",
                  detail: "an explicit write transaction was released, still open, on another thread than the one that began it (for example across an await): LMDB's writer lock belongs to that thread and can never be released, so no write can begin in this process; end explicit write transactions on their own thread (commit or roll back before any await) and restart the process to write again")
    }

    /// Releases the writer claimed by ``acquireWriter()``.
    func releaseWriter() {
        lock.withLock {
            writerActive = false
            writerThread = pthread_t(bitPattern: 0)
            lock.broadcast()
        }
    }

    /// Whether the calling thread holds the writer.
    var callerHoldsWriter: Bool {
        let me = pthread_self()
        return lock.withLock { writerActive && pthread_equal(writerThread, me) != 0 }
    }

    // MARK: Exclusive access (map resizing)

    /// Runs `body` while no read transaction of this process is active and no new one can begin.
    /// The caller must hold the writer (and have no write transaction open) so that no write
    /// transaction is active either. Gives up after `timeout` seconds if readers stay open.
    func withExclusiveAccess<R>(timeout: Double, _ body: () throws -> R) throws -> R {
        lock.lock()
        defer { lock.unlock() }
        try requestExclusiveHoldingLock(timeout: timeout, operation: "resize map",
                                        hint: "the map grows only while no read transaction of this process is open: end long reads, or open with a larger mapSize so that it need not grow (a write inside a read on one thread can never grow it)")
        defer { endExclusiveHoldingLock() }
        return try body()
    }

    /// Sets the exclusive bit and waits (polling, with growing pauses: this is rare) until no
    /// reader is registered; on timeout clears the bit again and throws `busy`.
    private func requestExclusiveHoldingLock(timeout: Double, operation: String, hint: String) throws(LMDBError) {
        cdepot_atomic_store(state, cdepot_atomic_load(state) | Self.exclusiveBit)
        do { try waitUntilNoReader(timeout: timeout, operation: operation, hint: hint) } catch {
            endExclusiveHoldingLock()
            throw error
        }
    }

    /// Waits (polling, with growing pauses: this is rare) until no reader is registered;
    /// throws `busy` after `timeout` seconds.
    private func waitUntilNoReader(timeout: Double, operation: String, hint: String) throws(LMDBError) {
        let deadline = monotonicNanoseconds() + UInt64(max(0, timeout) * 1e9)
        var pause: UInt64 = 1_000 // ns
        while true {
            let open = activeReaderCount()
            if open == 0 { return }
            if monotonicNanoseconds() >= deadline {
                throw LMDBError(code: LMDBError.busy.code, operation: operation,
                                detail: "\(open) read transaction(s) stayed open for \(timeout) s; \(hint)")
            }
            var request = timespec(tv_sec: 0, tv_nsec: Int(pause))
            _ = nanosleep(&request, nil)
            pause = min(pause * 2, 1_000_000)
        }
    }

    private func endExclusiveHoldingLock() {
        cdepot_atomic_store(state, cdepot_atomic_load(state) & ~Self.exclusiveBit)
        lock.broadcast()
    }

    // MARK: Holding new readers (dropping a database)

    /// Makes read transactions that begin from now on wait until ``releaseNewReaders()``;
    /// those already open go on (waiting for them here could deadlock: a reader may wait for the
    /// database-open lock that this writer holds). The caller holds the writer. Dropping a
    /// database closes its handle in the whole environment at once, and LMDB makes the handle of
    /// a database created (or opened) in a write transaction usable only after its commit wrote
    /// the new snapshot: a read transaction begun in between would see the database in its
    /// snapshot without a usable handle for it. A reader that registered before this call and
    /// began its transaction after it notices the new generation (``readerBeganCleanly(_:)``)
    /// and begins again. The writer's own thread may still read while it holds readers back.
    func holdNewReaders() {
        lock.withLock {
            if newReadersHeld { return }
            newReadersHeld = true
            cdepot_atomic_store(state, (cdepot_atomic_load(state) + Self.generationUnit) | Self.exclusiveBit)
        }
    }

    /// After ``holdNewReaders()``: waits until the read transactions that began before it have
    /// ended, giving up with `busy` after `timeout` seconds. Dropping a database needs this:
    /// LMDB forgets the dropped database's name in the whole environment at once, and a read
    /// transaction that began earlier and uses the database for the first time afterwards looks
    /// it up by that name, so it would find nothing (or, once the handle is reused, another
    /// database) instead of its snapshot's contents. The caller holds the writer, preferably
    /// not the database-open lock yet (a reader waiting for that lock ends only once this wait
    /// gave up). A reader open on the writer's own thread cannot end meanwhile: the wait then
    /// times out.
    func waitForEarlierReaders(timeout: Double, operation: String) throws(LMDBError) {
        try waitUntilNoReader(timeout: timeout, operation: operation,
                              hint: "a read transaction begun before the drop must end first (one open on the dropping thread never can)")
    }

    /// Lets the read transactions held by ``holdNewReaders()`` begin.
    func releaseNewReaders() {
        lock.withLock {
            guard newReadersHeld else { return }
            newReadersHeld = false
            endExclusiveHoldingLock()
        }
    }

    // MARK: Closing

    /// Marks the gate closed if nothing is active and returns the cached handles to abort;
    /// nil when it was already closed.
    func close() throws(LMDBError) -> [OpaquePointer]? {
        try checkProcess("close environment")
        lock.lock()
        defer { lock.unlock() }
        if isClosedHoldingLock { return nil }
        if writerActive || writersWaiting > 0 {
            throw LMDBError(code: LMDBError.busy.code, operation: "close environment",
                            detail: "\(activeReaderCount()) read and \(writerActive ? 1 : 0) write transaction(s) are still open")
        }
        // A reader that is only starting steps back within microseconds; an open one stays.
        try requestExclusiveHoldingLock(timeout: 0.002, operation: "close environment",
                                        hint: "end them before closing")
        markClosedHoldingExclusive()
        let handles = drainCachedTransactions()
        endExclusiveHoldingLock()
        return handles
    }

    /// Marks the gate closed; the caller holds the lock with the exclusive bit set.
    func markClosedHoldingExclusive() {
        cdepot_atomic_store(state, cdepot_atomic_load(state) | Self.closedBit)
    }

    private var isClosedHoldingLock: Bool { cdepot_atomic_load(state) & Self.closedBit != 0 }

    var isClosed: Bool { cdepot_atomic_load(state) & Self.closedBit != 0 }

    /// Whether a panic waits for recovery.
    var isPanicked: Bool { lock.withLock { panicked } }

    /// Marks the environment as needing recovery from `MDB_PANIC`.
    func markPanicked() { lock.withLock { panicked = true } }

    @usableFromInline
    static func closedError(_ operation: String) -> LMDBError {
        LMDBError.closed.with(operation: operation, detail: "open the folder again to go on")
    }

    // MARK: Process (fork safety)

    /// Throws ``LMDBError/forked`` when the calling process is not the one that opened the
    /// environment. Checked before the lock is taken: a lock copied by `fork()` may be held.
    @inlinable @inline(__always)
    func checkProcess(_ operation: StaticString) throws(LMDBError) {
        if _slowPath(ProcessIdentity.current != ownerPID) { throw forkedError("\(operation)") }
    }

    @usableFromInline
    func forkedError(_ operation: String) -> LMDBError {
        LMDBError.forked.with(operation: operation,
                              detail: "opened by process \(ownerPID), used in process \(ProcessIdentity.current) forked from it; open the folder again in this process")
    }

    /// Whether the calling process is the one that opened the environment.
    @inlinable
    var isOwnerProcess: Bool { ProcessIdentity.current == ownerPID }

    // MARK: Plain handle use

    /// Registers a short use of the `MDB_env*` outside any transaction (`mdb_env_info`,
    /// `mdb_reader_list`, …) as a reader: refused when closed or in another process; blocks
    /// ``close()`` (which reports busy) and the map resizing / panic recovery until
    /// ``exitHandleUse(_:)`` with the stripe it returns.
    func enterHandleUse(_ operation: StaticString) throws(LMDBError) -> UnsafeMutableRawPointer {
        try checkProcess(operation)
        let stripe = currentStripe()
        _ = cdepot_atomic_add(Self.counter(stripe), 1)
        if cdepot_atomic_load(state) & Self.flagBits != 0 {
            do { try enterReaderWaiting(stripe) } catch { throw Self.closedError("\(operation)") }
        }
        return stripe
    }

    /// Ends a use registered with ``enterHandleUse(_:)``.
    func exitHandleUse(_ stripe: UnsafeMutableRawPointer) { _ = exitReader(stripe, returning: nil) }
}

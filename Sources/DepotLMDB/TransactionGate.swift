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
/// - a small pool of reset read transactions that `read {}` renews instead of beginning anew.
///
/// `@unchecked Sendable`: every stored property is read and written with `lock` held.
@usableFromInline
final class TransactionGate: @unchecked Sendable {
    @usableFromInline let lock = ConditionLock()
    @usableFromInline var activeReaders = 0
    @usableFromInline var exclusiveRequested = false
    @usableFromInline var closed = false
    @usableFromInline var pool: [OpaquePointer] = []
    @usableFromInline let poolLimit: Int
    /// The process that opened the environment.
    @usableFromInline let ownerPID: Int32
    /// Set when LMDB reported `MDB_PANIC`: the environment must be reopened before the next
    /// transaction (see `Environment.recoverFromPanicIfNeeded`).
    @usableFromInline var panicked = false
    private var writerActive = false
    private var writerThread = pthread_t(bitPattern: 0)
    private var writersWaiting = 0

    init(poolLimit: Int, ownerPID: Int32) {
        self.poolLimit = max(0, poolLimit)
        self.ownerPID = ownerPID
        pool.reserveCapacity(self.poolLimit)
    }

    // MARK: Readers

    /// Registers a reader; returns a pooled reset transaction to renew, if there is one.
    @inlinable
    func enterReader() throws(LMDBError) -> OpaquePointer? {
        try checkProcess("begin read transaction")
        lock.lock()
        defer { lock.unlock() }
        if _slowPath(closed) { throw Self.closedError("begin read transaction") }
        while _slowPath(exclusiveRequested) { lock.wait() }
        activeReaders += 1
        return pool.popLast()
    }

    /// Unregisters a reader. Returns the handle back if the pool is full (the caller aborts it).
    @inlinable
    func exitReader(returning handle: OpaquePointer?) -> OpaquePointer? {
        lock.lock()
        defer { lock.unlock() }
        activeReaders -= 1
        if _slowPath(exclusiveRequested && activeReaders == 0) { lock.broadcast() }
        if let handle, !closed, pool.count < poolLimit {
            pool.append(handle)
            return nil
        }
        return handle
    }

    // MARK: Writer

    /// Waits until no other write transaction of this process is active, then claims the writer.
    /// A write begun on a thread that already holds the writer fails with `EDEADLK`.
    func acquireWriter() throws(LMDBError) {
        try checkProcess("begin write transaction")
        let me = pthread_self()
        lock.lock()
        defer { lock.unlock() }
        if closed { throw Self.closedError("begin write transaction") }
        if writerActive && pthread_equal(writerThread, me) != 0 {
            throw LMDBError(code: LMDBError.deadlock.code, operation: "begin write transaction",
                            detail: "this thread already has a write transaction open; use txn.nested {} for a child transaction")
        }
        writersWaiting += 1
        while writerActive { lock.wait() }
        writersWaiting -= 1
        if closed { lock.broadcast(); throw Self.closedError("begin write transaction") }
        writerActive = true
        writerThread = me
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
        exclusiveRequested = true
        let deadline = monotonicNanoseconds() + UInt64(timeout * 1e9)
        while activeReaders > 0 {
            if !lock.wait(untilNanoseconds: deadline), activeReaders > 0 {
                exclusiveRequested = false
                lock.broadcast()
                let open = activeReaders
                lock.unlock()
                throw LMDBError(code: LMDBError.busy.code, operation: "resize map",
                                detail: "\(open) read transaction(s) stayed open for \(timeout) s; a write inside a read on the same thread cannot grow the map")
            }
        }
        defer {
            exclusiveRequested = false
            lock.broadcast()
            lock.unlock()
        }
        return try body()
    }

    // MARK: Closing

    /// Marks the gate closed if nothing is active and returns the pooled handles to abort;
    /// nil when it was already closed.
    func close() throws(LMDBError) -> [OpaquePointer]? {
        try checkProcess("close environment")
        return try lock.withLock { () throws(LMDBError) -> [OpaquePointer]? in
            if closed { return nil }
            if activeReaders > 0 || writerActive || writersWaiting > 0 {
                throw LMDBError(code: LMDBError.busy.code, operation: "close environment",
                                detail: "\(activeReaders) read and \(writerActive ? 1 : 0) write transaction(s) are still open")
            }
            closed = true
            let handles = pool
            pool.removeAll()
            lock.broadcast()
            return handles
        }
    }

    var isClosed: Bool { lock.withLock { closed } }

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
    /// `mdb_reader_list`, …): refused when closed or in another process; blocks ``close()``
    /// (which reports busy) and the map resizing / panic recovery until ``exitHandleUse()``.
    func enterHandleUse(_ operation: StaticString) throws(LMDBError) {
        try checkProcess(operation)
        try lock.withLock { () throws(LMDBError) in
            if closed { throw Self.closedError("\(operation)") }
            activeReaders += 1
        }
    }

    /// Ends a use registered with ``enterHandleUse(_:)``.
    func exitHandleUse() { _ = exitReader(returning: nil) }
}

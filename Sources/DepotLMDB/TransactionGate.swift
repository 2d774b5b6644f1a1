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
    private var writerActive = false
    private var writerThread = pthread_t(bitPattern: 0)
    private var writersWaiting = 0

    init(poolLimit: Int) {
        self.poolLimit = max(0, poolLimit)
        pool.reserveCapacity(self.poolLimit)
    }

    // MARK: Readers

    /// Registers a reader; returns a pooled reset transaction to renew, if there is one.
    @inlinable
    func enterReader() throws(LMDBError) -> OpaquePointer? {
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
        try lock.withLock { () throws(LMDBError) -> [OpaquePointer]? in
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

    @usableFromInline
    static func closedError(_ operation: String) -> LMDBError {
        LMDBError(code: LMDBError.invalidArgument.code, operation: operation, detail: "the environment is closed")
    }
}

import CLMDB
import Foundation

/// Bounds of the group-commit writer behind ``Environment/write(_:)-async``.
public struct GroupCommitOptions: Sendable, Hashable {
    /// The most closures committed together in one transaction.
    public var maxBatchSize: Int = 256
    /// How long the writer waits for more work after the first closure arrives (0: take what is
    /// waiting and go; waiting trades latency for larger batches).
    public var maxWait: Duration = .zero
    /// Callers beyond this many queued closures suspend until there is room (backpressure).
    public var maxQueueLength: Int = 4096
    /// How long the writer waits, from finding work, for the callers it expects back before it
    /// commits (at most ``maxBatchSize``): tasks of the last two batches that write in a loop
    /// (each had written in an earlier batch too), plus the closures already queued. They come
    /// back right after they are resumed, and waiting for them keeps batches whole instead of
    /// alternating between parts of the callers. Tasks that write once are not waited for, nor
    /// is anyone after the writer was idle longer than this. Only waits longer than ``maxWait``
    /// matter.
    public var adaptiveWait: Duration = .microseconds(500)

    /// Creates the default bounds.
    public init() {}
}

/// One queued closure of an async write: the caller's closure, its result and its suspended
/// caller. The writer thread runs it and then resumes the caller with ``complete()``.
class WriteJob: @unchecked Sendable {
    // @unchecked Sendable: `state` is only touched under the writer's lock. The caller stores
    // the continuation before `enqueue` takes the lock, and only whoever moves `state` away from
    // `.queued` under the lock (the writer or `cancel`) or `enqueue` itself reads it afterwards;
    // `error`, `failedOptimistically` and the result are touched by the writer thread only,
    // between taking the job and completing it.
    enum State: UInt8 {
        /// Created with a queue slot, not queued yet.
        case new
        case queued
        case running
        /// Finished or cancelled: nothing may resume the caller any more.
        case done
    }
    final var state = State.new
    final var error: Error?
    /// The closure threw in the optimistic pass of its batch (it is not run again).
    final var failedOptimistically = false
    /// The calling task's identity (its hash), for the pacer: set before the job is queued.
    final var caller = 0

    /// Runs the caller's closure in `txn` and keeps its result.
    func run(_ txn: Transaction) throws {}
    /// Resumes the caller with the result, or with `error` when set. Called exactly once.
    func complete() {}
    /// Resumes the caller with `error` (cancelled, or the writer stopped). Called exactly once.
    func fail(_ error: Error) {}
}

/// A ``WriteJob`` whose closure returns `R`.
final class TypedWriteJob<R: Sendable>: WriteJob, @unchecked Sendable {
    let body: @Sendable (Transaction) throws -> R
    var value: R?
    var continuation: UnsafeContinuation<R, Error>?

    init(_ body: @escaping @Sendable (Transaction) throws -> R) { self.body = body }

    override func run(_ txn: Transaction) throws { value = try body(txn) }

    override func complete() {
        guard let continuation else { return }
        self.continuation = nil
        if let error {
            continuation.resume(throwing: error)
        } else if let value {
            self.value = nil
            continuation.resume(returning: value)
        } else {
            continuation.resume(throwing: LMDBError(code: MDB_BAD_TXN, operation: "async write",
                                                    detail: "the closure produced no result"))
        }
    }

    override func fail(_ error: Error) {
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(throwing: error)
    }
}

/// The single writer thread of an environment: async writes queue here and are committed in
/// batches (group commit), one durable commit for many callers.
///
/// `@unchecked Sendable`: the queue and flags are guarded by `lock`; the thread owns the rest.
final class AsyncWriter: @unchecked Sendable {
    private let lock = ConditionLock()
    private var queue: [WriteJob] = []
    private var head = 0
    /// Callers waiting for a queue slot, oldest first, each with the number that finds it again
    /// when its task is cancelled.
    private var admissionWaiters: [(id: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    private var lastWaiterID: UInt64 = 0
    private var stopped = false
    /// The writer sleeps until this many closures are queued (enqueue signals only then).
    private var wakeThreshold = Int.max
    /// Which callers the writer expects back after a batch (writer thread only).
    private var pacer = GroupCommitPacer()
    /// The pacer's input, reused from batch to batch (writer thread only).
    private var batchCallers: [Int] = []
    private var queuedCallers: [Int] = []
    /// Queue slots in use: queued jobs plus callers admitted but not yet queued.
    private var slots = 0
    /// The most slots ever in use (backpressure keeps it at or below `maxQueueLength`).
    private(set) var peakSlots = 0
    private unowned let environment: Environment
    let options: GroupCommitOptions
    private var thread: Thread?
    /// Number of batches committed (for tests and statistics).
    private(set) var batchesCommitted = 0
    /// Largest batch committed so far.
    private(set) var largestBatch = 0

    init(environment: Environment, options: GroupCommitOptions) {
        self.environment = environment
        self.options = options
        let thread = Thread { [weak self] in self?.loop() }
        thread.name = "depot.writer"
        thread.stackSize = 1 << 22
        self.thread = thread
        thread.start()
    }

    var pending: Int { lock.withLock { queue.count - head } }
    /// Callers waiting for a queue slot (for tests).
    var waitingForSlot: Int { lock.withLock { admissionWaiters.count } }
    var statistics: (batches: Int, largest: Int, peakQueue: Int) { lock.withLock { (batchesCommitted, largestBatch, peakSlots) } }

    /// Claims a queue slot, suspending while all `maxQueueLength` slots are in use
    /// (backpressure).
    /// - Throws: `CancellationError` when the caller's task is cancelled while it waits (it then
    ///   holds no slot); the closed-environment error when the writer has stopped.
    func acquireSlot() async throws {
        while true {
            let admitted: Bool? = lock.withLock {
                if stopped { return nil }
                if slots < options.maxQueueLength {
                    slots += 1
                    peakSlots = max(peakSlots, slots)
                    return true
                }
                return false
            }
            guard let admitted else { throw TransactionGate.closedError("async write") }
            if admitted { return }
            if Task.isCancelled {
                admit() // a wake-up this caller got is passed on
                throw CancellationError()
            }
            let id: UInt64 = lock.withLock {
                lastWaiterID &+= 1
                return lastWaiterID
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    // Cancellation sets the flag before it runs the handler below: checked under
                    // the lock, either this sees it or the handler finds the waiter.
                    let now: Bool = lock.withLock {
                        if slots < options.maxQueueLength || stopped || Task.isCancelled { return true }
                        admissionWaiters.append((id, continuation))
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                let waiter: CheckedContinuation<Void, Never>? = lock.withLock {
                    guard let i = admissionWaiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return admissionWaiters.remove(at: i).continuation
                }
                waiter?.resume()
            }
        }
    }

    /// Gives back a slot that was not used (the caller was cancelled before queueing).
    func releaseSlot() {
        lock.withLock { slots -= 1 }
        admit()
    }

    /// Queues `job` in a slot claimed with ``acquireSlot()``. When the job was cancelled before
    /// it got here, or the writer stopped, gives the slot back and resumes its caller with the error.
    func enqueue(_ job: WriteJob) {
        lock.lock()
        if job.state == .new && !stopped {
            job.state = .queued
            queue.append(job)
            if queue.count - head >= wakeThreshold { lock.signal() }
            lock.unlock()
            return
        }
        let cancelled = job.state == .done
        job.state = .done
        slots -= 1
        lock.unlock()
        job.fail(cancelled ? CancellationError() : TransactionGate.closedError("async write"))
        admit()
    }

    /// Cancels a job that has not started: a queued one is resumed with `CancellationError` now,
    /// one not queued yet when it reaches ``enqueue(_:)``.
    func cancel(_ job: WriteJob) {
        lock.lock()
        let state = job.state
        if state == .new || state == .queued { job.state = .done }
        lock.unlock()
        if state == .queued { job.fail(CancellationError()) }
    }

    func stop() {
        let waiters: [CheckedContinuation<Void, Never>] = lock.withLock {
            stopped = true
            lock.broadcast()
            let w = admissionWaiters
            admissionWaiters.removeAll()
            return w.map(\.continuation)
        }
        for w in waiters { w.resume() }
    }

    /// Waits until work is queued, then, from finding it, up to `adaptiveWait` for the batch
    /// the pacer expects and up to `maxWait` for a full batch. Returns false once stopped with
    /// nothing left.
    private func waitForWork() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        wakeThreshold = 1
        while queue.count == head && !stopped { lock.wait() }
        if queue.count == head { wakeThreshold = .max; return false }
        let start = monotonicNanoseconds()
        let full = max(options.maxBatchSize, 1)
        let patience = Self.nanoseconds(options.adaptiveWait)
        let returning = min(pacer.target(at: start, patience: patience), full)
        let adaptiveDeadline = returning > 1 ? start + patience : 0
        let fullDeadline = start + Self.nanoseconds(options.maxWait)
        while !stopped {
            let queued = queue.count - head
            if queued >= full { break }
            var threshold = full, deadline = fullDeadline
            if queued < returning && adaptiveDeadline > deadline { threshold = returning; deadline = adaptiveDeadline }
            if monotonicNanoseconds() >= deadline { break }
            wakeThreshold = threshold
            _ = lock.wait(untilNanoseconds: deadline) // woken by `enqueue` at the threshold, or timed out
        }
        wakeThreshold = .max
        return true
    }

    /// `duration` in nanoseconds: 0 when not positive, at most about 31 years.
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        if seconds >= 1_000_000_000 { return 1_000_000_000 * 1_000_000_000 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// Moves up to `maxBatchSize` queued jobs into `batch` (emptied first).
    private func takeBatch(into batch: inout [WriteJob]) {
        batch.removeAll(keepingCapacity: true)
        lock.lock()
        defer { lock.unlock() }
        while head < queue.count && batch.count < options.maxBatchSize {
            let job = queue[head]
            head += 1
            slots -= 1
            if job.state == .queued {
                job.state = .running
                batch.append(job)
            }
        }
        if head == queue.count {
            // Drained: forget finished jobs now (they hold their callers' closures and captures).
            queue.removeAll(keepingCapacity: queue.count <= 4096)
            head = 0
        } else if head > 1024 && head * 2 > queue.count {
            queue.removeFirst(head)
            head = 0
        }
    }

    private func admit() {
        let waiters: [CheckedContinuation<Void, Never>] = lock.withLock {
            let room = options.maxQueueLength - slots
            guard room > 0, !admissionWaiters.isEmpty else { return [] }
            let n = min(room, admissionWaiters.count)
            let w = admissionWaiters.prefix(n).map(\.continuation)
            admissionWaiters.removeFirst(n)
            return w
        }
        for w in waiters { w.resume() }
    }

    private func loop() {
        var batch: [WriteJob] = []
        batch.reserveCapacity(min(options.maxBatchSize, 1024))
        while waitForWork() {
            // Claim the writer first: jobs stay cancellable while another writer holds it, and
            // everything that queues up meanwhile joins this batch.
            var claimError: Error?
            do { try environment.gate.acquireWriter() } catch { claimError = error }
            takeBatch(into: &batch)
            admit()
            var handlers: [() -> Void] = []
            if let claimError {
                for job in batch { job.error = claimError }
            } else {
                if !batch.isEmpty { handlers = run(batch) }
                environment.gate.releaseWriter()
            }
            for handler in handlers { handler() }
            if batch.isEmpty { continue }
            environment.options.logger.log(.debug, "group commit: batch finished", metadata: [
                "path": environment.path, "batch": "\(batch.count)",
                "failed": "\(batch.reduce(0) { $0 + ($1.error == nil ? 0 : 1) })",
            ])
            lock.withLock {
                for job in batch { job.state = .done }
                batchesCommitted += 1
                largestBatch = max(largestBatch, batch.count)
                // Before anyone is resumed: the queued closures are other callers'.
                batchCallers.removeAll(keepingCapacity: true)
                for job in batch { batchCallers.append(job.caller) }
                queuedCallers.removeAll(keepingCapacity: true)
                for index in head..<queue.count { queuedCallers.append(queue[index].caller) }
                pacer.finished(callers: batchCallers, queued: queuedCallers, at: monotonicNanoseconds())
            }
            // Resume the callers; the jobs are `.done`, so a late cancellation cannot resume them too.
            for job in batch { job.complete() }
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// Runs a batch in one write transaction. The caller holds the writer.
    ///
    /// Optimistically every closure runs straight in the batch's transaction (a child
    /// transaction per closure costs LMDB two large allocations). When one throws, the whole
    /// transaction is aborted and the batch runs again, this time each remaining closure in its
    /// own child transaction, so that a failing closure undoes only its own work.
    private func run(_ batch: [WriteJob]) -> [() -> Void] {
        struct Retry: Error {}
        var handlers: [() -> Void] = []
        var isolated = false
        while true {
            do {
                try environment.writeHoldingWriter({ txn in
                    for job in batch {
                        if isolated {
                            if job.failedOptimistically { continue } // keeps the error it threw
                            job.error = nil
                            do {
                                try txn.nested { try job.run($0) }
                            } catch {
                                job.error = error
                            }
                        } else {
                            job.error = nil
                            do {
                                try job.run(txn)
                            } catch {
                                job.error = error
                                if !txn.hitMapFull {
                                    job.failedOptimistically = true
                                    throw Retry()
                                }
                            }
                        }
                        // A full map fails the whole batch so that it is re-run after growing.
                        if txn.hitMapFull { throw LMDBError.mapFull.with(operation: "group commit") }
                    }
                }, afterCommit: &handlers)
                return handlers
            } catch is Retry {
                environment.options.logger.log(.debug, "group commit: a closure threw; running the batch again with one savepoint per closure",
                                               metadata: ["path": environment.path, "batch": "\(batch.count)"])
                isolated = true
                continue
            } catch {
                // The commit failed: nobody's work is durable, so everybody gets the error.
                for job in batch { job.error = error }
                return handlers
            }
        }
    }
}

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
    /// When the previous batch held N closures, the writer waits up to this long for N to be
    /// queued again before it commits: the callers it just resumed are usually about to come
    /// back, and waiting for them keeps batches full instead of alternating between one closure
    /// and the rest. A lone writer (N = 1) never waits.
    public var adaptiveWait: Duration = .microseconds(500)

    /// Creates the default bounds.
    public init() {}
}

/// One queued closure of an async write.
final class WriteJob: @unchecked Sendable {
    // @unchecked Sendable: `state` is only touched under the writer's lock; `run` and `finish`
    // are called by the writer thread only, once the job is taken out of the queue.
    enum State { case queued, running, done }
    var state = State.queued
    let run: (Transaction) throws -> Void
    let finish: (Error?) -> Void
    var error: Error?
    /// The closure threw in the optimistic pass of its batch (it is not run again).
    var failedOptimistically = false

    init(run: @escaping (Transaction) throws -> Void, finish: @escaping (Error?) -> Void) {
        self.run = run
        self.finish = finish
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
    private var admissionWaiters: [CheckedContinuation<Void, Never>] = []
    private var stopped = false
    /// The writer sleeps until this many closures are queued (enqueue signals only then).
    private var wakeThreshold = Int.max
    /// Size of the last batch (writer thread only).
    private var lastBatchSize = 1
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
    var statistics: (batches: Int, largest: Int, peakQueue: Int) { lock.withLock { (batchesCommitted, largestBatch, peakSlots) } }

    /// Claims a queue slot, suspending while all `maxQueueLength` slots are in use
    /// (backpressure). Returns false when the writer has stopped.
    func acquireSlot() async -> Bool {
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
            if let admitted { if admitted { return true } } else { return false }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now: Bool = lock.withLock {
                    if slots < options.maxQueueLength || stopped { return true }
                    admissionWaiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }

    /// Gives back a slot that was not used (the caller was cancelled before queueing).
    func releaseSlot() {
        lock.withLock { slots -= 1 }
        admit()
    }

    /// Queues `job` in a slot claimed with ``acquireSlot()``; returns false when stopped.
    func enqueue(_ job: WriteJob) -> Bool {
        let queued: Bool = lock.withLock {
            if stopped { slots -= 1; return false }
            queue.append(job)
            if queue.count - head >= wakeThreshold { lock.signal() }
            return true
        }
        return queued
    }

    /// Removes a job that has not started; returns whether it was removed.
    func cancel(_ job: WriteJob) -> Bool {
        lock.withLock {
            guard job.state == .queued else { return false }
            job.state = .done
            return true
        }
    }

    func stop() {
        let waiters: [CheckedContinuation<Void, Never>] = lock.withLock {
            stopped = true
            lock.broadcast()
            let w = admissionWaiters
            admissionWaiters.removeAll()
            return w
        }
        for w in waiters { w.resume() }
    }

    /// Waits until work is queued, then (adaptive batching) until as many closures as in the
    /// last batch are queued or `adaptiveWait`/`maxWait` passed. Returns false once stopped with
    /// nothing left.
    private func waitForWork() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        wakeThreshold = 1
        while queue.count == head && !stopped { lock.wait() }
        if queue.count == head { wakeThreshold = .max; return false }
        let target = min(max(lastBatchSize, options.maxWait > .zero ? options.maxBatchSize : 1), options.maxBatchSize)
        let patience = max(options.maxWait, lastBatchSize > 1 ? options.adaptiveWait : .zero)
        if (queue.count - head) < target && patience > .zero {
            let (seconds, attoseconds) = patience.components
            let deadline = monotonicNanoseconds() + UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
            wakeThreshold = target
            while (queue.count - head) < target && !stopped && lock.wait(untilNanoseconds: deadline) {}
        }
        wakeThreshold = .max
        return true
    }

    /// Takes up to `maxBatchSize` queued jobs.
    private func takeBatch() -> [WriteJob] {
        lock.lock()
        defer { lock.unlock() }
        var batch: [WriteJob] = []
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
        return batch
    }

    private func admit() {
        let waiters: [CheckedContinuation<Void, Never>] = lock.withLock {
            let room = options.maxQueueLength - slots
            guard room > 0, !admissionWaiters.isEmpty else { return [] }
            let n = min(room, admissionWaiters.count)
            let w = Array(admissionWaiters.prefix(n))
            admissionWaiters.removeFirst(n)
            return w
        }
        for w in waiters { w.resume() }
    }

    private func loop() {
        while waitForWork() {
            // Claim the writer first: jobs stay cancellable while another writer holds it, and
            // everything that queues up meanwhile joins this batch.
            var claimError: Error?
            do { try environment.gate.acquireWriter() } catch { claimError = error }
            let batch = takeBatch()
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
            lastBatchSize = batch.count
            environment.options.logger.log(.debug, "group commit: batch finished", metadata: [
                "path": environment.path, "batch": "\(batch.count)",
                "failed": "\(batch.reduce(0) { $0 + ($1.error == nil ? 0 : 1) })",
            ])
            lock.withLock {
                for job in batch { job.state = .done }
                batchesCommitted += 1
                largestBatch = max(largestBatch, batch.count)
            }
            for job in batch { job.finish(job.error) }
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

extension Environment {
    /// The environment's writer thread, started on first use.
    func asyncWriter() throws -> AsyncWriter {
        try gate.checkProcess("async write")
        return try asyncWriterLock.withLock {
            if let writer = asyncWriterStorage { return writer }
            if isClosed { throw TransactionGate.closedError("async write") }
            let writer = AsyncWriter(environment: self, options: groupCommitOptions)
            asyncWriterStorage = writer
            return writer
        }
    }

    /// Runs `body` in a write transaction on the environment's writer thread and returns its
    /// result once the commit is durable.
    ///
    /// Concurrent calls are **group-committed**: the writer takes every waiting closure (up to
    /// ``GroupCommitOptions/maxBatchSize``), runs each in its own child transaction (a closure
    /// that throws undoes only its own work and gets its own error), commits once, then resumes
    /// every caller. No caller sees success before the commit returned. A task cancelled before
    /// its closure ran gets `CancellationError`; callers beyond
    /// ``GroupCommitOptions/maxQueueLength`` wait for room. `body` runs on another thread, so
    /// it must be `@Sendable`; it stays synchronous (no `await` inside a transaction).
    @discardableResult
    public func write<R: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> R) async throws -> R {
        let writer = try asyncWriter()
        guard await writer.acquireSlot() else { throw TransactionGate.closedError("async write") }
        if Task.isCancelled {
            writer.releaseSlot()
            throw CancellationError()
        }
        let completion = Completion<R>()
        let job = WriteJob(run: { txn in completion.value = try body(txn) }, finish: { error in
            completion.complete(error.map { .failure($0) } ?? .success(completion.value!))
        })
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, Error>) in
                completion.attach(continuation)
                if !writer.enqueue(job) {
                    completion.complete(.failure(TransactionGate.closedError("async write")))
                }
            }
        } onCancel: {
            if writer.cancel(job) { completion.complete(.failure(CancellationError())) }
        }
    }
}

/// Meets a continuation and a result, in either order, and resumes exactly once.
final class Completion<R: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `continuation` and `result` are guarded by `lock`; `value` is written
    // by the writer thread before `complete` is called and read inside it.
    private let lock = ConditionLock()
    private var continuation: CheckedContinuation<R, Error>?
    private var result: Result<R, Error>?
    var value: R?

    func attach(_ continuation: CheckedContinuation<R, Error>) {
        let ready: Result<R, Error>? = lock.withLock {
            if let result { return result }
            self.continuation = continuation
            return nil
        }
        if let ready { continuation.resume(with: ready) }
    }

    func complete(_ outcome: Result<R, Error>) {
        let waiting: CheckedContinuation<R, Error>? = lock.withLock {
            if result != nil { return nil }
            result = outcome
            let c = continuation
            continuation = nil
            return c
        }
        waiting?.resume(with: outcome)
    }
}

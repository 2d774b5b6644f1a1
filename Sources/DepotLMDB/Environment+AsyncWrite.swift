extension Environment {
    /// A number that tells the calling task from others while it runs (for the group-commit
    /// pacer). The task's address where `UnsafeCurrentTask` is one word (it wraps the task
    /// object; nothing is read through it), else its hash value (which hashes the address).
    static func identity(of task: UnsafeCurrentTask?) -> Int {
        guard let task else { return 0 }
        if MemoryLayout<UnsafeCurrentTask>.size == MemoryLayout<Int>.size { return unsafeBitCast(task, to: Int.self) }
        return task.hashValue
    }

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
    /// ``GroupCommitOptions/maxBatchSize``), runs them in one transaction, commits once, then
    /// resumes every caller. No caller sees success before the commit returned. A closure that
    /// throws undoes only its own work and gets its own error: the batch is rolled back and run
    /// again with each remaining closure in its own child transaction. So a closure can run more
    /// than once (also when the map grows): it must not have effects outside the transaction
    /// that cannot be repeated. A task cancelled before
    /// its closure ran gets `CancellationError`; callers beyond
    /// ``GroupCommitOptions/maxQueueLength`` wait for room (a task cancelled while it waits gets
    /// `CancellationError` at once). `body` runs on another thread, so
    /// it must be `@Sendable`; it stays synchronous (no `await` inside a transaction).
    @discardableResult
    public func write<R: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> R) async throws -> R {
        // The group-commit thread would wait for this thread's writer while this task waits
        // for it: refused, as a nested synchronous write is.
        if gate.callerHoldsWriter {
            throw LMDBError(code: LMDBError.deadlock.code, operation: "begin write transaction",
                            detail: "this thread has a write transaction open (an explicit one): end it before an async write, or write in it")
        }
        let writer = try asyncWriter()
        try await writer.acquireSlot()
        if Task.isCancelled {
            writer.releaseSlot()
            throw CancellationError()
        }
        let job = TypedWriteJob(body)
        job.caller = withUnsafeCurrentTask { Self.identity(of: $0) }
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<R, Error>) in
                job.continuation = continuation // before the job is queued: see `WriteJob`
                writer.enqueue(job)
            }
        } onCancel: {
            writer.cancel(job)
        }
    }
}

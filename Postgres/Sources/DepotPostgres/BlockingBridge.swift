import Foundation

/// Runs postgres-nio's async work for the synchronous ``PostgresDriver``: every task runs on a
/// dedicated thread (a task executor of its own, never Swift's cooperative pool) while the
/// calling thread waits on a condition.
///
/// Why a thread of its own: the driver's callers block (the `StorageDriver` protocol is
/// synchronous). If the async work needed the cooperative pool, a caller that blocks a
/// cooperative thread could starve the very work it waits for (with 2 cores the pool has 2
/// threads). With a task executor preference, the tasks, their child tasks and every
/// continuation resumed by SwiftNIO run here instead, so a blocked caller can never be the
/// thread its own work needs. Calling from the bridge's own thread is refused.
final class BlockingBridge: TaskExecutor, @unchecked Sendable {
    // @unchecked Sendable: `jobs` and `stopped` are guarded by `condition`; `thread` is set once
    // in init before any job can run.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false
    private var thread: Thread?

    init(name: String) {
        // The thread keeps the bridge alive until `stop()` lets its loop end.
        let thread = Thread { self.loop() }
        thread.name = name
        self.thread = thread
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.withLock {
            jobs.append(job)
            condition.signal()
        }
    }

    /// Runs jobs until ``stop()`` is called and the queue is empty.
    private func loop() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }

    /// Lets the thread end once its queue is empty.
    func stop() {
        condition.withLock {
            stopped = true
            condition.signal()
        }
    }

    /// Whether the current thread is the bridge's own.
    var isCurrent: Bool { Thread.current === thread }

    /// Starts `operation` on the bridge without waiting for it.
    @discardableResult
    func start(_ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        Task(executorPreference: self) { await operation() }
    }

    /// Runs `operation` on the bridge and blocks the calling thread until it finishes.
    func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) throws -> T {
        if isCurrent { throw PostgresDriverError.calledFromDriverThread }
        let box = ResultBox<T>()
        Task(executorPreference: self) {
            do { box.set(.success(try await operation())) } catch { box.set(.failure(error)) }
        }
        return try box.wait().get()
    }
}

/// A result handed from the bridge thread to a waiting thread.
final class ResultBox<T: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `result` is guarded by `condition`.
    private let condition = NSCondition()
    private var result: Result<T, any Error>?

    func set(_ value: Result<T, any Error>) {
        condition.withLock {
            result = value
            condition.broadcast()
        }
    }

    func wait() -> Result<T, any Error> {
        condition.withLock {
            while true {
                if let result { return result }
                condition.wait()
            }
        }
    }
}

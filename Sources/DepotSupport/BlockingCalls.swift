import Foundation

/// Threads for blocking work (a driver call that waits on a socket, a lock or the disk) of an
/// `async` API whose driver has no asynchronous path of its own: off the caller's task and off
/// Swift's cooperative pool.
///
/// Each call goes to an idle thread, or to a new one when none is idle, so calls never wait for
/// each other (as with a thread made per call); a thread that stays idle for `idleLifetime`
/// ends. Not a dispatch queue: on Linux, Swift's cooperative pool runs on libdispatch's global
/// threads, which grow slowly when blocked, so a few blocked calls there would stall every task
/// of the process. Async writes on PostgreSQL against a thread made per call:
/// `Benchmarks/results/postgres-async-writes-ab-2core.txt`.
///
/// `@unchecked Sendable`: `idle` and `started` are guarded by `lock` (`Mutex` needs macOS 15);
/// the rest is immutable.
package final class BlockingCalls: @unchecked Sendable {
    /// The threads every async API of Depot uses.
    package static let shared = BlockingCalls()

    fileprivate let idleLifetime: Double
    private let lock = NSLock()
    /// Idle threads, most recently idle last: a call takes the last one.
    private var idle: [Worker] = []
    private var started = 0

    /// A pool of its own (the shared one serves Depot's APIs); threads idle for `idleLifetime`
    /// seconds end.
    package init(idleLifetime: Double = 10) { self.idleLifetime = idleLifetime }

    /// Threads made so far.
    package var threadsStarted: Int { lock.withLock { started } }

    /// Runs `body` on one of the threads; its result or error once it returned.
    package func run<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            submit { [self] worker in
                let result = Result { try body() }
                // Idle before the caller resumes: its next call finds this thread.
                becameIdle(worker)
                continuation.resume(with: result)
            }
        }
    }

    private func submit(_ job: @escaping Job) {
        let worker: Worker? = lock.withLock {
            if let worker = idle.popLast() { return worker }
            started += 1
            return nil
        }
        if let worker {
            worker.hand(job)
            return
        }
        let fresh = Worker()
        let thread = Thread { [self] in fresh.run(first: job, in: self) }
        thread.name = "depot.blocking-call"
        thread.start()
    }

    /// Puts `worker` in the idle list.
    private func becameIdle(_ worker: Worker) { lock.withLock { idle.append(worker) } }

    /// Takes `worker` out of the idle list; false when a call took it meanwhile.
    fileprivate func leave(_ worker: Worker) -> Bool {
        lock.withLock {
            guard let index = idle.firstIndex(where: { $0 === worker }) else { return false }
            idle.remove(at: index)
            return true
        }
    }
}

/// A call's work on a pool thread; it puts the thread in the idle list once its body returned.
private typealias Job = @Sendable (Worker) -> Void

/// One thread of ``BlockingCalls``: runs its job, then waits idle for the next (handed over with
/// its semaphore) until the pool's idle lifetime passes.
///
/// `@unchecked Sendable`: `job` is written by the submitting thread before it signals `ready`,
/// and read by the worker's thread after its wait returns (the semaphore orders them); a worker
/// is handed one job per idle spell, having been taken out of the idle list under the pool's lock.
private final class Worker: @unchecked Sendable {
    private let ready = DispatchSemaphore(value: 0)
    private var job: Job?

    func hand(_ job: @escaping Job) {
        self.job = job
        ready.signal()
    }

    func run(first: @escaping Job, in pool: BlockingCalls) {
        var next: Job? = first
        while let current = next {
            next = nil
            current(self)
            if ready.wait(timeout: .now() + pool.idleLifetime) == .timedOut {
                // Still idle: end. Taken meanwhile: its job is being handed over.
                if pool.leave(self) { return }
                ready.wait()
            }
            next = job
            job = nil
        }
    }
}

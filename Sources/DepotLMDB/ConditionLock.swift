#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex with a condition variable, heap-allocated so its address never moves.
///
/// `@unchecked Sendable`: the pthread objects are the synchronization; they are created in
/// `init` and destroyed in `deinit` only.
@usableFromInline
final class ConditionLock: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    /// Creates the lock; a `recursive` one may be locked again by the thread that holds it.
    @usableFromInline
    init(recursive: Bool = false) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        if recursive { pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE)) }
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        #if canImport(Glibc)
        // Timed waits count on the monotonic clock: a wall-clock step cannot stretch them.
        var conditionAttributes = pthread_condattr_t()
        pthread_condattr_init(&conditionAttributes)
        pthread_condattr_setclock(&conditionAttributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &conditionAttributes)
        pthread_condattr_destroy(&conditionAttributes)
        #else
        pthread_cond_init(condition, nil)
        #endif
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    @inlinable @inline(__always)
    func lock() { pthread_mutex_lock(mutex) }

    @inlinable @inline(__always)
    func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` with the mutex held.
    @inlinable @inline(__always)
    func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Waits for a signal; the mutex must be held.
    @usableFromInline
    func wait() { pthread_cond_wait(condition, mutex) }

    /// Waits for a signal or until `deadline` (monotonic nanoseconds); returns false on time-out.
    func wait(untilNanoseconds deadline: UInt64) -> Bool {
        let now = monotonicNanoseconds()
        if now >= deadline { return false }
        // The condition's clock: monotonic where it can be chosen (Linux), else the wall clock.
        var ts = timespec()
        #if canImport(Glibc)
        clock_gettime(CLOCK_MONOTONIC, &ts)
        #else
        clock_gettime(CLOCK_REALTIME, &ts)
        #endif
        let remaining = deadline - now
        var nsec = Int(ts.tv_nsec) + Int(remaining % 1_000_000_000)
        var sec = Int(ts.tv_sec) + Int(remaining / 1_000_000_000)
        if nsec >= 1_000_000_000 { nsec -= 1_000_000_000; sec += 1 }
        ts.tv_sec = time_t(sec)
        ts.tv_nsec = nsec
        return pthread_cond_timedwait(condition, mutex, &ts) == 0 || monotonicNanoseconds() < deadline
    }

    func signal() { pthread_cond_signal(condition) }
    @usableFromInline
    func broadcast() { pthread_cond_broadcast(condition) }
}

/// Nanoseconds on the monotonic clock.
@usableFromInline
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

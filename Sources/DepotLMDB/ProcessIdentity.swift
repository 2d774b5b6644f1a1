import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The ID of the running process, cached so that the fork check on every entry point is one
/// relaxed atomic load instead of a `getpid()` system call.
///
/// LMDB forbids using an `MDB_env` (or any of its transactions) in a process forked from the
/// one that opened it. Every ``Environment`` remembers the process that opened it and compares
/// it with ``current`` before it touches LMDB. The cache is refreshed in a forked child by a
/// `pthread_atfork` child handler, registered when the cache is first used (that is, before any
/// environment exists). A child made with a raw `fork` system call that bypasses the C library
/// (so that no atfork handler runs) is not detected.
@usableFromInline
final class ProcessIdentity: Sendable {
    @usableFromInline static let shared = ProcessIdentity()

    @usableFromInline let pid: Atomic<Int32>

    private init() {
        pid = Atomic(getpid())
        _ = pthread_atfork(nil, nil, {
            ProcessIdentity.shared.pid.store(getpid(), ordering: .relaxed)
        })
    }

    /// The ID of the running process.
    @inlinable static var current: Int32 { shared.pid.load(ordering: .relaxed) }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The ID of the running process, cached so that the fork check on every entry point is one
/// load instead of a `getpid()` system call.
///
/// LMDB forbids using an `MDB_env` (or any of its transactions) in a process forked from the
/// one that opened it. Every ``Environment`` remembers the process that opened it and compares
/// it with ``current`` before it touches LMDB. The cache is refreshed in a forked child by a
/// `pthread_atfork` child handler, registered when the cache is first used (that is, before any
/// environment exists). A child made with a raw `fork` system call that bypasses the C library
/// (so that no atfork handler runs) is not detected.
///
/// `@unchecked Sendable`: `pid` is written when the shared instance is made (under the static's
/// one-time initialization) and by the atfork child handler, which runs in a new child while it
/// has a single thread; every other access is a read. (A plain value rather than
/// `Synchronization.Atomic`, which would raise the Apple platform floor to macOS 15 / iOS 18;
/// exclusivity is not checked at run time, as no access can overlap a write: with the check,
/// every binding operation cost about 90 instructions more.)
@usableFromInline
final class ProcessIdentity: @unchecked Sendable {
    @usableFromInline static let shared = ProcessIdentity()

    @usableFromInline @exclusivity(unchecked) var pid: Int32

    private init() {
        pid = getpid()
        _ = pthread_atfork(nil, nil, {
            ProcessIdentity.shared.pid = getpid()
        })
    }

    /// The ID of the running process.
    @inlinable static var current: Int32 { shared.pid }
}

import CDepotAtomic
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small number for the calling thread, unique among the threads alive at one time: the
/// reader gate picks a thread's stripe (its reader counter and cached read transaction) with it,
/// so that threads reading at once touch no common memory.
///
/// The number is handed out on a thread's first read and given back when the thread exits, and
/// the smallest free number is handed out first: the numbers in use stay below the number of
/// threads alive, whatever the thread churn. The fast path reads a C thread-local variable;
/// the thread-specific slot of `key` holds the number too, for its destructor.
@usableFromInline
package enum ThreadIndex {
    /// The thread-specific slot holding `index + 1` (0, nil, for a thread without a number).
    static let key: pthread_key_t = makeKey()

    /// The calling thread's number.
    @inlinable
    package static var current: Int {
        let stored = cdepot_thread_number_get()
        if _fastPath(stored != 0) { return stored &- 1 }
        return assign()
    }

    /// Numbers given back by exited threads, and the next never-used number; guarded by `lock`.
    nonisolated(unsafe) private static var free: [Int] = []
    nonisolated(unsafe) private static var next = 0
    private static let lock = NSLock()

    @usableFromInline
    static func assign() -> Int {
        let index = lock.withLock { () -> Int in
            if let smallest = free.indices.min(by: { free[$0] < free[$1] }) {
                free.swapAt(smallest, free.count - 1)
                return free.removeLast()
            }
            defer { next += 1 }
            return next
        }
        pthread_setspecific(key, UnsafeMutableRawPointer(bitPattern: index + 1))
        cdepot_thread_number_set(index + 1)
        return index
    }

    /// Gives a number back (the key's destructor, run as a thread exits).
    static func release(_ stored: UnsafeMutableRawPointer?) {
        guard let stored else { return }
        let index = Int(bitPattern: stored) - 1
        cdepot_thread_number_set(0) // a later call on this exiting thread takes a number again
        lock.withLock { free.append(index) }
    }

    private static func makeKey() -> pthread_key_t {
        var key = pthread_key_t()
        pthread_key_create(&key) { ThreadIndex.release($0) }
        return key
    }
}

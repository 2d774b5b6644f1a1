#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process-wide table of open environments, keyed by the folder's device and inode.
///
/// LMDB forbids opening one file twice in a process (its POSIX locks are per process, so closing
/// the second handle would drop the first one's locks). Depot therefore hands out the same
/// ``Environment`` for every spelling of a path, symlinks included. An environment being closed
/// by its last owner is waited for before the same folder can be opened again.
final class EnvironmentRegistry: @unchecked Sendable {
    // @unchecked Sendable: `entries` is only touched with `lock` held.
    static let shared = EnvironmentRegistry()

    /// The folder's device and inode, and the process that opened it (so that a child forked
    /// after the open gets a handle of its own, never the parent's).
    struct Key: Hashable { let device: UInt64; let inode: UInt64; let process: Int32 }

    private struct Entry {
        weak var environment: Environment?
    }

    private let lock = ConditionLock()
    private var entries: [Key: Entry] = [:]

    /// Returns the live environment for `key`, or creates one with `make` while holding the table.
    func environment(for key: Key, make: () throws -> Environment) throws -> Environment {
        lock.lock()
        defer { lock.unlock() }
        while let entry = entries[key] {
            if let existing = entry.environment { return existing }
            // The last owner released it and its deinit is closing it right now: wait for that.
            lock.wait()
        }
        let environment = try make()
        entries[key] = Entry(environment: environment)
        return environment
    }

    /// Closes an environment and removes `key`, then wakes anyone waiting to reopen it.
    func remove(_ key: Key, closing: () -> Void) {
        lock.withLock {
            closing()
            entries[key] = nil
            lock.broadcast()
        }
    }
}

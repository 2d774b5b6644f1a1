import ArgumentParser
import DepotLMDB
import Foundation

/// Stores this run reads without a place in LMDB's reader table, and what each one's last
/// transaction was when it was opened.
///
/// On a read-only file system LMDB runs without `lock.mdb` (``Environment/registersReaders`` is
/// false): a process writing the same file through another mount cannot see this run's snapshot
/// and may reuse the pages it reads. What is read is then sound only if nothing was committed
/// meanwhile, which the meta pages tell: a command that read such a store checks them at its end
/// (``reportingErrors(json:_:)``) and says so when they moved, rather than reporting damage or
/// results that may come from two versions of the store.
///
/// Guarded by a lock (`NSLock`: `Synchronization.Mutex` needs macOS 15): written when a command
/// opens a store, read when it ends, on any thread.
enum UnguardedReads {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var watched: [String: UInt64?] = [:]

    /// Remembers `path` (opened by `env`) when LMDB keeps no reader table for it.
    static func watch(_ env: Environment) {
        guard !env.registersReaders else { return }
        watch(folder: env.path)
    }

    /// Remembers `folder` and its last transaction now, for a reader LMDB cannot register.
    static func watch(folder: String) {
        memoryFaultUnguarded = true
        let transaction = FileValidator.lastTransactionID(folder: folder)
        lock.withLock {
            if watched[folder] == nil { watched[folder] = .some(transaction) }
        }
    }

    /// Whether `folder` is on a read-only file system, where LMDB cannot register readers.
    static func isOnReadOnlyFileSystem(_ folder: String) -> Bool {
        var fs = statvfs()
        return statvfs(folder, &fs) == 0 && fs.f_flag & UInt(ST_RDONLY) != 0
    }

    /// For each watched store written since it was opened: its folder and the transactions
    /// before and after (nil where the meta pages could not be read).
    /// Each is reported once: the ones returned are no longer watched.
    static func changes() -> [(folder: String, before: UInt64?, after: UInt64?)] {
        let seen = lock.withLock {
            defer { watched.removeAll() }
            return watched
        }
        return seen.keys.sorted().compactMap { folder in
            let before = seen[folder] ?? nil
            let after = FileValidator.lastTransactionID(folder: folder)
            guard before == nil || after == nil || before != after else { return nil }
            return (folder, before, after)
        }
    }

    /// What the user is told about `change`: why what was read cannot be trusted.
    static func explanation(_ change: (folder: String, before: UInt64?, after: UInt64?)) -> String {
        let moved = switch (change.before, change.after) {
        case let (before?, after?): "(transaction \(before) → \(after))"
        default: "(its meta pages could not be read to tell)"
        }
        return "'\(change.folder)' was written while this command read it \(moved): it is on a read-only file system, "
            + "where LMDB keeps no reader table, so the writer could reuse the pages being read. "
            + "Read a copy (depot backup) or read it where the store is writable"
    }

    /// Throws `changedWhileReading` when a watched store was written since it was opened.
    static func confirmUnchanged() throws {
        guard let change = changes().first else { return }
        throw CLIFailure(code: "changedWhileReading", message: "what was read may not be sound: " + explanation(change))
    }

    /// At the end of a command: `error`, or when a watched store was written meanwhile, the
    /// failure that says so (the command's own message kept in front); on success a warning.
    /// An `ExitCode` (the command reported its own failure) is kept as it is.
    static func settle(_ error: (any Error)?) -> (any Error)? {
        guard let change = changes().first else { return error }
        let warning = "what this command read (what it printed) may mix versions of the store: " + explanation(change)
        guard let error else {
            OutputConvention.printWarning(warning)
            return nil
        }
        // The command reported its own failure (damaged records it skipped, say): the reason
        // they may not be damage is added as a warning.
        if error is ExitCode || error is CleanExit {
            OutputConvention.printWarning(warning)
            return error
        }
        if let failure = error as? CLIFailure, failure.code == "changedWhileReading" { return error }
        return CLIFailure(code: "changedWhileReading", message: userMessage(for: error) + "; this may not be damage: " + explanation(change))
    }
}

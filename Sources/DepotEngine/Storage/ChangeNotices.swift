import Foundation

/// Wake-ups for an ``ExternalChangeWatcher``: notices that another writer may have logged
/// changes, so that the watcher reads the change log at once instead of at its next poll.
///
/// A driver offers them through ``StorageDriver/changeNotices()`` (PostgreSQL: `LISTEN`/`NOTIFY`).
/// Notices are hints, never the source of truth: one may be spurious, duplicated, late or lost,
/// and the watcher reads the change log on every wake-up exactly as when it polls. Its polling
/// interval stays the upper bound of every wait (the fallback where notices cannot be had, as on
/// a standby server, or while their connection is being restored).
public protocol ChangeNotices: AnyObject, Sendable {
    /// Blocks until a notice arrives (one that arrived since the previous call counts) or until
    /// `deadline` passes, or ``close()`` is called; returns whether a notice arrived. Must return
    /// by `deadline` (give or take the time to reopen a lost connection, which an implementation
    /// bounds and documents).
    func wait(until deadline: Date) -> Bool
    /// The highest change-log stamp (see ``StorageTransaction/changeLogStamp()``) that the
    /// notices so far named as committed; 0 when none did. A watcher whose reads stop below it
    /// (a writer that is still running holds the horizon back) reads again soon.
    var committedStamp: UInt64 { get }
    /// Stops the notices: a waiting ``wait(until:)`` returns false at once, and so do later
    /// calls. Never blocks.
    func close()
}

extension StorageDriver {
    /// No notices (the default): watchers poll. LMDB polls by design — its check is a read of
    /// shared memory (the last transaction ID).
    public func changeNotices() -> (any ChangeNotices)? { nil }
}

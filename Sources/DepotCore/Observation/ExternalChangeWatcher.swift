import Foundation

/// Notices commits made by other processes (or other environments on the same files) and
/// reports what they changed, as `ChangeSet`s with `isExternal` true, to the
/// store's observers and `changes()` streams.
///
/// Start one with ``Store/watchExternalChanges(every:)``; it polls every `interval` (50 ms by
/// default): for LMDB it first compares the last transaction ID (`mdb_env_info`), a read of
/// shared memory, and reads the change log only when it moved. A driver with
/// `StorageDriver.changeNotices()` (PostgreSQL: `LISTEN`/`NOTIFY`) wakes it when another
/// writer committed logged changes, so it reads at once; the interval then only bounds the wait
/// (the fallback when notices are lost or unavailable). While it runs it holds a lease
/// that makes writers (in every process) log their changes; stop it (or release it) and writers
/// stop logging within a few seconds. See `ChangeLog` (internal) for the design.
///
/// Before a change set is published, the key/value caches of this process (``KeyValueStore``)
/// drop the keys it names, so a read made on the notice returns the new value.
///
/// Several watchers of one store (two explicit ones, or one beside the watcher that
/// ``Persistent`` objects share) publish each commit once: the store's core keeps the log
/// position published up to, and a watcher publishes only what lies beyond it.
public final class ExternalChangeWatcher: @unchecked Sendable {
    // @unchecked Sendable: `stopped` is guarded by `lock`; the thread owns the rest (`notices`
    // is Sendable and only closed from other threads).
    private let store: Store
    private let core: StoreCore
    private let interval: Duration
    private let lease: [UInt8]
    private let lock = NSCondition()
    private var stopped = false
    /// Whether the core counts this watcher (``StoreCore/watcherStarts(at:)``); guarded by `lock`.
    private var registered = false
    private var nextSequence: UInt64 = 0
    /// Whether the log held an entry with the last possible stamp (only a damaged log does): it
    /// was read, and nothing can follow it.
    private var logEnded = false
    private var lastTransactionID = -1
    private var leaseRenewedAt: Double = 0
    /// The driver's wake-ups, if it has them.
    private let notices: (any ChangeNotices)?
    /// While notices name a committed entry that the last read could not reach yet (a writer
    /// still running holds the horizon below it): seconds until the next read (from 2 ms,
    /// doubling up to 0.25 s or the interval if shorter); 0 otherwise.
    private var catchUpDelay: Double = 0

    /// Shortest polling interval (shorter ones would spin a core).
    public static let minimumInterval: Duration = .milliseconds(1)
    /// Longest polling interval: the watcher renews its 10-second lease between polls, so a
    /// longer wait would let the lease lapse and writers stop logging their changes.
    public static let maximumInterval: Duration = .seconds(5)

    init(store: Store, interval: Duration) throws {
        guard interval >= Self.minimumInterval && interval <= Self.maximumInterval else {
            throw DepotError.invalidOption("watchExternalChanges(every:)", allowed: "1 ms to 5 s")
        }
        self.store = store
        self.core = store.core
        self.interval = interval
        self.lease = Array((ChangeLog.leasePrefix + UUID().uuidString).utf8)
        self.notices = store.core.driver.changeNotices()
        try renewLease()
        core.refreshLeaseCheck()
        let start = try core.read { txn in try ChangeLog.start(txn) }
        nextSequence = core.watcherStarts(at: start)
        lock.withLock { registered = true }
        let thread = Thread { [weak self] in self?.run() }
        thread.name = "depot.watcher"
        thread.start()
    }

    deinit { stop() }

    /// Stops watching and gives up the lease.
    public func stop() {
        let (first, counted): (Bool, Bool) = lock.withLock {
            defer { stopped = true; registered = false; lock.broadcast() }
            return (!stopped, registered)
        }
        if counted { core.watcherStops() }
        if first {
            notices?.close()
            do {
                try core.write { txn in try ChangeLog.releaseLease(lease, txn) }
            } catch {
                logError("external change watcher: could not release its lease (it expires within 10 s)", error)
            }
        }
    }

    private func renewLease() throws {
        let expiry = Date().timeIntervalSince1970 + 10
        try core.write { txn in try ChangeLog.renewLease(lease, until: expiry, txn) }
        leaseRenewedAt = Date().timeIntervalSince1970
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    private func run() {
        let (seconds, attoseconds) = interval.components
        let period = Double(seconds) + Double(attoseconds) / 1e18
        // With notices, the first read comes at once: a commit notified before they were set up
        // is read now rather than at the end of the first interval.
        var readNow = notices != nil
        while true {
            if !readNow {
                let deadline = Date().addingTimeInterval(catchUpDelay > 0 ? min(catchUpDelay, period) : period)
                if let notices {
                    // `stop()` closes the notices, which ends this wait.
                    if isStopped { return }
                    _ = notices.wait(until: deadline)
                } else {
                    let done: Bool = lock.withLock {
                        if !stopped { _ = lock.wait(until: deadline) }
                        return stopped
                    }
                    if done { return }
                }
            }
            readNow = false
            if isStopped { return }
            if Date().timeIntervalSince1970 - leaseRenewedAt > 2 {
                do { try renewLease() } catch { logError("external change watcher: could not renew its lease", error) }
            }
            poll()
            if let notices {
                // A notice named an entry this read did not reach: read again soon.
                catchUpDelay = notices.committedStamp >= nextSequence ? (catchUpDelay == 0 ? 0.002 : min(catchUpDelay * 2, 0.25)) : 0
            }
        }
    }

    private func logError(_ message: String, _ error: any Error) {
        core.driver.logger.log(.error, message, metadata: ["location": core.driver.location, "error": "\(error)"], source: "Depot")
    }

    /// Reads new change-log entries and publishes those of other writers.
    func poll() {
        if let native = core.native {
            guard let last = native.lastCommitID() else { return }
            if last == lastTransactionID { return }
            lastTransactionID = last
        }
        if logEnded { return }
        var entries: [(position: UInt64, entry: ChangeLog.Entry)] = []
        var ended = false
        let start = nextSequence
        let next: UInt64?
        do { next = try core.read { txn in
            // With stamps, only below the horizon: every writer below it has ended, so an entry
            // that commits later can never have a stamp this read has passed.
            let horizon = try txn.changeLogHorizon()
            guard let log = try txn.keyspace(named: ChangeLog.keyspace, create: false) else { return horizon.map { max($0, start) } ?? start }
            var seq = start
            let upper = horizon.map { h in BigEndian<UInt64>.withBytes(of: h) { [UInt8]($0) } }
            if let horizon, horizon <= start { return start }
            try txn.scan(log, lower: BigEndian<UInt64>.withBytes(of: start) { [UInt8]($0) }, upper: upper, prefix: nil, reverse: false) { key, value in
                // The last possible stamp (only a damaged log holds it) ends the log: read once.
                let position = try BigEndian<UInt64>.decode(key)
                let (after, overflow) = position.addingReportingOverflow(1)
                seq = overflow ? UInt64.max : after
                ended = overflow
                do {
                    entries.append((position, try ChangeLog.Entry.decode(value)))
                } catch {
                    logError("external change watcher: skipped a change-log entry that does not decode", error)
                }
                return true
            }
            // With stamps the next read starts at the horizon (stamps below it that wrote no
            // entry were read-only, rolled back, or logged nothing).
            return horizon.map { max($0, seq) } ?? seq
        } } catch {
            logError("external change watcher: could not read the change log", error)
            next = nil
        }
        guard let next else { return }
        nextSequence = next
        if ended { logEnded = true }
        if isStopped { return }
        // Through the core: another watcher of this store may have read (and published) the
        // same entries.
        core.publishExternal(entries, through: next, ended: ended, from: store)
    }
}

extension Store {
    /// Starts watching for commits of other processes (see ``ExternalChangeWatcher``); keep the
    /// returned object for as long as you want to be told.
    ///
    /// - Parameter interval: how often to poll, from ``ExternalChangeWatcher/minimumInterval``
    ///   (1 ms) to ``ExternalChangeWatcher/maximumInterval`` (5 s). Where the driver wakes the
    ///   watcher (`StorageDriver.changeNotices()`, PostgreSQL), the longest wait between reads.
    /// - Throws: `DepotError` `.invalidOption` naming `watchExternalChanges(every:)` and the
    ///   range when `interval` is outside it; a storage error when the lease cannot be written.
    public func watchExternalChanges(every interval: Duration = .milliseconds(50)) throws -> ExternalChangeWatcher {
        try ExternalChangeWatcher(store: self, interval: interval)
    }
}

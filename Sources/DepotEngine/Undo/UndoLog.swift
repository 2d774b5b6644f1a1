/// The before- and after-images of the records one transaction changed, kept by the record
/// pipeline when the store handle records undo history (see DepotCore's `UndoHistory`).
@usableFromInline
package final class UndoLog {
    /// Where a record lives, independent of any transaction's handles.
    package enum Target: Hashable {
        case collection(alias: String, collection: String, kind: IDKind)
        case keyValue(alias: String)
    }

    /// What the transaction of this log does to the history: a new step, or the undo or redo
    /// of one (set by the undo's or redo's own transaction, so that commits of other threads
    /// through the same handle meanwhile stay ordinary steps).
    package enum Purpose { case recording, undoing, redoing }

    /// This log's purpose (``Purpose/recording`` unless an undo or redo set it).
    package var purpose = Purpose.recording

    /// One record's images.
    package struct Entry {
        /// Where the record lives.
        package var target: Target
        /// The record's key.
        package var key: [UInt8]
        /// The sealed record before the transaction (nil: absent).
        package var before: [UInt8]?
        /// The sealed record after the transaction (nil: absent); filled by ``finish(_:)``.
        package var after: [UInt8]?
        /// A display form of the ID, for conflict messages.
        package var displayID: String
    }

    private struct Seen: Hashable {
        var target: Target
        var key: PackedKey
    }

    /// The records changed so far, in the order of their first change.
    package private(set) var entries: [Entry] = []
    private var seen: Set<Seen> = []

    /// An empty log (one per transaction that records undo history).
    package init() {}

    /// Whether no record was captured.
    package var isEmpty: Bool { entries.isEmpty }
    /// A point to revert to.
    package var mark: Int { entries.count }

    /// Records the state of `key` before its first change in this transaction.
    package func captureBefore(_ target: RecordTarget, key: UnsafeRawBufferPointer, txn: any StorageTransaction) throws {
        let where_ = target.undoTarget
        guard seen.insert(Seen(target: where_, key: PackedKey(key))).inserted else { return }
        let before = try txn.withValue(forKey: key, in: target.keyspace) { [UInt8]($0) }
        entries.append(Entry(target: where_, key: [UInt8](key), before: before, after: nil,
                             displayID: displayIDOfKey(key, kind: target.kind)))
    }

    /// Forgets what was captured after `mark` (a savepoint rolled back).
    package func revert(to mark: Int) {
        guard entries.count > mark else { return }
        // Only the reverted entries leave `seen` (rebuilding it from every entry made n rolled
        // back savepoints in one transaction quadratic).
        for entry in entries[mark...] {
            entry.key.withUnsafeBytes { _ = seen.remove(Seen(target: entry.target, key: PackedKey($0))) }
        }
        entries.removeLast(entries.count - mark)
    }

    /// Reads the after-images, at the end of the transaction (before it commits). Entries that
    /// did not change in the end are dropped.
    package func finish(_ transaction: some RecordTransaction) throws {
        let txn = transaction.storageTransaction
        var kept: [Entry] = []
        for var entry in entries {
            guard let target = try transaction.target(of: entry.target, create: false) else {
                if entry.before != nil { kept.append(entry) }
                continue
            }
            entry.after = try entry.key.withUnsafeBytes { k in try txn.withValue(forKey: k, in: target.keyspace) { [UInt8]($0) } }
            if entry.after != entry.before { kept.append(entry) }
        }
        entries = kept
    }
}

extension RecordTarget {
    /// Where this target's records live, as the undo log names it.
    package var undoTarget: UndoLog.Target {
        isKeyValue ? .keyValue(alias: alias) : .collection(alias: alias, collection: collection, kind: kind)
    }
}

extension RecordTransaction {
    /// The record target of an undo entry in this transaction (nil: absent and `create` false).
    package func target(of target: UndoLog.Target, create: Bool) throws -> RecordTarget? {
        switch target {
        case let .collection(alias, collection, kind):
            return try self.target(alias: alias, collection: collection, kind: kind, create: create)
        case let .keyValue(alias):
            return try keyValueTarget(alias: alias, create: create)
        }
    }
}

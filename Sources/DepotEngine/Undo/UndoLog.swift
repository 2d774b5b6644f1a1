
/// The before- and after-images of the records one transaction changed, kept by the record
/// pipeline when the store handle records undo history (see ``UndoHistory``).
final class UndoLog {
    /// Where a record lives, independent of any transaction's handles.
    enum Target: Hashable {
        case collection(alias: String, collection: String, kind: IDKind)
        case keyValue(alias: String)
    }

    struct Entry {
        var target: Target
        var key: [UInt8]
        /// The sealed record before the transaction (nil: absent).
        var before: [UInt8]?
        /// The sealed record after the transaction (nil: absent); filled by ``finish(_:)``.
        var after: [UInt8]?
        /// A display form of the ID, for conflict messages.
        var displayID: String
    }

    private struct Seen: Hashable {
        var target: Target
        var key: PackedKey
    }

    private(set) var entries: [Entry] = []
    private var seen: Set<Seen> = []

    var isEmpty: Bool { entries.isEmpty }
    var mark: Int { entries.count }

    /// Records the state of `key` before its first change in this transaction.
    func captureBefore(_ target: RecordTarget, key: UnsafeRawBufferPointer, txn: any StorageTransaction) throws {
        let where_ = target.undoTarget
        guard seen.insert(Seen(target: where_, key: PackedKey(key))).inserted else { return }
        let before = try txn.withValue(forKey: key, in: target.keyspace) { [UInt8]($0) }
        entries.append(Entry(target: where_, key: [UInt8](key), before: before, after: nil,
                             displayID: displayIDOfKey(key, kind: target.kind)))
    }

    /// Forgets what was captured after `mark` (a savepoint rolled back).
    func revert(to mark: Int) {
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
    func finish(_ view: DocumentTransaction) throws {
        var kept: [Entry] = []
        for var entry in entries {
            guard let target = try view.undoTarget(entry.target, create: false) else {
                if entry.before != nil { kept.append(entry) }
                continue
            }
            entry.after = try entry.key.withUnsafeBytes { k in try view.context.txn.withValue(forKey: k, in: target.keyspace) { [UInt8]($0) } }
            if entry.after != entry.before { kept.append(entry) }
        }
        entries = kept
    }
}

extension RecordTarget {
    var undoTarget: UndoLog.Target {
        isKeyValue ? .keyValue(alias: alias) : .collection(alias: alias, collection: collection, kind: kind)
    }
}

extension DocumentTransaction {
    /// The record target of an undo entry in this transaction.
    func undoTarget(_ target: UndoLog.Target, create: Bool) throws -> RecordTarget? {
        switch target {
        case let .collection(alias, collection, kind):
            return try context.target(alias: alias, collection: collection, kind: kind, create: create)
        case let .keyValue(alias):
            return try context.keyValueTarget(alias: alias, create: create)
        }
    }

    /// Captures the before-image of `key` when this transaction records undo history.
    @inline(__always)
    func captureUndo(_ target: RecordTarget, key: UnsafeRawBufferPointer) throws {
        if let log = context.undoLog { try log.captureBefore(target, key: key, txn: context.txn) }
    }
}

import Foundation

/// Undo and redo of the commits made through one store handle (DLData's
/// `dataManagerSupportsUndo`). Turn it on with ``Store/enableUndo(levels:)``.
///
/// Each synchronous `write {}`, explicit transaction and unit-of-work `save()` made through the
/// handle is one step (or part of a group: ``group(_:)``). ``undo()`` applies the step's inverse in
/// a new write transaction through the record pipeline — the previous content, sync status and
/// index entries come back, the revision moves forward — and observers see it as an ordinary
/// change set; ``redo()`` applies the step again. A record changed by anyone else since the step
/// (another handle, another process, a later write) makes undo or redo fail with
/// `DepotError.Code/undoConflict` and change nothing: never a silent overwrite.
///
/// Not recorded: group-committed `try await write {}` closures (they share a transaction with
/// other callers). Commits of other threads through the handle while an undo or redo runs stay
/// steps of their own (an undo never files them as its own), but which step is the latest is
/// then a race: undo from the thread that makes the changes.
public final class UndoHistory: @unchecked Sendable {
    // @unchecked Sendable: every field is guarded by `lock`.
    struct Step {
        var entries: [UndoLog.Entry]
        /// Tells this step from the others, so that an undo removes the step it undid even
        /// when a commit of another thread pushed one meanwhile.
        var number: UInt64 = 0
    }

    private let lock = NSLock()
    private var undoSteps: [Step] = []
    private var redoSteps: [Step] = []
    private var groupDepth = 0
    private var openGroup: [UndoLog.Entry] = []
    /// Where each record of the open group is in `openGroup`.
    private var openGroupIndex: [GroupKey: Int] = [:]

    private struct GroupKey: Hashable {
        var target: UndoLog.Target
        var key: [UInt8]
    }
    private var stepsMade: UInt64 = 0
    private weak var store: Store?
    /// How many steps are kept (the oldest are forgotten).
    public let levels: Int

    init(store: Store, levels: Int) {
        self.store = store
        self.levels = max(1, levels)
    }

    /// Whether there is a step to undo.
    public var canUndo: Bool { lock.withLock { !undoSteps.isEmpty } }
    /// Whether there is a step to redo.
    public var canRedo: Bool { lock.withLock { !redoSteps.isEmpty } }
    /// How many steps can be undone.
    public var undoCount: Int { lock.withLock { undoSteps.count } }
    /// How many steps can be redone.
    public var redoCount: Int { lock.withLock { redoSteps.count } }

    /// Forgets every step.
    public func removeAll() {
        lock.withLock {
            undoSteps.removeAll()
            redoSteps.removeAll()
            openGroup.removeAll()
            openGroupIndex.removeAll()
        }
    }

    // MARK: Grouping

    /// Starts a group: the commits until the matching ``endGroup()`` are undone as one step.
    public func beginGroup() { lock.withLock { groupDepth += 1 } }

    /// Ends a group started with ``beginGroup()``.
    public func endGroup() {
        lock.withLock {
            guard groupDepth > 0 else { return }
            groupDepth -= 1
            if groupDepth == 0 && !openGroup.isEmpty {
                push(Step(entries: openGroup))
                openGroup.removeAll()
                openGroupIndex.removeAll()
            }
        }
    }

    /// Runs `body` as one user action: every commit it makes through the handle is one step.
    public func group<R>(_ body: () throws -> R) rethrows -> R {
        beginGroup()
        defer { endGroup() }
        return try body()
    }

    // MARK: Undo and redo

    /// Undoes the latest step. Returns false when there is none.
    ///
    /// - Throws: `DepotError` with code `DepotError.Code/undoConflict` when a record of the
    ///   step was changed since; the step stays and nothing is written.
    @discardableResult
    public func undo() throws -> Bool {
        guard let step = lock.withLock({ undoSteps.last }) else { return false }
        try apply(step, as: .undoing)
        lock.withLock { undoSteps.removeAll { $0.number == step.number } }
        return true
    }

    /// Redoes the latest undone step. Returns false when there is none.
    @discardableResult
    public func redo() throws -> Bool {
        guard let step = lock.withLock({ redoSteps.last }) else { return false }
        try apply(step, as: .redoing)
        lock.withLock { redoSteps.removeAll { $0.number == step.number } }
        return true
    }

    /// Applies `step`'s inverse in a write transaction whose commit files as `purpose` (only
    /// that transaction's: other threads' commits through the handle stay ordinary steps).
    private func apply(_ step: Step, as purpose: UndoLog.Purpose) throws {
        guard let store else { throw DepotError.ownerReleased("the store of this undo history was released") }
        try store.write { tx in
            tx.context.undoLog?.purpose = purpose
            // A redo step is the recorded undo transaction: both go from its after-images back
            // to its before-images.
            for entry in step.entries.reversed() {
                try tx.restore(entry, expecting: entry.after, to: entry.before)
            }
        }
    }

    // MARK: Recording (called by the store)

    /// A transaction made through the handle committed with these changes.
    func committed(_ entries: [UndoLog.Entry], purpose: UndoLog.Purpose) {
        if entries.isEmpty { return }
        lock.withLock {
            switch purpose {
            case .undoing:
                redoSteps.append(numbered(Step(entries: entries)))
            case .redoing:
                push(Step(entries: entries))
            case .recording:
                redoSteps.removeAll()
                if groupDepth > 0 { addToOpenGroup(entries) } else { push(Step(entries: entries)) }
            }
        }
    }

    /// `step` with a number of its own. The lock is held.
    private func numbered(_ step: Step) -> Step {
        stepsMade &+= 1
        var step = step
        step.number = stepsMade
        return step
    }

    private func push(_ step: Step) {
        undoSteps.append(numbered(step))
        trim()
    }

    private func trim() {
        if undoSteps.count > levels { undoSteps.removeFirst(undoSteps.count - levels) }
    }

    /// Adds a commit's entries to the open group, one entry per record: the first before-image
    /// and the last after-image. O(entries added), however large the group.
    private func addToOpenGroup(_ entries: [UndoLog.Entry]) {
        for entry in entries {
            let key = GroupKey(target: entry.target, key: entry.key)
            if let i = openGroupIndex[key] {
                openGroup[i].after = entry.after
            } else {
                openGroupIndex[key] = openGroup.count
                openGroup.append(entry)
            }
        }
    }
}

extension DocumentTransaction {
    /// Whether two sealed records hold the same flags and payload (revisions aside).
    static func sameContent(_ a: [UInt8]?, _ b: [UInt8]?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        guard a.count >= Record.headerSize, b.count >= Record.headerSize else { return a == b }
        return a[1] == b[1] && a[Record.headerSize...] == b[Record.headerSize...]
    }

    /// Puts a record back as `restore` (nil: absent) if it is exactly `expected` now.
    func restore(_ entry: UndoLog.Entry, expecting expected: [UInt8]?, to restore: [UInt8]?) throws {
        let target = try context.target(of: entry.target, create: restore != nil)
        let current = try target.flatMap { t in
            try entry.key.withUnsafeBytes { k in try context.txn.withValue(forKey: k, in: t.keyspace) { [UInt8]($0) } }
        }
        let name: String
        switch entry.target {
        case .collection(_, let collection, _): name = collection
        case .keyValue: name = StoreLayout.keyValueCollection
        }
        // Compare content and flags, not revisions: undo and redo move revisions forward.
        guard Self.sameContent(current, expected) else { throw DepotError.undoConflict(collection: name, id: entry.displayID) }
        guard let target else { return }
        try entry.key.withUnsafeBytes { key in
            if let restore, restore.count >= Record.headerSize {
                try context.writeRecord(target, key: key, flags: restore[1], displayID: { entry.displayID }) { buffer in
                    buffer.append(contentsOf: restore[Record.headerSize...])
                }
            } else {
                _ = try context.deleteRecord(target, key: key, applyingRules: false) // the step restores every record itself
            }
        }
    }
}

extension Store {
    /// Starts recording undo history for the commits made through this handle (see
    /// ``UndoHistory``), keeping at most `levels` steps (at least one: a smaller number keeps
    /// one); returns the history (the same one, with its own `levels`, if already on).
    @discardableResult
    public func enableUndo(levels: Int = 50) -> UndoHistory {
        lock.withLock {
            if let undoHistoryValue { return undoHistoryValue }
            let history = UndoHistory(store: self, levels: levels)
            undoHistoryValue = history
            return history
        }
    }

    /// The undo history of this handle, if ``enableUndo(levels:)`` was called.
    public var undoHistory: UndoHistory? { lock.withLock { undoHistoryValue } }

    /// Starts an undo log for a transaction made through this handle, when it records history.
    func beginUndoLog(_ tx: DocumentTransaction) {
        guard let history = undoHistory, tx.context.undoLog == nil, !tx.isReadOnly else { return }
        let log = UndoLog()
        tx.context.undoLog = log
        tx.context.txn.afterCommit { [history, log] in history.committed(log.entries, purpose: log.purpose) }
    }

    /// Reads the after-images at the end of a transaction made through this handle.
    func finishUndoLog(_ tx: DocumentTransaction) throws {
        try tx.context.undoLog?.finish(tx.context)
    }
}

extension TransactionContext {
    /// Where a savepoint began: the change recorder's, the nesting depth and the undo log's marks.
    package struct Mark {
        package let recorder: Int
        package let depth: Int
        package var undo: Int = 0
        /// Whether the schema (or the seal) was changed, and the seal checked, before it.
        var changedSchema = false
        var sealingChecked = false
    }

    /// The marks of now (a savepoint begins here).
    package var mark: Mark {
        Mark(recorder: recorder?.mark ?? 0, depth: txn.nestingDepth, undo: undoLog?.mark ?? 0,
             changedSchema: changedSchema, sealingChecked: sealingChecked)
    }

    /// Runs `body` in a savepoint (a child transaction): when it throws, its changes (and its
    /// entries in the change set) are undone and the error rethrown; the rest of the
    /// transaction goes on.
    package func savepoint<R>(_ body: () throws -> R) throws -> R {
        let mark = mark
        do {
            let result = try txn.savepoint { try body() }
            promote(toDepth: mark.depth)
            return result
        } catch {
            revert(to: mark, childDepth: mark.depth + 1)
            throw error
        }
    }

    /// Runs `body` in a savepoint where the driver has them (LMDB without `writeMap`, the
    /// in-memory drivers, PostgreSQL), else as it is.
    func allOrNothing<R>(_ body: () throws -> R) throws -> R {
        engine.driver.capabilities.contains(.savepoints) ? try savepoint(body) : try body()
    }

    /// Forgets what was done after `mark`: the child transaction at `childDepth` (and any
    /// deeper) was aborted, so handles, descriptors and schemas changed there are gone too.
    package func revert(to mark: Mark, childDepth: Int) {
        recorder?.revert(to: mark.recorder)
        undoLog?.revert(to: mark.undo)
        loggedMark = min(loggedMark, mark.recorder)
        metaCache = nil // it may have been created inside the aborted child: look it up again
        targets.removeAll { $0.depth >= childDepth }
        kvTargets = kvTargets.filter { $0.value.depth < childDepth }
        typeFacts.removeAll()
        pendingDescriptors.removeAll { $0.depth >= childDepth }
        schemas.removeAll()
        schemaVersionValue = nil
        // What the child changed is gone: a schema change or seal made in it is made again.
        changedSchema = mark.changedSchema
        sealingChecked = mark.sealingChecked
        for target in targets.values { target.schemaLoaded = false }
        parkedReferences.removeAll()
    }

    /// Entries made inside a committed child now belong to its parent.
    package func promote(toDepth target: Int) {
        let depth = max(0, target)
        for entry in targets.values where entry.depth > depth { entry.depth = depth }
        for entry in kvTargets.values where entry.depth > depth { entry.depth = depth }
        for i in pendingDescriptors.indices where pendingDescriptors[i].depth > depth { pendingDescriptors[i].depth = depth }
    }
}

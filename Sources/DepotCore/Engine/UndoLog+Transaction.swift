// The undo log itself is the record engine's (DepotEngine, Undo/UndoLog.swift); here, how a
// document transaction finds an entry's records again (the record pipeline, in DepotEngine,
// captures the before-images).

extension DocumentTransaction {
    /// The record target of an undo entry in this transaction.
    func undoTarget(_ target: UndoLog.Target, create: Bool) throws -> RecordTarget? {
        try context.target(of: target, create: create)
    }
}

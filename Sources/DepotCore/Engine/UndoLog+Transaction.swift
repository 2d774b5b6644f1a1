// The undo log itself is the record engine's (DepotEngine, Undo/UndoLog.swift); here, how a
// document transaction feeds it.

extension DocumentTransaction {
    /// The record target of an undo entry in this transaction.
    func undoTarget(_ target: UndoLog.Target, create: Bool) throws -> RecordTarget? {
        try context.target(of: target, create: create)
    }

    /// Captures the before-image of `key` when this transaction records undo history.
    @inline(__always)
    func captureUndo(_ target: RecordTarget, key: UnsafeRawBufferPointer) throws {
        if let log = context.undoLog { try log.captureBefore(target, key: key, txn: context.txn) }
    }
}

// The record engine's transaction context (DepotEngine, Transaction/TransactionContext.swift);
// here, how a store makes one for a storage transaction and hooks it to the commit: observers
// and their change sets belong to the document layer.

extension TransactionContext {
    /// The context of `txn`, created (and hooked to its commit) on first use: it records
    /// changes when the store has observers, logs them when watchers in other processes
    /// listen, and after the commit tells the engine (descriptors, schemas), the process's
    /// key/value caches (the keys it wrote, whichever path wrote them) and the observers.
    /// `recordingAlways`: records changes even without observers now, for a transaction that
    /// stays open while its thread runs other code (an explicit one): an observer added before
    /// its commit is told of it.
    static func of(_ txn: any StorageTransaction, core: StoreCore, store: Store, recordingAlways: Bool = false) -> TransactionContext {
        if let existing = txn.attachment as? TransactionContext { return existing }
        let logs = !txn.isReadOnly && core.engine.externalWatchersActive(txn)
        let context = TransactionContext(txn: txn, engine: core.engine, recordChanges: !txn.isReadOnly && (recordingAlways || core.hasObservers),
                                         logChanges: logs)
        txn.attachment = context
        if !txn.isReadOnly {
            let commitID = txn.commitID.map { Int(clamping: $0) }
            txn.afterCommit { [context, store] in
                context.committed()
                let core = store.core
                // Caches first, so that whoever is told can read the new values at once.
                if !context.keyValueWrites.isEmpty { KeyValueCacheRegistry.shared.invalidate(context.keyValueWrites, core: core) }
                if let recorder = context.recorder, !recorder.isEmpty, core.hasObservers {
                    core.publish(recorder.changeSet(transactionID: commitID), from: store)
                }
            }
        }
        return context
    }
}

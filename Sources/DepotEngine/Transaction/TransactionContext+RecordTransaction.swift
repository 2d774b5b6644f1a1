/// What the engine's parts that find a record's place again by name (the undo log's
/// after-images) ask of a transaction (`RecordTransaction`): the storage transaction, and the
/// collections and key/value keyspaces resolved in it.
extension TransactionContext: RecordTransaction {
    /// The storage transaction this context is bound to.
    package var storageTransaction: any StorageTransaction { txn }
}

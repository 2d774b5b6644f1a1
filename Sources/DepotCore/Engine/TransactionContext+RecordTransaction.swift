/// What the record engine in DepotEngine asks of a transaction (`RecordTransaction`): the
/// storage transaction, and the collections and key/value keyspaces resolved in it.
extension TransactionContext: RecordTransaction {
    /// The storage transaction this context is bound to.
    package var storageTransaction: any StorageTransaction { txn }
}

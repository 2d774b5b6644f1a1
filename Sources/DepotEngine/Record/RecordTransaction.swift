/// What the record engine needs from the transaction of the layer above it: the storage
/// transaction, and the record targets (collections, the key/value kit's keyspaces) resolved in
/// it. ``TransactionContext`` conforms; the engine's parts that find a record's place
/// again by name (the undo log's after-images) take one.
package protocol RecordTransaction: AnyObject {
    /// The storage transaction the records are read and written in.
    var storageTransaction: any StorageTransaction { get }

    /// The collection `collection` of `alias`, whose keys are of `kind`: nil when it does not
    /// exist and `create` is false; an error when it exists with another kind of key.
    func target(alias: String, collection: String, kind: IDKind, create: Bool) throws -> RecordTarget?

    /// The key/value kit's records of `alias`: nil when absent and `create` is false.
    func keyValueTarget(alias: String, create: Bool) throws -> RecordTarget?
}

/// What schema reconciliation and collection drops (``SchemaWriting/reconcile(_:declared:tracksSyncStatus:version:typeName:)``,
/// ``SchemaWriting/dropCollection(_:applyingDeleteRules:)``) ask of the transaction of the layer
/// above, beyond what the record pipeline asks (``RecordWriting``): the alias it works on, the
/// store's meta records and record transform, the collections resolved in it, and where it
/// keeps the schemas in force. DepotCore's `DocumentTransaction` conforms (each witness forwards
/// to its transaction context).
package protocol SchemaWriting: RecordWriting {
    /// The alias this transaction's view reads and writes.
    var alias: String { get }
    /// The store's record transform, if any (indexes would hold field values untransformed).
    var recordTransform: (any RecordTransform)? { get }

    /// The meta keyspace of a write transaction.
    func writableMeta() throws -> Keyspace
    /// Meta records whose keys start with `prefix` (none when the meta keyspace is absent).
    func metaEntries(prefix: [UInt8]) throws -> [(key: [UInt8], value: [UInt8])]

    /// A collection whatever its ID kind; nil when it does not exist.
    func existingTarget(alias: String, collection: String) throws -> RecordTarget?
    /// Forgets a collection whose keyspace was dropped in this transaction.
    func forgetCollection(alias: String, collection: String)

    /// Records a schema change made in this transaction (meta records already written): the
    /// store's schema version is bumped once per transaction.
    func schemaChanged(alias: String, collection: String, to schema: CollectionSchema) throws
    /// Records that schemas were removed in this transaction.
    func schemaDropped() throws
}

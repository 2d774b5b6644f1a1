/// What the record pipeline (``RecordWriting/writeRecord(_:key:flags:expected:displayID:encode:)``
/// and its siblings) asks of the transaction of the layer above it: the storage transaction and
/// its key limit, the collection schemas in force, a buffer to encode into, the change recorder
/// and undo log, and the hooks of the features the pipeline calls back (delete rules, parked
/// references, savepoints).
///
/// DepotCore's `DocumentTransaction` conforms. The pipeline is inlinable, so that it is
/// specialized where the conforming type is known: its calls to these requirements are direct
/// calls there, as if the pipeline were written in that module.
package protocol RecordWriting: AnyObject {
    /// The storage transaction records are read and written in.
    var recordStorage: any StorageTransaction { get }
    /// The storage's longest key (`StorageTransaction.maxKeySize`), read once per transaction.
    var recordKeyLimit: Int { get }
    /// Throws a typed error when this is a read-only transaction.
    func requireWritable(_ operation: @autoclosure () -> String) throws
    /// The schema of a collection in force in this transaction.
    func schema(alias: String, collection: String) throws -> CollectionSchema

    /// An empty buffer with capacity, lent to one write; give it back with ``giveBackRecordBuffer(_:)``.
    func takeRecordBuffer() -> [UInt8]
    /// Takes back the buffer taken last.
    func giveBackRecordBuffer(_ buffer: [UInt8])

    /// The recorder of this transaction's changes (nil: nobody listens).
    var changeRecorder: ChangeRecorder? { get }
    /// Before- and after-images for undo history (nil: not recorded).
    var undoLog: UndoLog? { get }

    /// Called after every change of the record under `key` of `target`: what a feature kept
    /// about that record in this transaction (a referenced document already parked) is stale.
    func recordChanged(_ target: RecordTarget, key: UnsafeRawBufferPointer)
    /// Called after a collection was cleared (``recordChanged(_:key:)`` for every record).
    func recordsCleared()

    /// The delete rules registered for documents of `collection` (the pipeline keeps them on
    /// the target).
    func registeredDeleteRules(for collection: String) -> [RegisteredDeleteRule]
    /// Applies the delete rules of `target` to the record under `key` before it is deleted.
    /// Returns false when that record's delete is already under way further up (a cascade came
    /// back to it): the pipeline then leaves it.
    func applyDeleteRules(_ target: RecordTarget, key: UnsafeRawBufferPointer) throws -> Bool
    /// Runs `body` so that it leaves nothing when it throws: in a savepoint where the driver has
    /// them, else as it is.
    func allOrNothing<R>(_ body: () throws -> R) throws -> R
}

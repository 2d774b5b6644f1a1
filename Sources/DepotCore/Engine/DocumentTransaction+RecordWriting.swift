/// What the record pipeline in DepotEngine (`RecordWriting`) asks of a document transaction:
/// the context's storage transaction, schemas, buffers, recorder and undo log, and the document
/// layer's hooks — delete rules (`DeleteRule.swift`), parked references (``ReferenceHook``),
/// savepoints. Each witness is small: the pipeline, specialized here, calls them directly.
extension DocumentTransaction: RecordWriting {
    /// The context's storage transaction.
    package var recordStorage: any StorageTransaction { context.txn }
    /// The context's key limit.
    package var recordKeyLimit: Int { context.maxKeySize }

    package func requireWritable(_ operation: @autoclosure () -> String) throws {
        try context.requireWritable(operation())
    }

    package func schema(alias: String, collection: String) throws -> CollectionSchema {
        try context.schema(alias: alias, collection: collection)
    }

    package func takeRecordBuffer() -> [UInt8] { context.takeBuffer() }
    package func giveBackRecordBuffer(_ buffer: [UInt8]) { context.giveBack(buffer) }

    package var changeRecorder: ChangeRecorder? { context.recorder }
    package var undoLog: UndoLog? { context.undoLog }

    /// A record parked again after it changed is written again.
    package func recordChanged(_ target: RecordTarget, key: UnsafeRawBufferPointer) {
        if !context.parkedReferences.isEmpty {
            context.parkedReferences[.init(target: ObjectIdentifier(target), key: PackedKey(key))] = nil
        }
    }

    package func recordsCleared() { context.parkedReferences.removeAll() }

    package func registeredDeleteRules(for collection: String) -> [RegisteredDeleteRule] {
        context.core.deleteRules(for: collection)
    }

    /// In a savepoint where the driver has them (LMDB without `writeMap`, the in-memory
    /// drivers, PostgreSQL), else as it is.
    package func allOrNothing<R>(_ body: () throws -> R) throws -> R {
        context.core.driver.capabilities.contains(.savepoints) ? try savepoint(body) : try body()
    }
}

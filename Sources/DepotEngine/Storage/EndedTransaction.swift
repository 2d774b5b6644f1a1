/// A transaction that has ended: what a reusable read context (DepotCore's `ReadSessions`) holds
/// between its read transactions, so that it keeps no ended transaction (nor its environment)
/// alive. Every operation fails as an ended transaction's does.
package final class EndedTransaction: StorageTransaction, @unchecked Sendable {
    package static let shared = EndedTransaction()

    private func ended() -> DepotError { DepotError.transactionMisuse("the transaction has already ended") }

    package var isReadOnly: Bool { true }
    package var nestingDepth: Int { 0 }
    package var attachment: AnyObject? {
        get { nil }
        set {}
    }
    package func afterCommit(_ handler: @escaping () -> Void) {}
    package func keyspace(named name: String, create: Bool, multiValue: Bool) throws -> Keyspace? { throw ended() }
    package func withValue<R>(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? { throw ended() }
    package func readValue(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool { throw ended() }
    package func putIfAbsent(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace,
                             existing: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool { throw ended() }
    package func put(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws { throw ended() }
    package func delete(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws -> Bool { throw ended() }
    package func delete(forKey key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, in keyspace: Keyspace) throws -> Bool { throw ended() }
    package func scan(_ keyspace: Keyspace, lower: [UInt8]?, upper: [UInt8]?, prefix: [UInt8]?, reverse: Bool,
                      _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws { throw ended() }
    package func count(_ keyspace: Keyspace) throws -> Int { throw ended() }
    package func clear(_ keyspace: Keyspace) throws { throw ended() }
    package func drop(_ keyspace: Keyspace) throws { throw ended() }
    package func savepoint<R>(_ body: () throws -> R) throws -> R { throw ended() }
    package func isCurrent(_ keyspace: Keyspace) -> Bool { false }
    package var keyspaceHandlesVersion: Int? { nil }
    package var snapshotID: UInt64? { nil }
    package var commitID: UInt64? { nil }
}

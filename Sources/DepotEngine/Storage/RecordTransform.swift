import Foundation

/// Transforms stored records on their way to and from storage: encryption (GarageStorage's
/// data-encryption delegate) without writing a storage driver. Set one with
/// `StoreOptions/recordTransform`; `DepotCrypto`'s `AESGCMTransform` is a ready one.
///
/// Whole records of documents and of the key/value kit are transformed (their content, revision,
/// sync status and checksum) and stored after a marker byte, so that a reader without the key
/// (`depot verify`, `depot export`) tells a sealed record from a damaged one
/// (``DepotError/Code/transformRequired``); what stays readable without the key: IDs (they are
/// keys), collection and alias names, the sync-status index (status per ID) and the store's own
/// meta records.
/// Secondary indexes would keep field values unencrypted in their keys, so a store with a
/// transform refuses them unless ``allowsPlaintextIndexes`` says otherwise.
///
/// The store records that its records are sealed (a meta record written by the first write
/// with a transform): from then on a handle opened without one cannot write
/// (``DepotError/Code/transformRequired``), so no plain record lands beside sealed ones.
/// Handles of one store in one process share one transform: a second handle must give the same
/// (an equal value of an `Equatable` transform, or the same object), or none of them any.
public protocol RecordTransform: Sendable {
    /// Whether document types may declare secondary indexes (whose keys hold the indexed field
    /// values untransformed). False by default.
    var allowsPlaintextIndexes: Bool { get }
    /// The stored form of `record` (bind it to `context`, e.g. as authenticated data, so that a
    /// record copied under another key does not open).
    func seal(_ record: UnsafeRawBufferPointer, context: RecordTransformContext) throws -> [UInt8]
    /// The record back from its stored form. Throw when it cannot be opened (wrong key, damage):
    /// the store reports it as ``DepotError/Code/transformFailed`` naming the collection and ID,
    /// with the error's `LocalizedError` description when it has one (keep record content and
    /// key material out of it).
    func open(_ stored: UnsafeRawBufferPointer, context: RecordTransformContext) throws -> [UInt8]
}

extension RecordTransform {
    /// Indexes are refused.
    public var allowsPlaintextIndexes: Bool { false }
}

/// Where a transformed record lives.
public struct RecordTransformContext: Sendable, Hashable {
    /// The keyspace (for example `depot.doc/default/Employee`).
    public let keyspace: String
    /// The record's key (the document's ID bytes).
    public let key: [UInt8]

    package init(keyspace: String, key: [UInt8]) {
        self.keyspace = keyspace
        self.key = key
    }
}

extension RecordTransform {
    /// `txn` seen through this transform (itself when it already is).
    package func wrapping(_ txn: any StorageTransaction) -> any StorageTransaction {
        if txn is TransformingTransaction { return txn }
        return TransformingTransaction(base: txn, transform: self)
    }
}

extension StorageTransaction {
    /// The driver's transaction under any record transform.
    package var untransformed: any StorageTransaction { (self as? TransformingTransaction)?.base ?? self }
}

/// A transaction whose document and key/value records pass through a ``RecordTransform``.
final class TransformingTransaction: StorageTransaction {
    package let base: any StorageTransaction
    let transform: any RecordTransform

    init(base: any StorageTransaction, transform: any RecordTransform) {
        self.base = base
        self.transform = transform
    }

    var isReadOnly: Bool { base.isReadOnly }
    func isCurrent(_ keyspace: Keyspace) -> Bool { base.isCurrent(keyspace) }
    var keyspaceHandlesVersion: Int? { base.keyspaceHandlesVersion }
    var snapshotID: UInt64? { base.snapshotID }
    var commitID: UInt64? { base.commitID }
    func changeLogStamp() throws -> UInt64? { try base.changeLogStamp() }
    func appendChangeLogEntry(_ value: [UInt8], in keyspace: Keyspace) throws -> Bool {
        guard Self.applies(to: keyspace) else { return try base.appendChangeLogEntry(value, in: keyspace) }
        // A transformed value is put under a key known here (the transform may bind the two).
        return try putUnderChangeLogStamp(value, in: keyspace)
    }
    func changeLogHorizon() throws -> UInt64? { try base.changeLogHorizon() }
    func stableValue(forKey key: [UInt8], in keyspace: Keyspace) throws -> [UInt8]? {
        guard Self.applies(to: keyspace) else { return try base.stableValue(forKey: key, in: keyspace) }
        return try get(key, in: keyspace)
    }
    var maxKeySize: Int { base.maxKeySize }
    var nestingDepth: Int { base.nestingDepth }
    var attachment: AnyObject? {
        get { base.attachment }
        set { base.attachment = newValue }
    }
    func afterCommit(_ handler: @escaping () -> Void) { base.afterCommit(handler) }
    func keyspace(named name: String, create: Bool, multiValue: Bool) throws -> Keyspace? {
        try base.keyspace(named: name, create: create, multiValue: multiValue)
    }

    /// What a transform's error says (a `LocalizedError`'s description: ``RecordTransform``
    /// implementations must keep record content and key material out of it), or its type.
    private static func describe(_ error: any Error) -> String {
        (error as? any LocalizedError)?.errorDescription ?? "\(type(of: error))"
    }

    private static func applies(to keyspace: Keyspace) -> Bool {
        keyspace.name.hasPrefix(StoreLayout.documentPrefix) || keyspace.name.hasPrefix(StoreLayout.keyValuePrefix)
    }

    private func opened(_ stored: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, keyspace: Keyspace) throws -> [UInt8] {
        // Records sealed before the marker existed are the transform's output alone.
        let sealed = stored.first == Record.sealedMarker ? UnsafeRawBufferPointer(rebasing: stored.dropFirst()) : stored
        do {
            return try transform.open(sealed, context: RecordTransformContext(keyspace: keyspace.name, key: [UInt8](key)))
        } catch {
            // A sound plain record (no marker, its checksum matching) was written without a
            // transform: say so, rather than blame the key.
            if stored.first != Record.sealedMarker, Record.soundPayload(stored) != nil {
                throw DepotError.unsealedRecord(keyspace: keyspace.name, key: key)
            }
            throw DepotError.transformFailed(keyspace: keyspace.name, key: key, detail: Self.describe(error))
        }
    }

    func withValue<R>(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        guard Self.applies(to: keyspace) else { return try base.withValue(forKey: key, in: keyspace, body) }
        return try base.withValue(forKey: key, in: keyspace) { stored in
            try opened(stored, key: key, keyspace: keyspace).withUnsafeBytes(body)
        }
    }

    /// What is stored for `value`: the marker and the transform's output.
    private func sealed(_ value: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, keyspace: Keyspace) throws -> [UInt8] {
        do {
            let sealed = try transform.seal(value, context: RecordTransformContext(keyspace: keyspace.name, key: [UInt8](key)))
            var stored: [UInt8] = []
            stored.reserveCapacity(sealed.count + 1)
            stored.append(Record.sealedMarker)
            stored.append(contentsOf: sealed)
            return stored
        } catch {
            throw DepotError.transformFailed(keyspace: keyspace.name, key: key, detail: Self.describe(error))
        }
    }

    func put(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws {
        guard Self.applies(to: keyspace) else { return try base.put(value, forKey: key, in: keyspace) }
        try sealed(value, key: key, keyspace: keyspace).withUnsafeBytes { try base.put($0, forKey: key, in: keyspace) }
    }

    /// The base's own insert path (one B-tree descent on LMDB), sealed; a stored value is opened
    /// before `existing` sees it.
    func putIfAbsent(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace,
                     existing: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        guard Self.applies(to: keyspace) else { return try base.putIfAbsent(value, forKey: key, in: keyspace, existing: existing) }
        return try sealed(value, key: key, keyspace: keyspace).withUnsafeBytes { stored in
            try base.putIfAbsent(stored, forKey: key, in: keyspace) { try opened($0, key: key, keyspace: keyspace).withUnsafeBytes(existing) }
        }
    }

    /// The base's (an insert a driver may take on trust), sealed, as ``putIfAbsent(_:forKey:in:existing:)``.
    func putExpectingAbsent(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace,
                            existing: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        guard Self.applies(to: keyspace) else { return try base.putExpectingAbsent(value, forKey: key, in: keyspace, existing: existing) }
        return try sealed(value, key: key, keyspace: keyspace).withUnsafeBytes { stored in
            try base.putExpectingAbsent(stored, forKey: key, in: keyspace) { try opened($0, key: key, keyspace: keyspace).withUnsafeBytes(existing) }
        }
    }

    func delete(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws -> Bool {
        try base.delete(forKey: key, in: keyspace)
    }

    func delete(forKey key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, in keyspace: Keyspace) throws -> Bool {
        try base.delete(forKey: key, value: value, in: keyspace)
    }

    func deleteIfPresent(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws {
        try base.deleteIfPresent(forKey: key, in: keyspace)
    }

    func deleteIfPresent(forKey key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, in keyspace: Keyspace) throws {
        try base.deleteIfPresent(forKey: key, value: value, in: keyspace)
    }

    func scan(_ keyspace: Keyspace, lower: [UInt8]?, upper: [UInt8]?, prefix: [UInt8]?, reverse: Bool,
              _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        guard Self.applies(to: keyspace) else { return try base.scan(keyspace, lower: lower, upper: upper, prefix: prefix, reverse: reverse, body) }
        try base.scan(keyspace, lower: lower, upper: upper, prefix: prefix, reverse: reverse) { key, stored in
            try opened(stored, key: key, keyspace: keyspace).withUnsafeBytes { try body(key, $0) }
        }
    }

    func count(_ keyspace: Keyspace) throws -> Int { try base.count(keyspace) }
    func clear(_ keyspace: Keyspace) throws { try base.clear(keyspace) }
    func drop(_ keyspace: Keyspace) throws { try base.drop(keyspace) }
    func savepoint<R>(_ body: () throws -> R) throws -> R { try base.savepoint(body) }
}

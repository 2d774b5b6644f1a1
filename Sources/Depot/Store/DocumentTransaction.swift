import DepotLMDB
import Foundation

/// A transaction of the document layer, seen through one alias.
///
/// Get one from ``Store/read(_:)``, ``Store/write(_:)`` or ``Store/beginTransaction()``.
/// ``alias(_:)`` gives a view of the *same* transaction on another alias, so one commit can
/// span several aliases atomically. Like LMDB transactions it belongs to one thread and never
/// lives across an `await`.
public final class DocumentTransaction {
    /// The alias this view reads and writes.
    public let alias: String
    /// The store this transaction was begun on.
    public let store: Store
    let context: TransactionContext
    let isExplicit: Bool
    lazy var referenceHook = ReferenceHook(self)
    /// Reused for every park of this view (the codec keeps its working state between calls).
    lazy var encoder: BinaryEncoder = {
        var e = BinaryEncoder()
        e.referenceHook = referenceHook
        return e
    }()
    /// Reused for every read of this view.
    lazy var decoder: BinaryDecoder = {
        var d = BinaryDecoder()
        d.referenceResolver = referenceHook
        return d
    }()

    init(store: Store, alias: String, context: TransactionContext, explicit: Bool = false) {
        self.store = store
        self.alias = alias
        self.context = context
        self.isExplicit = explicit
    }

    /// The underlying LMDB transaction, for mixing raw key/value work into the same commit
    /// (nil when the store runs on another storage driver).
    public var lmdbTransaction: Transaction? { context.txn as? Transaction }

    /// Whether this is a read-only transaction.
    public var isReadOnly: Bool { context.txn.isReadOnly }

    /// A view of this same transaction on another alias.
    public func alias(_ name: String) throws -> DocumentTransaction {
        try StoreLayout.validateAlias(name)
        return DocumentTransaction(store: store, alias: name, context: context, explicit: isExplicit)
    }

    // MARK: Savepoints

    /// Runs `body` in a savepoint (an LMDB child transaction): when it throws, its changes (and
    /// its entries in the change set) are undone and the error rethrown; the rest of the
    /// transaction goes on.
    @discardableResult
    public func savepoint<R>(_ body: () throws -> R) throws -> R {
        let mark = context.mark
        do {
            let result = try context.txn.savepoint { try body() }
            context.promote(toDepth: mark.depth)
            return result
        } catch {
            context.revert(to: mark, childDepth: mark.depth + 1)
            throw error
        }
    }

    // MARK: Explicit transactions

    /// Commits a transaction from ``Store/beginTransaction()``; observers are told afterwards.
    public func commit() throws {
        guard isExplicit else {
            throw DepotError.invalidState("commit() is for transactions from beginTransaction(); a closure-scoped transaction commits when its closure returns")
        }
        guard let txn = context.txn as? Transaction else { throw DepotError.invalidState("no explicit transaction to commit") }
        try context.appendChangeLog()
        try txn.commit()
    }

    /// Rolls back a transaction from ``Store/beginTransaction()``: nothing of it is kept.
    public func rollback() {
        guard isExplicit else { return }
        (context.txn as? Transaction)?.abort()
    }

    // MARK: Parking (upsert)

    /// Stores `document` (insert or replace) and every identified document it references.
    /// Returns the new revision of the record (1 for a new document).
    @discardableResult
    public func park<D: Document>(_ document: D) throws -> UInt64 {
        try park(document, ifRevision: nil)
    }

    /// Stores several documents.
    public func park<S: Sequence>(_ documents: S) throws where S.Element: Document {
        for d in documents { try park(d, ifRevision: nil) }
    }

    /// Stores `document` only if its stored revision is `expected` (0: only if absent) —
    /// optimistic concurrency. Throws ``DepotError/revisionConflict(alias:collection:id:expected:actual:)``.
    @discardableResult
    public func park<D: Document>(_ document: D, ifRevision expected: UInt64?) throws -> UInt64 {
        let collection = D.collection
        let db = try context.database(alias: alias, collection: collection, kind: D.ID.idKind, create: true)!
        let indexes = try usableIndexes(D.self)
        let status = Self.parkStatus(of: document)
        return try document.id.withKeyBytes { key in
            try checkKey(key, collection: collection)
            context.parking.append(.init(alias: alias, collection: collection, key: key))
            defer { context.parking.removeLast() }
            var old: D?
            if !indexes.isEmpty {
                old = try? context.txn.withValue(forKey: key, in: db) { try decodeRecord(D.self, $0, collection: collection, key: key, kind: D.ID.idKind) }
                try checkUniqueIndexes(indexes, for: document, key: key)
            }
            let (revision, oldHeader) = try writeRecord(key: key, db: db, collection: collection, kind: D.ID.idKind,
                                                        flags: status.recordFlags, expected: expected,
                                                        displayID: { displayID(document.id.documentValue) }) { buffer in
                try encoder.encode(document, into: &buffer)
            }
            if !indexes.isEmpty { try updateIndexes(indexes, old: old, new: document, key: key) }
            if D.tracksSyncStatus {
                try updateSyncIndex(collection: collection, key: key, old: oldHeader.map { SyncStatus(recordFlags: $0.flags) }, new: status)
            }
            return revision
        }
    }

    /// The status a park stores: a Syncable's own (unless undetermined), else `.notSynced`.
    static func parkStatus<D: Document>(of document: D) -> SyncStatus {
        // Check the type first: casting the value boxes it (an allocation) for nothing.
        guard D.self is any Syncable.Type, let syncable = document as? any Syncable else { return .notSynced }
        return syncable.syncStatus != .undetermined ? syncable.syncStatus : .notSynced
    }

    /// Encodes into a record under `key` and returns the new revision.
    func writeRecord(key: UnsafeRawBufferPointer, db: Keyspace, collection: String, kind: IDKind,
                     flags: UInt8, expected: UInt64?, displayID: () -> String,
                     encode: (inout [UInt8]) throws -> Void) throws -> (revision: UInt64, old: Record.Header?) {
        let txn = context.txn
        let old = try txn.withValue(forKey: key, in: db) { Record.peekHeader($0) ?? Record.Header(flags: 0, revision: 0) }
        if let expected, expected != (old?.revision ?? 0) {
            throw DepotError.revisionConflict(alias: alias, collection: collection, id: displayID(), expected: expected, actual: old?.revision)
        }
        let revision = (old?.revision ?? 0) &+ 1
        var buffer = context.takeBuffer()
        defer { context.giveBack(buffer) }
        Record.begin(&buffer, flags: flags, revision: revision)
        do {
            try encode(&buffer)
        } catch let error as EncodingError {
            throw DepotError.encodingFailed(collection: collection, id: displayID(), fieldPath: fieldPath(of: error), detail: encodingDetail(error))
        }
        Record.seal(&buffer)
        try buffer.withUnsafeBytes { try txn.put($0, forKey: key, in: db) }
        context.recorder?.record(.init(alias: alias, collection: collection, key: [UInt8](key)),
                                 existedBefore: old != nil, existsNow: true, idKind: kind)
        return (revision, old)
    }

    func checkKey(_ key: UnsafeRawBufferPointer, collection: String) throws {
        if key.isEmpty { throw DepotError.invalidKey(detail: "the ID of a \(collection) document is empty") }
        if key.count > 511 { throw DepotError.invalidKey(detail: "the ID of a \(collection) document is \(key.count) bytes; the limit is 511") }
    }

    // MARK: Retrieving

    /// The document of type `D` with `id`, with its references resolved, or nil.
    public func retrieve<D: Document>(_ type: D.Type, id: D.ID) throws -> D? {
        guard let db = try context.database(alias: alias, collection: D.collection, kind: D.ID.idKind, create: false) else { return nil }
        return try id.withKeyBytes { key in
            if key.isEmpty || key.count > 511 { return nil }
            return try context.txn.withValue(forKey: key, in: db) { bytes in
                try decodeRecord(D.self, bytes, collection: D.collection, key: key, kind: D.ID.idKind)
            }
        }
    }

    /// Every document of type `D`, in ID order (numeric for integer IDs).
    public func retrieveAll<D: Document>(_ type: D.Type) throws -> [D] {
        var result: [D] = []
        try forEach(D.self) { result.append($0); return true }
        return result
    }

    /// Visits the documents of type `D` in ID order (or reverse) without loading them all;
    /// return false to stop.
    public func forEach<D: Document>(_ type: D.Type, reverse: Bool = false, _ body: (D) throws -> Bool) throws {
        guard let db = try context.database(alias: alias, collection: D.collection, kind: D.ID.idKind, create: false) else { return }
        try context.txn.scan(db, prefix: nil, reverse: reverse) { key, value in
            try body(try decodeRecord(D.self, value, collection: D.collection, key: key, kind: D.ID.idKind))
        }
    }

    /// How many documents of type `D` are stored.
    public func count<D: Document>(_ type: D.Type) throws -> Int {
        guard let db = try context.database(alias: alias, collection: D.collection, kind: D.ID.idKind, create: false) else { return 0 }
        return try context.txn.count(db)
    }

    /// Whether a document of type `D` with `id` is stored.
    public func exists<D: Document>(_ type: D.Type, id: D.ID) throws -> Bool {
        guard let db = try context.database(alias: alias, collection: D.collection, kind: D.ID.idKind, create: false) else { return false }
        return try id.withKeyBytes { key in
            if key.isEmpty || key.count > 511 { return false }
            return try context.txn.withValue(forKey: key, in: db) { _ in true } ?? false
        }
    }

    /// The stored revision of a document (1 after creation, +1 per update), or nil.
    public func revision<D: Document>(of type: D.Type, id: D.ID) throws -> UInt64? {
        guard let db = try context.database(alias: alias, collection: D.collection, kind: D.ID.idKind, create: false) else { return nil }
        return try id.withKeyBytes { key in
            try context.txn.withValue(forKey: key, in: db) { Record.peekHeader($0)?.revision }
        } ?? nil
    }

    /// Decodes a stored record, verifying its checksum; errors name collection, ID and field path.
    func decodeRecord<D: Decodable>(_ type: D.Type, _ bytes: UnsafeRawBufferPointer, collection: String,
                                    key: UnsafeRawBufferPointer, kind: IDKind) throws -> D {
        let payload = try openRecord(bytes, collection: collection, key: key, kind: kind).payload
        context.resolving.append(.init(alias: alias, collection: collection, key: key))
        defer { context.resolving.removeLast() }
        do {
            let document = try decoder.decode(D.self, from: payload)
            if D.self is any Syncable.Type, var syncable = document as? any Syncable {
                syncable.syncStatus = SyncStatus(recordFlags: bytes[1])
                return syncable as! D
            }
            return document
        } catch let error as DecodingError {
            throw DepotError.decodingFailed(alias: alias, collection: collection, id: displayID(kind.value(ofKey: key)),
                                            fieldPath: fieldPath(of: error), detail: decodingDetail(error))
        } catch let error as BinaryCodecError {
            throw DepotError.corruptRecord(alias: alias, collection: collection, id: displayID(kind.value(ofKey: key)), detail: "\(error)")
        }
    }

    /// Checks a stored record's envelope and checksum; errors name alias, collection and ID.
    func openRecord(_ bytes: UnsafeRawBufferPointer, collection: String, key: UnsafeRawBufferPointer, kind: IDKind) throws
        -> (header: Record.Header, payload: UnsafeRawBufferPointer) {
        do {
            return try Record.open(bytes)
        } catch .checksum {
            throw DepotError.checksumMismatch(alias: alias, collection: collection, id: displayID(kind.value(ofKey: key)))
        } catch {
            throw DepotError.corruptRecord(alias: alias, collection: collection, id: displayID(kind.value(ofKey: key)), detail: "\(error)")
        }
    }

    // MARK: Deleting

    /// Deletes `document` (by its ID). Returns whether it was stored. Referenced documents stay.
    @discardableResult
    public func delete<D: Document>(_ document: D) throws -> Bool {
        try delete(D.self, id: document.id)
    }

    /// Deletes the document of type `D` with `id`. Returns whether it was stored.
    @discardableResult
    public func delete<D: Document>(_ type: D.Type, id: D.ID) throws -> Bool {
        guard let db = try context.database(alias: alias, collection: D.collection, kind: D.ID.idKind, create: false) else { return false }
        let indexes = try usableIndexes(D.self)
        return try id.withKeyBytes { key in
            if key.isEmpty || key.count > 511 { return false }
            var old: D?
            if !indexes.isEmpty {
                old = try? context.txn.withValue(forKey: key, in: db) { try decodeRecord(D.self, $0, collection: D.collection, key: key, kind: D.ID.idKind) }
            }
            let oldStatus = D.tracksSyncStatus ? try context.txn.withValue(forKey: key, in: db) { Record.peekHeader($0).map { SyncStatus(recordFlags: $0.flags) } } ?? nil : nil
            let deleted = try context.txn.delete(forKey: key, in: db)
            if deleted {
                if !indexes.isEmpty { try updateIndexes(indexes, old: old, new: nil, key: key) }
                if let oldStatus { try updateSyncIndex(collection: D.collection, key: key, old: oldStatus, new: nil) }
                context.recorder?.record(.init(alias: alias, collection: D.collection, key: [UInt8](key)),
                                         existedBefore: true, existsNow: false, idKind: D.ID.idKind)
            }
            return deleted
        }
    }

    /// Deletes every document of type `D` in this alias. Returns how many were deleted.
    @discardableResult
    public func deleteAll<D: Document>(_ type: D.Type) throws -> Int {
        try deleteCollection(D.collection)
    }

    /// Deletes every document of `collection` in this alias (the collection stays known).
    @discardableResult
    public func deleteCollection(_ collection: String) throws -> Int {
        guard let (db, kind) = try context.existingDatabase(alias: alias, collection: collection) else { return 0 }
        let count = try context.txn.count(db)
        if let recorder = context.recorder {
            try context.txn.scan(db, prefix: nil, reverse: false) { key, _ in
                recorder.record(.init(alias: alias, collection: collection, key: [UInt8](key)), existedBefore: true, existsNow: false, idKind: kind)
                return true
            }
        }
        try clearIndexes(collection: collection)
        try context.txn.clear(db)
        return count
    }

    /// Deletes every document of every collection in this alias. Returns how many were deleted.
    @discardableResult
    public func deleteEverything() throws -> Int {
        var total = 0
        for collection in try collections() { total += try deleteCollection(collection) }
        return total
    }

    /// The collections this alias has held documents in.
    public func collections() throws -> [String] {
        let prefix = "collection/" + alias + "/"
        return try context.metaEntries(prefix: Array(prefix.utf8))
            .map { String(decoding: $0.key.dropFirst(prefix.utf8.count), as: UTF8.self) }
    }
}

/// Renders a coding path as `address.zip` or `tags[2]`.
func fieldPath(_ path: [any CodingKey]) -> String {
    var text = ""
    for key in path {
        if let index = key.intValue, key.stringValue.hasPrefix("Index") || key.stringValue == "\(index)" {
            text += "[\(index)]"
        } else {
            text += text.isEmpty ? key.stringValue : "." + key.stringValue
        }
    }
    return text
}

func fieldPath(of error: DecodingError) -> String {
    switch error {
    case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c): return fieldPath(c.codingPath)
    case .keyNotFound(let key, let c): return fieldPath(c.codingPath + [key])
    @unknown default: return ""
    }
}

func fieldPath(of error: EncodingError) -> String {
    switch error {
    case .invalidValue(_, let c): return fieldPath(c.codingPath)
    @unknown default: return ""
    }
}

func decodingDetail(_ error: DecodingError) -> String {
    switch error {
    case .typeMismatch(let type, let c): return "expected \(type): \(c.debugDescription)"
    case .valueNotFound(let type, let c): return "missing \(type) value: \(c.debugDescription)"
    case .keyNotFound(let key, _): return "missing field '\(key.stringValue)'"
    case .dataCorrupted(let c): return c.debugDescription
    @unknown default: return "\(error)"
    }
}

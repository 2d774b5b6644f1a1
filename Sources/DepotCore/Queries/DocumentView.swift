
/// One document of a scan, read in place: its fields are decoded from the stored bytes when
/// asked for, one at a time, and the rest of the document is never built.
///
/// ``DocumentTransaction/forEachView(_:reverse:_:)`` passes one to its closure for each
/// document. A scan that needs a field or two of every document — a sum, a filter, a report —
/// then costs about a walk over the record's bytes per document instead of a decoded value
/// with its strings and arrays:
///
/// ```swift
/// var total = 0
/// try store.read { tx in
///     try tx.forEachView(Employee.self) { employee in
///         if try employee.department == "Sales" { total += try employee.salary }
///         return true
///     }
/// }
/// ```
///
/// A field reads the same value as the decoded document's property: the record's checksum is
/// verified before the closure runs, references are resolved, and a key path that names no
/// stored field (a computed property, a field an older record lacks and the type fills with a
/// default, the sync status) is answered from the whole document, decoded then.
///
/// Not copyable, and passed borrowed: it points into the transaction's bytes, valid only
/// inside the closure, so it cannot be kept or moved out of it. Read what you need before
/// writing in the same transaction: once a write begins (a park, a delete, any write of the
/// transaction) LMDB may move the bytes, and reading the view then throws
/// `DepotError` `.transactionMisuse` (the next document's view reads again).
///
/// The view's own members — `id`, ``storedRevision``, `field(_:)`, ``decodeDocument()`` — come
/// before the document's properties of the same name: read such a property with
/// `field(\.name)`.
@dynamicMemberLookup
public struct DocumentView<D: Document>: ~Copyable {
    /// The scanning transaction and the type's facts (nil for a decoded document), unretained:
    /// both are held by the scan while the closure runs, which is as long as a view can live
    /// (it cannot leave the closure). Used as guaranteed references: no reference counting per read.
    @usableFromInline let transaction: Unmanaged<DocumentTransaction>
    @usableFromInline let facts: Unmanaged<AnyTypeFacts>?
    /// The document's key and its record (checksum verified), inside the transaction.
    @usableFromInline let key: UnsafeRawBufferPointer
    @usableFromInline let record: UnsafeRawBufferPointer
    /// The record's payload (the document's bytes).
    @usableFromInline let payload: UnsafeRawBufferPointer
    /// The document itself, where the scan has it decoded already (an unsaved change of a unit
    /// of work): fields are then read from it. A pointer to the scan's value, valid while the
    /// view is (a view of a stored record then holds nothing to destroy).
    @usableFromInline let decoded: UnsafePointer<D>?
    /// The transaction's write epoch when the view was made: a write begun since (or the
    /// transaction's end) may have moved or freed the bytes, and the view then refuses to read.
    @usableFromInline let epoch: Int

    @inlinable
    init(transaction: DocumentTransaction, facts: AnyTypeFacts?, key: UnsafeRawBufferPointer,
         record: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer, decoded: UnsafePointer<D>?) {
        epoch = transaction.context.writeEpoch
        self.transaction = Unmanaged.passUnretained(transaction)
        self.facts = facts.map { Unmanaged.passUnretained($0) }
        self.key = key
        self.record = record
        self.payload = payload
        self.decoded = decoded
    }

    /// The value of the field `keyPath` names, decoded from the stored bytes (nothing else of
    /// the document is decoded).
    /// - Throws: `DepotError` with code `.decodingFailed` when the
    ///   stored field does not decode as `V`, naming the collection, ID and field.
    @inlinable
    public func field<V: Decodable>(_ keyPath: KeyPath<D, V>) throws -> V {
        if let decoded { return decoded.pointee[keyPath: keyPath] }
        let (key, record, payload) = (key, record, payload)
        let epoch = epoch
        return try transaction._withUnsafeGuaranteedRef { transaction in
            try transaction.checkView(madeAt: epoch)
            guard let facts else { throw transaction.viewWithoutDocument() }
            return try facts._withUnsafeGuaranteedRef { facts in
                try transaction.viewField(keyPath, facts: facts, key: key, record: record, payload: payload)
            }
        }
    }

    /// The value at `keyPath` of a type that is not `Decodable` (a computed property): read
    /// from the whole document, decoded for the call.
    @inlinable
    public func field<V>(_ keyPath: KeyPath<D, V>) throws -> V {
        try decodeDocument()[keyPath: keyPath]
    }

    /// The value of a field, as `field(_:)` reads it: `try view.salary`.
    @inlinable
    public subscript<V: Decodable>(dynamicMember keyPath: KeyPath<D, V>) -> V {
        get throws { try field(keyPath) }
    }

    /// The whole document, decoded (with its references resolved), as a read by ID returns it.
    @inlinable
    public func decodeDocument() throws -> D {
        if let decoded { return decoded.pointee }
        let (key, record, epoch) = (key, record, epoch)
        return try transaction._withUnsafeGuaranteedRef { transaction in
            try transaction.checkView(madeAt: epoch)
            return try transaction.viewDocument(D.self, facts: facts?.takeUnretainedValue(), key: key, record: record)
        }
    }

    /// The document's ID, read from its key.
    public var id: D.ID {
        get throws {
            if let decoded { return decoded.pointee.id }
            try transaction.takeUnretainedValue().checkView(madeAt: epoch)
            return try D.ID(keyBytes: key)
        }
    }

    /// The document's revision: 1 after it was created, one more after each update (0 for an
    /// unsaved document of a unit of work).
    public var storedRevision: UInt64 {
        get throws {
            if decoded != nil { return 0 }
            try transaction.takeUnretainedValue().checkView(madeAt: epoch)
            return Record.peekHeader(record)?.revision ?? 0
        }
    }
}

extension DocumentTransaction {
    /// Visits the documents of type `D` in ID order (or reverse) as views into their stored
    /// bytes, decoding only the fields the closure reads (``DocumentView``); return false to stop.
    ///
    /// The same documents, in the same order, as ``forEach(_:reverse:_:)`` — unsaved changes of a
    /// unit of work included — at a fraction of its cost when the closure reads a few fields.
    /// Inlinable, so that the scan is specialized for `D` where it is called.
    @inlinable
    public func forEachView<D: Document>(_ type: D.Type, reverse: Bool = false,
                                         _ body: (borrowing DocumentView<D>) throws -> Bool) throws {
        if hasOverlay && overlayTouches(D.self) {
            // Unsaved changes merged in: every document comes decoded, and its view reads it.
            let none = UnsafeRawBufferPointer(start: nil, count: 0)
            return try forEachThroughOverlay(D.self, reverse: reverse) { document in
                try withUnsafePointer(to: document) {
                    try body(DocumentView(transaction: self, facts: nil, key: none, record: none, payload: none, decoded: $0))
                }
            }
        }
        guard let facts = try anyFacts(D.self, create: false) else { return }
        try withExtendedLifetime(facts) {
            try context.txn.scan(facts.target.keyspace, prefix: nil, reverse: reverse) { key, record in
                let payload = try viewPayload(record, facts: facts, key: key)
                return try body(DocumentView(transaction: self, facts: facts, key: key, record: record, payload: payload, decoded: nil))
            }
        }
    }
}

extension DocumentTransaction {
    /// Whether this view's unit of work has unsaved changes to `D`'s collection.
    @usableFromInline
    func overlayTouches<D: Document>(_: D.Type) -> Bool {
        overlay?.touches(alias: alias, collection: D.collection) ?? false
    }

    /// The payload of a record a view reads: checked as every read checks it (an unsound
    /// record is reported naming the collection and ID).
    /// Inlinable: a sound record's payload is found without a call into this module.
    @inlinable
    func viewPayload(_ record: UnsafeRawBufferPointer, facts: AnyTypeFacts, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
        if let payload = Record.soundPayload(record) { return payload }
        return try unsoundViewPayload(record, facts: facts, key: key)
    }

    /// The payload of a record that is not sound: checked in full, and reported (collection, ID).
    @usableFromInline
    func unsoundViewPayload(_ record: UnsafeRawBufferPointer, facts: AnyTypeFacts, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
        try openRecord(record, collection: facts.target.collection, key: key, kind: facts.target.kind).payload
    }

    /// The document a view reads, decoded (specialized for `D` where it is inlined).
    @inlinable
    func viewDocument<D: Document>(_: D.Type, facts: AnyTypeFacts?, key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer) throws -> D {
        guard let facts else { throw viewWithoutDocument() }
        return try decodeDocument(D.self, record, facts: facts, key: key)
    }

    /// Throws when a write began in this transaction since a view was made at write epoch
    /// `epoch` (its bytes may have moved).
    @inlinable
    func checkView(madeAt epoch: Int) throws {
        guard context.writeEpoch == epoch else { throw viewAfterWrite() }
    }

    /// The error of a view read after a write began in its transaction.
    @usableFromInline
    func viewAfterWrite() -> DepotError {
        DepotError.transactionMisuse("a document view was read after a write in its transaction: the stored bytes it points to may have moved; read the fields you need (or decodeDocument()) before writing")
    }

    /// The error of a view that has neither a record nor a document (never made by a scan).
    @usableFromInline
    func viewWithoutDocument() -> DepotError {
        DepotError.transactionMisuse("a document view was read without its document")
    }

    /// A field of a view's document: walked to and decoded in place when the key path names a
    /// stored field the record has; otherwise read from the whole document.
    @inlinable
    func viewField<D: Document, V: Decodable>(_ keyPath: KeyPath<D, V>, facts: AnyTypeFacts, key: UnsafeRawBufferPointer,
                                             record: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer) throws -> V {
        let path = facts.knownFieldPath(of: keyPath) ?? storedFieldPath(D.self, keyPath, facts)
        if _fastPath(path.isStored), let offset = try storedFieldOffset(path, of: facts, key: key, payload: payload) {
            // A short scalar inline (it holds no references); anything else through the decoder.
            if let value = BinaryReader(payload).shortScalar(V.self, at: offset) { return value }
            var result: V? = nil
            try decodeField(at: offset, path, of: facts, key: key, payload: payload) { decoder, resolver, payload, offset in
                result = try decoder.decodeValue(V.self, from: payload, at: offset, resolver: resolver)
            }
            if let result { return result }
        }
        // No stored field for the key path, or the record lacks it (a default, an omitted nil).
        return try viewDocument(D.self, facts: facts, key: key, record: record)[keyPath: keyPath]
    }
}


extension DocumentTransaction {
    /// Parks a value that has no identity (GarageStorage semantics). Its key is the SHA-256 of
    /// its encoded content, so parking the same content twice keeps one record, and parking a
    /// changed copy keeps **two** (the old one stays until deleted by value). Prefer
    /// ``Document`` types: they update in place.
    ///
    /// The collection is the type's name. Returns the content key (64 hex digits).
    @discardableResult
    public func park<T: Encodable>(unidentified value: T) throws -> String {
        let collection = TypeNames.name(of: T.self)
        try context.requireWritable("park a \(collection) value")
        var payload = context.takeBuffer()
        defer { context.giveBack(payload) }
        do {
            var encoder = BinaryEncoder()
            encoder.referenceHook = referenceHook
            try encoder.encode(value, into: &payload)
        } catch let error as EncodingError {
            throw DepotError.encodingFailed(collection: collection, id: "(content)", fieldPath: error.fieldPath, detail: encodingDetail(error))
        }
        let key = SHA256.hash(payload)
        guard let target = try context.target(alias: alias, collection: collection, kind: .content, create: true) else {
            throw DepotError.storageInconsistent("the collection '\(collection)' could not be created")
        }
        let hex = key.withUnsafeBytes { displayID(IDKind.content.value(ofKey: $0)) }
        _ = try key.withUnsafeBytes { keyBytes in
            try context.writeRecord(target, key: keyBytes, flags: Record.contentFlag | SyncStatus.notSynced.recordFlags,
                            displayID: { hex }) { buffer in buffer.append(contentsOf: payload) }
        }
        return hex
    }

    /// Every unidentified value of type `T` (in content-key order, which is arbitrary).
    public func retrieveAll<T: Decodable>(unidentified type: T.Type) throws -> [T] {
        let collection = TypeNames.name(of: T.self)
        guard let target = try context.target(alias: alias, collection: collection, kind: .content, create: false) else { return [] }
        var result: [T] = []
        try context.txn.scan(target.keyspace, prefix: nil, reverse: false) { key, value in
            result.append(try decodeRecord(T.self, value, collection: collection, key: key, kind: .content))
            return true
        }
        return result
    }

    /// Deletes the unidentified record holding exactly this content. Returns whether it was stored.
    @discardableResult
    public func delete<T: Encodable>(unidentified value: T) throws -> Bool {
        let collection = TypeNames.name(of: T.self)
        try context.requireWritable("delete a \(collection) value")
        guard let target = try context.target(alias: alias, collection: collection, kind: .content, create: false) else { return false }
        // The same bytes as the park: identified sub-documents become references.
        var payload = context.takeBuffer()
        defer { context.giveBack(payload) }
        var encoder = BinaryEncoder()
        encoder.referenceHook = ContentReferences()
        try encoder.encode(value, into: &payload)
        let key = SHA256.hash(payload)
        return try key.withUnsafeBytes { try context.deleteRecord(target, key: $0) }
    }
}

/// Writes identified sub-documents as references without parking them (to find the content
/// key of a value parked before).
final class ContentReferences: BinaryReferenceEncoding {
    func reference(for value: any Encodable) throws -> (collection: String, id: DocumentValue)? {
        if let lazy = value as? any LazyReference { return (lazy.referencedCollection, lazy.referencedID) }
        guard let document = value as? any Document else { return nil }
        return Self.identity(of: document)
    }

    private static func identity<D: Document>(of document: D) -> (collection: String, id: DocumentValue) {
        (D.collection, document.id.documentValue)
    }
}

/// One stored document as the CLI's `export` prints it.
public struct ExportedDocument: Sendable, Hashable {
    /// The alias it belongs to.
    public var alias: String
    /// Its collection.
    public var collection: String
    /// Its ID (a content hash for unidentified documents).
    public var id: DocumentValue
    /// Its content; references appear as `DocumentValue.reference(collection:id:)`.
    public var document: DocumentValue
    /// The record's revision.
    public var revision: UInt64
    /// The collection's ID kind (what `id`'s JSON alone may not tell: an unsigned ID that fits
    /// a signed integer, a string ID spelled like a UUID).
    public var idKind: IDKind
    /// The record's sync status (``DocumentTransaction/importDocument(_:)`` stores it).
    public var syncStatus: SyncStatus = .notSynced

    /// The JSON Lines form in the plain style (dates as `dateStrategy` writes them, UUIDs and
    /// bytes as strings): ``jsonLine(style:dateStrategy:)`` with `.plain`.
    public func jsonLine(dateStrategy: DateStrategy = .iso8601) throws -> String {
        try jsonLine(style: .plain, dateStrategy: dateStrategy)
    }

    /// The JSON Lines form: `{"collection": C, "id": ID, "document": {…}}`, references as
    /// `{"$ref": {"collection": C2, "id": ID2}}`. Where the ID's JSON would be read as another
    /// ID kind than the collection's (see ``DocumentTransaction/inferredIDKind(id:document:)``),
    /// the line also names the kind: `{"collection": C, "id": 7, "idKind": "unsigned",
    /// "document": {…}}`, so that an import gives a new collection the kind it had. A sync
    /// status other than `notSynced` (what an import stores when the line names none) is
    /// named too: `"syncStatus": "synced"` (`undetermined`, `syncing`).
    ///
    /// - Parameters:
    ///   - style: How the document's dates, UUIDs, bytes and non-finite numbers are written:
    ///     `.extended` (`{"$date": …}`, which `depot import` reads back as the same values) or
    ///     `.plain` (strings). The ID is written as the plain style writes it, whatever the style
    ///     (with `"idKind"`, it reads back as the same ID).
    ///   - dateStrategy: Dates written as this strategy writes them (a string or a number, in
    ///     either style); nil: as `style` writes them.
    public func jsonLine(style: JSONStyle, dateStrategy: DateStrategy? = nil) throws -> String {
        let content = dateStrategy.map { document.renderingDates($0) } ?? document
        var line = "{\"collection\":" + (try DocumentValue.string(collection).jsonString())
        line += ",\"id\":" + (try id.jsonString())
        if DocumentTransaction.inferredIDKind(id: id, document: document) != idKind {
            line += ",\"idKind\":" + (try DocumentValue.string(idKind.rawValue).jsonString())
        }
        if syncStatus != .notSynced {
            line += ",\"syncStatus\":" + (try DocumentValue.string(syncStatus.name).jsonString())
        }
        line += ",\"document\":" + (try content.jsonString(style: style)) + "}"
        return line
    }
}

extension DocumentTransaction {
    /// Visits every stored document of `collection` (or of every collection) of this alias as a
    /// schemaless value, checksums verified; return false to stop.
    ///
    /// - Parameters:
    ///   - collection: the collection to export; nil (the default) exports every collection.
    ///   - damaged: called, instead of throwing, for each record that is damaged (a
    ///     `DepotError` `.checksumMismatch`, `.corruptRecord` or `.decodingFailed` naming its
    ///     collection and ID); the export goes on with the next record. Nil (the default): the
    ///     first damaged record ends the export with that error.
    ///   - body: called with each document; return false to stop.
    public func export(collection: String? = nil, damaged: ((DepotError) throws -> Void)? = nil,
                       _ body: (ExportedDocument) throws -> Bool) throws {
        let names = try collection.map { [$0] } ?? collections()
        for name in names {
            guard let target = try context.existingTarget(alias: alias, collection: name) else { continue }
            let kind = target.kind
            var stop = false
            try context.txn.scan(target.keyspace, prefix: nil, reverse: false) { key, value in
                let id = kind.value(ofKey: key)
                let header: Record.Header, document: DocumentValue
                do {
                    (header, document) = try openDocument(value, collection: name, key: key, kind: kind)
                } catch let error as DepotError where damaged != nil && [.checksumMismatch, .corruptRecord, .decodingFailed].contains(error.code) {
                    try damaged?(error)
                    return true
                }
                let keepGoing = try body(ExportedDocument(alias: alias, collection: name, id: id, document: document, revision: header.revision,
                                                          idKind: kind, syncStatus: SyncStatus(recordFlags: header.flags)))
                if !keepGoing { stop = true }
                return keepGoing
            }
            if stop { return }
        }
    }
}

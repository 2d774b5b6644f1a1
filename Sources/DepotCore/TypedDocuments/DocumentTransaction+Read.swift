
extension DocumentTransaction {
    // MARK: Retrieving

    /// The document of type `D` with `id`, with its references resolved, or nil.
    ///
    /// Inlinable, so that the look-up is specialized for `D` where it is called (no run-time
    /// generic metadata on the hot path); decoding runs in the type's generated codec when it has one.
    @inlinable
    public func retrieve<D: Document>(_ type: D.Type, id: D.ID) throws -> D? {
        if hasOverlay { return try retrieveThroughOverlay(D.self, id: id) }
        if _slowPath(context.hasVersionToConfirm) { return try retrieveConfirmingVersion(D.self, id: id) }
        return try storedRetrieve(D.self, id: id)
    }

    /// ``retrieve(_:id:)`` in a read whose schema version check was left for later (a read of
    /// a reused view on a driver with `StorageCapabilities.pipelinedReads`, until something
    /// confirms it): reads with what this view resolved before, then confirms the version, so
    /// that the two reads come back in one wait; when the version changed, reads again with what
    /// it resolves now. Nothing read is handed out before the check: an error of the first read
    /// stands only when the version held, and a document only when nothing resolved was
    /// forgotten meanwhile (a reference's look-up may settle the check during the decode).
    @usableFromInline
    func retrieveConfirmingVersion<D: Document>(_ type: D.Type, id: D.ID) throws -> D? {
        let generation = context.factsGeneration
        let found: D?
        do {
            found = try unconfirmedFacts(D.self, create: false).flatMap { try storedRetrieve(D.self, id: id, facts: $0) }
        } catch {
            // (When the version cannot be read either, the read again reports that.)
            if (try? context.confirmVersion()) ?? false, context.factsGeneration == generation { throw error }
            return try storedRetrieve(D.self, id: id)
        }
        if try context.confirmVersion(), context.factsGeneration == generation { return found }
        return try storedRetrieve(D.self, id: id)
    }

    @usableFromInline
    func retrieveThroughOverlay<D: Document>(_ type: D.Type, id: D.ID) throws -> D? {
        if let overlay, let pending = try overlay.lookup(D.self, alias: alias, id: id) { return pending.document.map(withPendingStatus) }
        return try storedRetrieve(D.self, id: id).map(withPendingStatus)
    }

    /// A document with the sync status the unit of work set for it since its last park.
    private func withPendingStatus<D: Document>(_ document: D) -> D {
        guard let overlay, let status = overlay.pendingStatus(alias: alias, collection: D.collection, key: document.id.keyBytes),
              var syncable = document as? any Syncable else { return document }
        syncable.syncStatus = status
        return (syncable as? D) ?? document
    }

    /// The stored document: a look-up specialized where it is inlined, over non-generic facts
    /// and reads.
    @inlinable
    func storedRetrieve<D: Document>(_ type: D.Type, id: D.ID) throws -> D? {
        guard let facts = try anyFacts(D.self, create: false) else { return nil }
        return try storedRetrieve(D.self, id: id, facts: facts)
    }

    /// ``storedRetrieve(_:id:)`` with the facts of `D` found.
    @inlinable
    func storedRetrieve<D: Document>(_ type: D.Type, id: D.ID, facts: AnyTypeFacts) throws -> D? {
        var found: D? = nil
        // A String ID's key bytes are its UTF-8: the stored ID field, when it has those bytes,
        // shares the caller's string (no copy; the check folds away where this is specialized).
        let idString = D.ID.self == String.self ? id as? String : nil
        try id.withKeyBytes { key in
            if key.isEmpty || key.count > context.maxKeySize { return }
            _ = try context.txn.readValue(forKey: key, in: facts.target.keyspace) { bytes in
                found = try decodeDocument(D.self, bytes, facts: facts, key: key, knownID: idString)
            }
        }
        return found
    }

    /// Decodes a stored record of `D` (checksum verified; generated codec when `D` has one): the
    /// one way every typed read — get, scans, queries, sync-status reads — decodes a document.
    ///
    /// Inlinable, with a direct path for the common case — no sync status and no field
    /// defaults, a sound record — specialized for `D` where it is inlined: the record is checked
    /// and entered by non-generic code and decoded by `D`'s generated initializer (or, for a
    /// plain `Decodable` type, its `init(from:)` on the reused decoder). A record that is not
    /// sound goes to the general path (``decodeDocumentInGeneral(_:_:facts:key:)``), which reports what is wrong; a decoding
    /// error is reported as the general path reports it, without decoding again (so a failure
    /// deep in a chain of references costs one decode per level). `knownID` is the String ID the
    /// document was asked for (its bytes are `key`): a field holding it shares that string.
    @inlinable
    func decodeDocument<D: Document>(_ type: D.Type, _ bytes: UnsafeRawBufferPointer, facts: AnyTypeFacts,
                                     key: UnsafeRawBufferPointer, knownID: String? = nil) throws -> D {
        // A type with a generated codec, or a plain `Decodable` one (keyed containers over the
        // same bytes), whose record is sound.
        if facts.decodesDirectly || facts.decodesPlainlyDirectly, let payload = Record.soundPayload(bytes) {
            let saved = context.resolving.enter(facts.target, key: key)
            defer { context.resolving.leave(saved) }
            do {
                return facts.decodesDirectly
                    ? try decoder.decodeDocument(D.self, from: payload, resolver: referenceResolver, known: knownID, knownUTF8: key)
                    : try decoder.decodePlainDocument(D.self, from: payload, resolver: referenceResolver, known: knownID, knownUTF8: key)
            } catch {
                try directDecodingFailed(error, facts: facts, key: key)
            }
        }
        return try decodeDocumentInGeneral(D.self, bytes, facts: facts, key: key)
    }

    /// ``decodeDocument(_:_:facts:key:knownID:)`` for every record: errors name collection, ID and field path.
    @usableFromInline
    func decodeDocumentInGeneral<D: Document>(_ type: D.Type, _ bytes: UnsafeRawBufferPointer, facts: AnyTypeFacts,
                                              key: UnsafeRawBufferPointer) throws -> D {
        let target = facts.target
        let generated = facts.generated != nil
        return try decodeRecord(D.self, bytes, collection: target.collection, target: target, key: key, kind: target.kind,
                                syncable: facts.isSyncable, defaults: facts.hasFieldDefaults ? D.fieldDefaults : [:]) { payload in
            generated ? try decoder.decodeDocument(D.self, from: payload, resolver: referenceHook)
                : try decoder.decode(D.self, from: payload, resolver: referenceHook)
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
    ///
    /// Inlinable, so that the scan and its decode are specialized for `D` where it is called
    /// (as ``retrieve(_:id:)``): no run-time generic metadata per document.
    @inlinable
    public func forEach<D: Document>(_ type: D.Type, reverse: Bool = false, _ body: (D) throws -> Bool) throws {
        if hasOverlay { return try forEachThroughOverlay(D.self, reverse: reverse, body) }
        try storedForEach(D.self, reverse: reverse, body)
    }

    /// ``forEach(_:reverse:_:)`` of a view with a unit of work laid over it.
    @usableFromInline
    func forEachThroughOverlay<D: Document>(_ type: D.Type, reverse: Bool, _ body: (D) throws -> Bool) throws {
        if let overlay, overlay.touches(alias: alias, collection: D.collection) {
            try overlay.merge(D.self, alias: alias, reverse: reverse, stored: { visit in try storedForEach(D.self, reverse: reverse, visit) }) {
                try body(withPendingStatus($0))
            }
            return
        }
        try storedForEach(D.self, reverse: reverse, body)
    }

    /// The stored documents of `D` (without the unit of work), with their keys.
    @inlinable
    func storedForEach<D: Document>(_ type: D.Type, reverse: Bool, _ body: (D) throws -> Bool) throws {
        guard let facts = try anyFacts(D.self, create: false) else { return }
        try context.txn.scan(facts.target.keyspace, prefix: nil, reverse: reverse) { key, value in
            try body(try decodeDocument(D.self, value, facts: facts, key: key))
        }
    }

    /// How many documents of type `D` are stored.
    public func count<D: Document>(_ type: D.Type) throws -> Int {
        let stored = try facts(D.self, create: false).map { try context.txn.count($0.target.keyspace) } ?? 0
        guard let overlay, overlay.touches(alias: alias, collection: D.collection) else { return stored }
        return try overlay.adjustedCount(D.self, alias: alias, stored: stored) { id in try storedExists(D.self, id: id) }
    }

    /// Whether a document of type `D` with `id` is stored.
    public func exists<D: Document>(_ type: D.Type, id: D.ID) throws -> Bool {
        if let overlay, let pending = try overlay.lookup(D.self, alias: alias, id: id) { return pending.document != nil }
        return try storedExists(D.self, id: id)
    }

    func storedExists<D: Document>(_ type: D.Type, id: D.ID) throws -> Bool {
        guard let facts = try facts(D.self, create: false) else { return false }
        return try id.withKeyBytes { key in
            if key.isEmpty || key.count > context.maxKeySize { return false }
            return try context.txn.withValue(forKey: key, in: facts.target.keyspace) { _ in true } ?? false
        }
    }

    /// The stored revision of a document (1 after creation, +1 per update), or nil.
    public func revision<D: Document>(of type: D.Type, id: D.ID) throws -> UInt64? {
        guard let facts = try facts(D.self, create: false) else { return nil }
        return try id.withKeyBytes { key in
            if key.isEmpty || key.count > context.maxKeySize { return nil }
            return try context.txn.withValue(forKey: key, in: facts.target.keyspace) { Record.peekHeader($0)?.revision } ?? nil
        }
    }

    /// Decodes a stored record, verifying its checksum; errors name collection, ID and field path.
    /// (Documents go through ``decodeDocument(_:_:facts:key:knownID:)``.)
    func decodeRecord<D: Decodable>(_ type: D.Type, _ bytes: UnsafeRawBufferPointer, collection: String,
                                    key: UnsafeRawBufferPointer, kind: IDKind, syncable: Bool? = nil) throws -> D {
        // `@BinaryCodable` types read their records with their generated code (same bytes).
        let codec = D.self as? any BinaryCodableDocument.Type
        let defaults = (D.self as? any Document.Type)?.fieldDefaults ?? [:]
        return try decodeRecord(D.self, bytes, collection: collection, target: nil, key: key, kind: kind, syncable: syncable,
                                defaults: defaults) { payload in
            if let codec { return try decoder.decode(D.self, from: payload, generatedBy: codec, resolver: referenceHook) }
            return try decoder.decode(D.self, from: payload, resolver: referenceHook)
        }
    }

    /// Decodes a stored record with `decodePayload`: checksum verified, missing defaulted fields
    /// filled in, sync status set; errors name collection, ID and field path. `target`, when
    /// given, is the collection's (the record is then entered in the resolving stack unretained).
    /// `defaults` are the type's field defaults: a record lacking one is filled in before it is
    /// decoded (one decode, so a chain of older records through references is read in one pass).
    private func decodeRecord<D: Decodable>(_ type: D.Type, _ bytes: UnsafeRawBufferPointer, collection: String,
                                            target: RecordTarget?, key: UnsafeRawBufferPointer, kind: IDKind, syncable: Bool?,
                                            defaults: [String: DocumentValue],
                                            decodePayload: (UnsafeRawBufferPointer) throws -> D) throws -> D {
        let (header, payload) = try openRecord(bytes, collection: collection, key: key, kind: kind)
        let outer = if let target { context.resolving.enter(target, key: key) }
            else { context.resolving.enter(.init(alias: alias, collection: collection, key: key)) }
        defer { context.resolving.leave(outer) }
        do {
            var document: D
            if !defaults.isEmpty, Self.mayLack(defaults, payload), let filled = try Self.filling(defaults, into: payload) {
                document = try filled.withUnsafeBytes { try decodePayload($0) } // an older record
            } else {
                document = try decodePayload(payload)
            }
            if syncable ?? (D.self is any Syncable.Type) { Self.setSyncStatus(&document, flags: header.flags) }
            return document
        } catch {
            throw decodingFailure(error, collection: collection, kind: kind, key: key)
        }
    }

    /// Throws `error`, from the direct path, as the general path reports it.
    @usableFromInline
    func directDecodingFailed(_ error: any Error, facts: AnyTypeFacts, key: UnsafeRawBufferPointer) throws -> Never {
        throw decodingFailure(error, collection: facts.target.collection, kind: facts.target.kind, key: key)
    }

    /// The error a failed decode of the record under `key` reports (``RecordReader``'s mapping,
    /// naming this view's alias).
    func decodingFailure(_ error: any Error, collection: String, kind: IDKind, key: UnsafeRawBufferPointer) -> any Error {
        RecordReader.failure(error, alias: alias, collection: collection, kind: kind, key: key)
    }

    /// Opens the stored record `bytes` under `key` and reads its document as a schemaless value
    /// (``RecordReader``): every schemaless read path goes through here, so a damaged record is
    /// always reported the same way (alias, collection, ID; never a stored value).
    func openDocument(_ bytes: UnsafeRawBufferPointer, collection: String, key: UnsafeRawBufferPointer, kind: IDKind) throws
        -> (header: Record.Header, document: DocumentValue) {
        try RecordReader.document(bytes, alias: alias, collection: collection, key: key, kind: kind)
    }

    /// Sets the sync status of a ``Syncable`` document from its record's flags.
    private static func setSyncStatus<D>(_ document: inout D, flags: UInt8) {
        guard var withStatus = document as? any Syncable else { return }
        withStatus.syncStatus = SyncStatus(recordFlags: flags)
        if let typed = withStatus as? D { document = typed }
    }

    /// Whether `payload` may lack a field of `defaults`: a defaulted top-level key is absent, or
    /// a default is nested (``filling(_:into:)`` then looks). Reads the top-level keys only: no
    /// value is decoded and no reference resolved. True for a payload it cannot read (the decode
    /// then reports it).
    static func mayLack(_ defaults: [String: DocumentValue], _ payload: UnsafeRawBufferPointer) -> Bool {
        let reader = BinaryReader(payload)
        guard var p = try? BinaryReader.checkHeader(reader), (try? reader.tag(at: p)) == BinaryTag.object else { return true }
        p += 1
        guard let (count, _) = try? reader.containerHeader(&p, minEntrySize: 2) else { return true }
        var present = Set<String>(minimumCapacity: count)
        for _ in 0..<count {
            guard let name = try? reader.keyString(&p), let next = try? reader.skipValue(at: p) else { return true }
            present.insert(name)
            p = next
        }
        return defaults.keys.contains { $0.contains(".") || !present.contains($0) }
    }

    /// The payload with every missing defaulted field filled in (nil: nothing was missing).
    static func filling(_ defaults: [String: DocumentValue], into payload: UnsafeRawBufferPointer) throws -> [UInt8]? {
        var document = try DocumentValue(binary: payload)
        var changed = false
        for (path, value) in defaults.sorted(by: { $0.key < $1.key }) where document.value(atPath: path) == nil {
            document.setValue(value, atPath: path)
            changed = true
        }
        return changed ? document.binary() : nil
    }

    /// Checks a stored record's envelope and checksum (``RecordReader``); errors name alias,
    /// collection and ID.
    func openRecord(_ bytes: UnsafeRawBufferPointer, collection: String, key: UnsafeRawBufferPointer, kind: IDKind) throws
        -> (header: Record.Header, payload: UnsafeRawBufferPointer) {
        try RecordReader.open(bytes, alias: alias, collection: collection, key: key, kind: kind)
    }
}


/// Projections: reading a few fields of a stored document without decoding the rest. The
/// record's checksum is still verified; then only the path to each requested field is walked
/// (other fields are skipped by their stored lengths) inside the read transaction, and only the
/// requested values are built.
extension DocumentTransaction {
    /// The values at `paths` (dotted field paths such as `salary` or `address.zip`; numeric
    /// segments index arrays) of the document of `D` with `id`, in the order asked; nil for a
    /// field the document does not have. Returns nil when the document is not stored.
    public func fields<D: Document>(of type: D.Type, id: D.ID, _ paths: [String]) throws -> [DocumentValue?]? {
        guard let facts = try facts(D.self, create: false) else { return nil }
        let target = facts.target
        let split = paths.map { $0.split(separator: ".", omittingEmptySubsequences: false) }
        return try id.withKeyBytes { key in
            if key.isEmpty || key.count > context.maxKeySize { return nil }
            return try context.txn.withValue(forKey: key, in: target.keyspace) { bytes in
                let payload = try openRecord(bytes, collection: target.collection, key: key, kind: target.kind).payload
                do {
                    let reader = BinaryReader(payload)
                    let root = try BinaryReader.checkHeader(reader)
                    return try split.map { segments in
                        guard var p = try reader.offset(ofPath: segments, from: root) else { return nil }
                        return try reader.documentValue(&p, depth: 0)
                    }
                } catch let error as BinaryCodecError {
                    throw DepotError.corruptRecord(alias: alias, collection: target.collection, id: displayIDOfKey(key, kind: target.kind), detail: "\(error)")
                }
            }
        }
    }

    /// One field of a stored document, read through its key path's field path and decoded as
    /// `V` — without decoding the rest of the document and without copying the record: the walk
    /// and the decoding run on the bytes inside the transaction, and the field path of each key
    /// path is worked out once per transaction. References in the field are resolved. Nil when
    /// the document is not stored or lacks the field.
    /// Inlinable, so that the value's type is known where it is called (no run-time generic
    /// metadata per read).
    @inlinable
    public func field<D: Document, V: Decodable>(_ keyPath: KeyPath<D, V>, of id: D.ID) throws -> V? {
        guard let facts = try anyFacts(D.self, create: false) else { return nil }
        let path = facts.knownFieldPath(of: keyPath) ?? storedFieldPath(D.self, keyPath, facts)
        // A key path that names no stored property (a computed one, or a protocol requirement's
        // key path formed in generic code): read the document and apply it.
        if _slowPath(!path.isStored) { return try retrieve(D.self, id: id).map { $0[keyPath: keyPath] } }
        var result: V? = nil
        try id.withKeyBytes { key in
            try withStoredField(path, of: facts, key: key) { decoder, resolver, payload, offset in
                result = try decoder.decodeValue(V.self, from: payload, at: offset, resolver: resolver)
            }
        }
        return result
    }

    /// The stored field path of `keyPath`, worked out (once per transaction) from `D`'s indexes.
    @usableFromInline
    func storedFieldPath<D: Document>(_: D.Type, _ keyPath: PartialKeyPath<D>, _ facts: AnyTypeFacts) -> StoredFieldPath {
        unsafeDowncast(facts, to: TypeFacts<D>.self).fieldPath(of: keyPath)
    }

    /// Finds the record of `key`, checks it and walks to the field at `path` in place; calls
    /// `decode` with the transaction's decoder and reference resolver, the payload and the field's offset (not called
    /// when the record or the field is absent). Errors name the collection, ID and field.
    @usableFromInline
    func withStoredField(_ path: StoredFieldPath, of facts: AnyTypeFacts, key: UnsafeRawBufferPointer,
                         _ decode: (BinaryDecoder, any BinaryReferenceDecoding, UnsafeRawBufferPointer, Int) throws -> Void) throws {
        let target = facts.target
        if key.isEmpty || key.count > context.maxKeySize { return }
        _ = try context.txn.readValue(forKey: key, in: target.keyspace) { bytes in
            let payload = try openRecord(bytes, collection: target.collection, key: key, kind: target.kind).payload
            guard let offset = try storedFieldOffset(path, of: facts, key: key, payload: payload) else { return }
            try decodeField(at: offset, path, of: facts, key: key, payload: payload, decode)
        }
    }

    /// The offset of the field at `path` in a checked record's `payload`, walked to in place;
    /// nil when the record lacks the field. Errors name the collection and ID.
    @usableFromInline
    func storedFieldOffset(_ path: StoredFieldPath, of facts: AnyTypeFacts, key: UnsafeRawBufferPointer,
                           payload: UnsafeRawBufferPointer) throws -> Int? {
        do {
            let reader = BinaryReader(payload)
            return try reader.offset(of: path, from: try BinaryReader.checkHeader(reader))
        } catch {
            throw decodingFailure(error, collection: facts.target.collection, kind: facts.target.kind, key: key)
        }
    }

    /// Calls `decode` with the transaction's decoder and reference resolver, the payload and the
    /// offset of the field at `path` (``storedFieldOffset(_:of:key:payload:)``), with the record
    /// entered as the parent of the references it resolves. Errors name the collection, ID and field.
    @usableFromInline
    func decodeField(at offset: Int, _ path: StoredFieldPath, of facts: AnyTypeFacts, key: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer,
                     _ decode: (BinaryDecoder, any BinaryReferenceDecoding, UnsafeRawBufferPointer, Int) throws -> Void) throws {
        let target = facts.target
        do {
            // As in a full read: references resolved from here know their parent (cycles, errors).
            let outer = context.resolving.enter(target, key: key)
            defer { context.resolving.leave(outer) }
            try decode(decoder, referenceHook, payload, offset)
        } catch let error as DecodingError {
            throw DepotError.decodingFailed(alias: alias, collection: target.collection, id: displayIDOfKey(key, kind: target.kind),
                                            fieldPath: path.name, detail: decodingDetail(error))
        } catch {
            throw decodingFailure(error, collection: target.collection, kind: target.kind, key: key)
        }
    }
}

extension AnyTypeFacts {
    /// The stored field path of a key path worked out earlier in this transaction. Found by the
    /// key path object's identity (key path literals are one object per call site); the entry
    /// keeps the object alive, so its identity cannot be reused by another key path.
    /// Inlinable: the key path used last (a scan or a loop reads one) is found with one compare.
    @inlinable
    func knownFieldPath(of keyPath: AnyKeyPath) -> StoredFieldPath? {
        if lastKeyPath === keyPath, let lastPath { return lastPath }
        return knownFieldPathInGeneral(of: keyPath)
    }

    @usableFromInline
    func knownFieldPathInGeneral(of keyPath: AnyKeyPath) -> StoredFieldPath? {
        if let entry = fieldPaths[ObjectIdentifier(keyPath)], entry.keyPath === keyPath {
            lastKeyPath = entry.keyPath
            lastPath = entry.path
            return entry.path
        }
        return nil
    }
}

extension TypeFacts {
    /// The stored field path a key path reads: a declared index's `field:` when one uses the key
    /// path, else the key path's property names. Worked out once per transaction.
    func fieldPath(of keyPath: PartialKeyPath<D>) -> StoredFieldPath {
        if let known = knownFieldPath(of: keyPath) { return known }
        // Key paths built at run time (in generic code, by appending) are new objects on every
        // call: found by value, and only a bounded number remembered by identity.
        let path: StoredFieldPath
        if let known = fieldPathsByValue[keyPath] {
            path = known
        } else {
            let property = DocumentIndex<D>.fieldName(of: keyPath)
            let name = indexes.first { $0.keyPath == keyPath as AnyKeyPath }?.field ?? property
            // A Syncable type's status is read from the record's flags, not from its stored field
            // (whatever name an index gives that field).
            path = StoredFieldPath(name, stored: !(isSyncable && property == "syncStatus"))
            fieldPathsByValue[keyPath] = path
        }
        if fieldPaths.count < 64 { fieldPaths[ObjectIdentifier(keyPath)] = (keyPath, path) }
        return path
    }
}

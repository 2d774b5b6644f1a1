import DepotLMDB

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
            if key.isEmpty || key.count > context.txn.maxKeySize { return nil }
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
    /// `V` — without decoding the rest of the document. Nil when the document is not stored or
    /// lacks the field.
    public func field<D: Document, V: Decodable>(_ keyPath: KeyPath<D, V>, of id: D.ID) throws -> V? {
        let path = D.indexes.first { $0.keyPath == keyPath as AnyKeyPath }?.field ?? DocumentIndex<D>.fieldName(of: keyPath)
        guard let found = try fields(of: D.self, id: id, [path]), let value = found.first ?? nil else { return nil }
        do {
            return try BinaryDecoder().decode(V.self, from: value.binary())
        } catch let error as DecodingError {
            throw DepotError.decodingFailed(alias: alias, collection: D.collection, id: displayID(id.documentValue),
                                            fieldPath: path, detail: decodingDetail(error))
        }
    }
}

extension BinaryReader {
    /// The offset of the value at `segments` below the value at `root`, or nil when a segment
    /// is missing. Only the containers on the path are entered; everything else is skipped.
    func offset(ofPath segments: [Substring], from root: Int) throws -> Int? {
        var p = root
        for segment in segments {
            let t = try tag(at: p)
            var q = p + 1
            if t == BinaryTag.object {
                let (n, _) = try containerHeader(&q, minEntrySize: 2)
                var found: Int?
                let wanted = Array(segment.utf8)
                for _ in 0..<n {
                    let matches: Bool
                    switch try key(&q) {
                    case .string(let start, let count):
                        matches = count == wanted.count && wanted.withUnsafeBytes { w in
                            w.elementsEqual(UnsafeRawBufferPointer(start: base + start, count: count))
                        }
                    case .int(let value):
                        matches = String(value) == segment
                    }
                    if matches { found = q; break }
                    q = try skipValue(at: q)
                }
                guard let found else { return nil }
                p = found
            } else if t == BinaryTag.array, let index = Int(segment), index >= 0 {
                let (n, _) = try containerHeader(&q, minEntrySize: 1)
                guard index < n else { return nil }
                for _ in 0..<index { q = try skipValue(at: q) }
                p = q
            } else {
                return nil
            }
        }
        return p
    }
}

import Foundation

/// Requests sorted by one indexed field, with a limit: the index is walked in the requested
/// order and the walk stops once the limit is reached (the cost follows the limit, not the
/// collection), giving exactly what sorting every match gives.
extension DocumentTransaction {
    /// The candidates (and the index walked) of a request sorted by one indexed numeric or date field, with a limit,
    /// in ID order: every match that sorts before the `offset + limit`-th and every one that
    /// ties with it (so that sorting them as every request's matches are sorted gives the same
    /// window). Nil when the request cannot run so — then the caller sorts every match:
    /// - more or other sort descriptors, no limit, or no index of the current format on the
    ///   sort's key path;
    /// - a condition served by another index (that index bounds the work already);
    /// - a key path whose value type is not a standard integer, floating-point or `Date` type
    ///   (or an optional of one): another type's own order need not be its index order, nor a
    ///   string's (`SortDescriptor` compares strings as people read them);
    /// - a driver whose counts are not cheap (one that pipelines reads to a server);
    /// - an index that does not hold one entry per document (its entry count differs from the
    ///   collection's), or a document met whose index entry is not its value's (a value filled
    ///   in when decoded: a field default, a custom `init(from:)`), or nil or NaN.
    func candidatesInIndexOrder<D: Document>(_ request: FetchRequest<D>, facts: TypeFacts<D>,
                                             indexes: [(definition: IndexDefinition, keyspace: Keyspace)],
                                             condition choice: (IndexDefinition, FieldCondition)?,
                                             needed: Int) throws -> (documents: [D], examined: Int, index: String)? {
        guard !store.pipelinedReads, request.sortDescriptors.count == 1, let descriptor = request.sortDescriptors.first,
              let keyPath = descriptor.keyPath, Self.sortsInIndexOrder(type(of: keyPath as AnyKeyPath).valueType),
              needed < Int.max, let declared = facts.indexes.first(where: { $0.keyPath == keyPath }),
              let index = indexes.first(where: { $0.definition == declared.definition }) else { return nil }
        if let choice, choice.0 != index.definition { return nil }
        if needed == 0 { return ([], 0, index.definition.name) }
        let db = facts.target.keyspace
        guard try context.txn.count(index.keyspace) == context.txn.count(db) else { return nil }
        // Every entry of one type tag (numbers share one, dates another): no entry for a missing
        // field (nil's tag sorts first) that a value filled in when decoded would not match.
        guard let first = try edgeTag(of: index.keyspace, last: false), try edgeTag(of: index.keyspace, last: true) == first else { return nil }
        let bounds = choice.map { Self.indexBounds(for: $0.1) } ?? (lower: nil, upper: nil, prefix: nil)
        var candidates: [(key: [UInt8], document: D)] = []
        var examined = 0
        var boundary: [UInt8]?
        var inOrder = true
        try context.txn.scan(index.keyspace, lower: bounds.lower, upper: bounds.upper, prefix: bounds.prefix,
                             reverse: descriptor.order == .reverse) { indexKey, documentKey in
            if let boundary, !indexKey.elementsEqual(boundary) { return false }
            guard let document = try context.txn.withValue(forKey: documentKey, in: db, {
                try decodeDocument(D.self, $0, facts: facts, key: documentKey)
            }) else { return true } // a stale entry: the document is gone
            examined += 1
            let value = declared.extract(document)
            let ordered: Bool
            switch value {
            case .int, .uint, .date: ordered = true
            case .double(let d): ordered = !d.isNaN
            default: ordered = false
            }
            // The entry must be the value's own: one filled in when decoded sits elsewhere.
            guard ordered, indexKey.elementsEqual(IndexKeyEncoding.encode(value)) else {
                inOrder = false
                return false
            }
            guard try request.includes(document) else { return true }
            candidates.append(([UInt8](documentKey), document))
            if candidates.count == needed { boundary = [UInt8](indexKey) }
            return true
        }
        guard inOrder else { return nil }
        // In the order a scan of the collection meets them (ID order), as every request's
        // matches are before they are sorted (a stable sort: ties keep that order).
        candidates.sort { $0.key.lexicographicallyPrecedes($1.key) }
        return (candidates.map(\.document), examined, index.definition.name)
    }

    /// The type tag (first byte) of the first or last key of `keyspace`; nil when it is empty.
    private func edgeTag(of keyspace: Keyspace, last: Bool) throws -> UInt8? {
        var tag: UInt8?
        try context.txn.scan(keyspace, lower: nil, upper: nil, prefix: nil, reverse: last) { key, _ in
            tag = key.first
            return false
        }
        return tag
    }

    /// Whether values of `type` sort (`SortDescriptor`) in their index keys' order: the
    /// standard integer and floating-point types and `Date`, and optionals of them (a nil,
    /// met, stops the walk).
    static func sortsInIndexOrder(_ type: Any.Type) -> Bool {
        indexOrderedTypes.contains(ObjectIdentifier(type))
    }

    private static let indexOrderedTypes: Set<ObjectIdentifier> = {
        let plain: [Any.Type] = [Int.self, Int8.self, Int16.self, Int32.self, Int64.self, UInt.self, UInt8.self, UInt16.self,
                                 UInt32.self, UInt64.self, Double.self, Float.self, Date.self]
        let optional: [Any.Type] = [Int?.self, Int8?.self, Int16?.self, Int32?.self, Int64?.self, UInt?.self, UInt8?.self,
                                    UInt16?.self, UInt32?.self, UInt64?.self, Double?.self, Float?.self, Date?.self]
        return Set((plain + optional).map { ObjectIdentifier($0) })
    }()
}

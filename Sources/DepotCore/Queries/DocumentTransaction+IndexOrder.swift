import Foundation

/// Requests sorted by one indexed field, with a limit: the index is walked in the requested
/// order and the walk stops once the limit is reached (the cost follows the limit, not the
/// collection), giving exactly what sorting every match gives.
extension DocumentTransaction {
    /// The candidates of a request sorted by one indexed numeric or date field, with a limit,
    /// in ID order: every match that sorts before the `offset + limit`-th and every one that
    /// ties with it (so that sorting them as every request's matches are sorted gives the same
    /// window). Nil when the request cannot run so — then the caller sorts every match:
    /// - more or other sort descriptors, no limit, or no index of the current format on the
    ///   sort's key path;
    /// - a condition served by another index (that index bounds the work already);
    /// - an index that does not hold one entry per document (its entry count differs from the
    ///   collection's), or a value that is not a number or a date (a string's or an optional's
    ///   index order is not the sort's).
    func candidatesInIndexOrder<D: Document>(_ request: FetchRequest<D>, facts: TypeFacts<D>,
                                             indexes: [(definition: IndexDefinition, keyspace: Keyspace)],
                                             condition choice: (IndexDefinition, FieldCondition)?,
                                             needed: Int) throws -> (documents: [D], examined: Int)? {
        guard request.sortDescriptors.count == 1, let descriptor = request.sortDescriptors.first, let keyPath = descriptor.keyPath,
              needed < Int.max, let declared = facts.indexes.first(where: { $0.keyPath == keyPath }),
              let index = indexes.first(where: { $0.definition == declared.definition }) else { return nil }
        if let choice, choice.0 != index.definition { return nil }
        if needed == 0 { return ([], 0) }
        let db = facts.target.keyspace
        guard try context.txn.count(index.keyspace) == context.txn.count(db) else { return nil }
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
            switch declared.extract(document) {
            case .int, .uint, .double, .date: break
            default:
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
        return (candidates.map(\.document), examined)
    }
}

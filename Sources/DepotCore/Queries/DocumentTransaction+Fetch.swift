import Foundation

/// The documents a request found, and how it ran.
public struct FetchResult<D: Document> {
    /// The documents, in request order.
    public var documents: [D]
    /// How the query ran.
    public var plan: QueryPlan
}

extension DocumentTransaction {
    /// The documents of `D` that satisfy `request`.
    public func fetch<D: Document>(_ request: FetchRequest<D>) throws -> [D] {
        try execute(request).documents
    }

    /// The documents of `D` matching a predicate, sorted and limited (DLData's fetch).
    public func fetch<D: Document>(_ type: D.Type, where predicate: Predicate<D>? = nil, sortedBy: [SortDescriptor<D>] = [],
                                   limit: Int? = nil, offset: Int = 0) throws -> [D] {
        try fetch(FetchRequest<D>(predicate: predicate, sortedBy: sortedBy, limit: limit, offset: offset))
    }

    /// The first document that satisfies `request` in its order (DLData's `fetchOne:matching:sortedBy:`).
    public func fetchOne<D: Document>(_ request: FetchRequest<D>) throws -> D? {
        try execute(request.limit(1)).documents.first
    }

    /// The first document of `D` matching `predicate` in the given order.
    public func fetchOne<D: Document>(_ type: D.Type, where predicate: Predicate<D>? = nil, sortedBy: [SortDescriptor<D>] = []) throws -> D? {
        try fetchOne(FetchRequest<D>(predicate: predicate, sortedBy: sortedBy))
    }

    /// How many documents satisfy `request` (limit and offset apply).
    public func count<D: Document>(_ request: FetchRequest<D>) throws -> Int {
        try run(request, collect: false).plan.rowsReturned
    }

    /// Runs `request` and reports how: by index or by scan, rows examined.
    public func execute<D: Document>(_ request: FetchRequest<D>) throws -> FetchResult<D> {
        try run(request, collect: true)
    }

    /// Visits the documents of `D` that pass `isIncluded` (a plain closure filter), in ID order;
    /// return false from `body` to stop.
    public func fetch<D: Document>(_ type: D.Type, filter isIncluded: (D) throws -> Bool) throws -> [D] {
        var result: [D] = []
        try forEach(D.self) { document in
            if try isIncluded(document) { result.append(document) }
            return true
        }
        return result
    }

    private func run<D: Document>(_ request: FetchRequest<D>, collect: Bool) throws -> FetchResult<D> {
        // A negative limit or offset is a mistake in the request, never read as 0 without a word.
        if let limit = request.fetchLimit, limit < 0 { throw DepotError.invalidQuery("limit(\(limit)): a limit is 0 or more") }
        if request.fetchOffset < 0 { throw DepotError.invalidQuery("offset(\(request.fetchOffset)): an offset is 0 or more") }
        guard let facts = try facts(D.self, create: false) else {
            return FetchResult(documents: [], plan: QueryPlan(strategy: .scan, rowsExamined: 0, rowsReturned: 0))
        }
        let db = facts.target.keyspace
        let indexes = try queryableIndexes(collection: D.collection, declared: facts.indexes.map(\.definition))
        let choice = Self.chooseIndex(for: request.fieldConditions, among: indexes.map(\.definition))
        let sorting = !request.sortDescriptors.isEmpty
        let offset = max(0, request.fetchOffset)
        let limit = request.fetchLimit.map { max(0, $0) } ?? .max
        var examined = 0
        var matched = 0
        var kept: [D] = []

        // Returns false once enough results were seen (only without sorting).
        func consider(_ document: D) throws -> Bool {
            examined += 1
            guard try request.includes(document) else { return true }
            if sorting {
                kept.append(document)
                return true
            }
            matched += 1
            if matched <= offset { return true }
            if collect { kept.append(document) }
            return matched - offset < limit
        }

        var walkedIndex: String?
        if limit == 0 && !sorting {
            // Nothing to return.
        } else if sorting, request.fetchLimit != nil,
                  let walk = try candidatesInIndexOrder(request, facts: facts, indexes: indexes, condition: choice,
                                                        needed: offset.addingReportingOverflow(limit).overflow ? .max : offset + limit) {
            kept = walk.documents
            examined = walk.examined
            walkedIndex = walk.index
        } else if let (index, condition) = choice, let ks = indexes.first(where: { $0.definition == index })?.keyspace {
            let bounds = Self.indexBounds(for: condition)
            try context.txn.scan(ks, lower: bounds.lower, upper: bounds.upper, prefix: bounds.prefix, reverse: false) { _, documentKey in
                guard let document = try context.txn.withValue(forKey: documentKey, in: db, {
                    try decodeDocument(D.self, $0, facts: facts, key: documentKey)
                }) else { return true } // a stale entry: the document is gone
                return try consider(document)
            }
        } else {
            try context.txn.scan(db, prefix: nil, reverse: false) { key, value in
                try consider(try decodeDocument(D.self, value, facts: facts, key: key))
            }
        }

        if sorting {
            kept.sort(using: request.sortDescriptors)
            matched = kept.count
            let window = kept.dropFirst(offset).prefix(limit)
            kept = collect ? Array(window) : []
            matched = window.count
        } else {
            matched = max(0, min(matched - offset, limit))
        }
        let strategy: QueryPlan.Strategy = choice.map { .index(name: $0.0.name, condition: $0.1) }
            ?? walkedIndex.map { .indexOrder(name: $0) } ?? .scan
        return FetchResult(documents: kept, plan: QueryPlan(strategy: strategy, rowsExamined: examined, rowsReturned: matched))
    }

    /// Key bounds in an index for a condition (candidates are always re-checked).
    static func indexBounds(for c: FieldCondition) -> (lower: [UInt8]?, upper: [UInt8]?, prefix: [UInt8]?) {
        let encoded = IndexKeyEncoding.encode(c.value)
        // The family of the value's type (numbers of every type share one tag).
        let tag = encoded.first ?? 0
        let family: (UInt8, UInt8) = (tag, tag &+ 1)
        switch c.op {
        case .equal: return (nil, nil, encoded)
        case .prefix:
            guard case .string(let p) = c.value else { return (nil, nil, encoded) }
            return (nil, nil, IndexKeyEncoding.stringPrefix(p))
        case .greater, .greaterOrEqual:
            return (IndexKeyEncoding.rangeValueKey(encoded), family.1 == 0 ? nil : [family.1], nil)
        case .less, .lessOrEqual:
            // Up to and including the value's key and any longer key sharing it (a cut key's
            // hash: 32 bytes, below 33 × 0xFF), re-checked.
            var upper = IndexKeyEncoding.rangeValueKey(encoded)
            upper.append(contentsOf: repeatElement(0xFF, count: 33))
            return ([family.0], upper, nil)
        case .notEqual: return (nil, nil, nil)
        }
    }
}

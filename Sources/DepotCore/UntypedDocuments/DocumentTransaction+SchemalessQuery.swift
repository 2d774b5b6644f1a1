import Foundation

/// A sort key of a schemaless query: a field path and a direction.
public struct FieldSort: Sendable, Hashable {
    /// The field path.
    public var field: String
    /// Whether larger values come first.
    public var descending: Bool
    /// Creates a sort key.
    public init(field: String, descending: Bool = false) {
        self.field = field
        self.descending = descending
    }
}

extension DocumentTransaction {
    /// Queries a collection without knowing its Swift type (the CLI's `depot query`): documents
    /// whose fields satisfy every condition, sorted by field paths, at most `limit`. Conditions
    /// on a field with a declared index use it (the plan says so).
    public func query(collection: String, conditions: [FieldCondition], sort: [FieldSort] = [], limit: Int? = nil) throws
        -> (documents: [ExportedDocument], plan: QueryPlan) {
        guard let target = try context.existingTarget(alias: alias, collection: collection) else {
            return ([], QueryPlan(strategy: .scan, rowsExamined: 0, rowsReturned: 0))
        }
        let db = target.keyspace, kind = target.kind
        // The collection's stored indexes (kept by every writer).
        let indexes = try queryableIndexes(collection: collection, declared: nil)
        let choice = Self.chooseIndex(for: conditions, among: indexes.map(\.definition))
        let max = limit.map { Swift.max(0, $0) } ?? .max
        var examined = 0
        var found: [ExportedDocument] = []
        // Each path parsed once, not once per document (or per comparison, when sorting).
        let conditionPaths = conditions.map { IndexFieldPath($0.field) }

        func consider(key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer) throws -> Bool {
            examined += 1
            let id = kind.value(ofKey: key)
            let (header, document) = try openDocument(record, collection: collection, key: key, kind: kind)
            for i in conditions.indices where !conditions[i].matches(conditionPaths[i].value(in: document)) { return true }
            found.append(ExportedDocument(alias: alias, collection: collection, id: id, document: document, revision: header.revision, idKind: kind))
            return !sort.isEmpty || found.count < max
        }

        if max == 0 && sort.isEmpty {
            // nothing
        } else if let (index, condition) = choice, let ks = indexes.first(where: { $0.definition == index })?.keyspace {
            let bounds = Self.indexBounds(for: condition)
            var going = true
            func visit(_ documentKey: UnsafeRawBufferPointer) throws -> Bool {
                going = try context.txn.withValue(forKey: documentKey, in: db) { try consider(key: documentKey, record: $0) } ?? true
                return going
            }
            try context.txn.scan(ks, lower: bounds.lower, upper: bounds.upper, prefix: bounds.prefix, reverse: false) { try visit($1) }
            // Arrays share one index key; `==` matches an array holding the value (see `FieldCondition.matches`).
            let arrayKey = IndexKeyEncoding.encode(.array([]))
            if going, condition.op == .equal, bounds.prefix != arrayKey {
                try context.txn.scan(ks, lower: nil, upper: nil, prefix: arrayKey, reverse: false) { try visit($1) }
            }
        } else {
            try context.txn.scan(db, prefix: nil, reverse: false) { try consider(key: $0, record: $1) }
        }
        if !sort.isEmpty {
            // Each document's sort values read once, before sorting.
            let sortPaths = sort.map { IndexFieldPath($0.field) }
            var keyed = found.map { found in (found, sortPaths.map { $0.value(in: found.document) ?? .null }) }
            found = []
            keyed.sort { a, b in
                for (i, key) in sort.enumerated() {
                    let order = Self.sortOrder(a.1[i], b.1[i])
                    if order == .orderedSame { continue }
                    return key.descending ? order == .orderedDescending : order == .orderedAscending
                }
                return false
            }
            found = keyed.prefix(max).map(\.0)
        }
        let strategy: QueryPlan.Strategy = choice.map { .index(name: $0.0.name, condition: $0.1) } ?? .scan
        return (found, QueryPlan(strategy: strategy, rowsExamined: examined, rowsReturned: found.count))
    }

    /// A total order for sorting: missing/null first, then by value; incomparable kinds by kind.
    static func sortOrder(_ a: DocumentValue, _ b: DocumentValue) -> ComparisonResult {
        if let order = FieldCondition.compare(a, b) { return order }
        let ka = IndexKeyEncoding.encode(a).first ?? 0, kb = IndexKeyEncoding.encode(b).first ?? 0
        return ka < kb ? .orderedAscending : ka > kb ? .orderedDescending : .orderedSame
    }
}

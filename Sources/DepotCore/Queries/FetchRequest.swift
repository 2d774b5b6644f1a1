import Foundation

/// What to fetch: conditions an index can serve, a Foundation `#Predicate` and/or a closure
/// filter, sort descriptors, limit and offset.
///
/// ```swift
/// let request = FetchRequest<Employee>()
///     .matching(\.salary, .greaterThan(100))          // served by an index on salary, if declared
///     .filter(#Predicate { $0.name.starts(with: "A") })
///     .sorted(by: SortDescriptor(\.name))
///     .limit(10)
/// let rich = try store.read { try $0.fetch(request) }
/// ```
///
/// Without sort descriptors, results come in ID order (scans) or index order (index scans),
/// and only as many documents as `offset + limit` are read.
public struct FetchRequest<D: Document>: @unchecked Sendable {
    // @unchecked Sendable: `extract` closures only apply Sendable key paths (pure); the filter
    // closures are built from the caller's @Sendable closures; Predicate and SortDescriptor are Sendable.
    struct Condition {
        var condition: FieldCondition
        var extract: (D) -> DocumentValue
    }

    var conditions: [Condition] = []
    /// A Foundation predicate every result must satisfy.
    public var predicate: Predicate<D>?
    var closureFilter: ((D) -> Bool)?
    /// The order of results.
    public var sortDescriptors: [SortDescriptor<D>] = []
    /// At most this many results.
    public var fetchLimit: Int?
    /// Skip this many results first.
    public var fetchOffset: Int = 0

    /// A request for every document of `D`, optionally filtered, sorted and limited.
    public init(predicate: Predicate<D>? = nil, sortedBy: [SortDescriptor<D>] = [], limit: Int? = nil, offset: Int = 0) {
        self.predicate = predicate
        self.sortDescriptors = sortedBy
        self.fetchLimit = limit
        self.fetchOffset = offset
    }

    /// The field conditions of this request.
    package var fieldConditions: [FieldCondition] { conditions.map(\.condition) }

    /// Adds a condition on a field; an index on that field serves it (equality, ranges, prefixes).
    /// The field path is the one of the type's index on `keyPath` if it declares one, else the
    /// key path's name (or `field`).
    public func matching<V: IndexableValue>(_ keyPath: KeyPath<D, V> & Sendable, _ comparison: Comparison<V>, field: String? = nil) -> Self {
        var copy = self
        let name = field ?? D.indexes.first(where: { $0.keyPath == keyPath as AnyKeyPath })?.field ?? DocumentIndex<D>.fieldName(of: keyPath)
        copy.conditions.append(Condition(condition: FieldCondition(field: name, op: comparison.op, value: comparison.value),
                                         extract: { $0[keyPath: keyPath].indexValue }))
        return copy
    }

    /// Adds a Foundation predicate (combined with any earlier one by AND).
    public func filter(_ predicate: Predicate<D>) -> Self {
        var copy = self
        if let existing = copy.predicate {
            // Two predicates: evaluate both through the closure filter.
            copy.predicate = nil
            let previous = copy.closureFilter
            copy.closureFilter = { d in
                (previous?(d) ?? true) && ((try? existing.evaluate(d)) ?? false) && ((try? predicate.evaluate(d)) ?? false)
            }
        } else {
            copy.predicate = predicate
        }
        return copy
    }

    /// Adds a closure filter (combined with any earlier one by AND).
    public func filter(_ isIncluded: @escaping @Sendable (D) -> Bool) -> Self {
        var copy = self
        let previous = copy.closureFilter
        if let previous {
            copy.closureFilter = { previous($0) && isIncluded($0) }
        } else {
            copy.closureFilter = isIncluded
        }
        return copy
    }

    /// Sets the order of results.
    public func sorted(by descriptors: SortDescriptor<D>...) -> Self {
        var copy = self
        copy.sortDescriptors = descriptors
        return copy
    }

    /// Sets the order of results.
    public func sorted(by descriptors: [SortDescriptor<D>]) -> Self {
        var copy = self
        copy.sortDescriptors = descriptors
        return copy
    }

    /// Limits the number of results (0 or more: a negative limit fails the fetch with
    /// `DepotError` code `.invalidQuery`).
    public func limit(_ n: Int) -> Self {
        var copy = self
        copy.fetchLimit = n
        return copy
    }

    /// Skips the first `n` results (0 or more: a negative offset fails the fetch with
    /// `DepotError` code `.invalidQuery`).
    public func offset(_ n: Int) -> Self {
        var copy = self
        copy.fetchOffset = n
        return copy
    }

    /// Whether `document` satisfies every condition, the predicate and the filter.
    func includes(_ document: D) throws -> Bool {
        for c in conditions where !c.condition.matches(c.extract(document)) { return false }
        if let predicate, try !predicate.evaluate(document) { return false }
        if let closureFilter, !closureFilter(document) { return false }
        return true
    }
}

/// How a query ran: by index or by scan, and how many rows it looked at.
public struct QueryPlan: Sendable, Hashable, CustomStringConvertible {
    /// The access path.
    public enum Strategy: Sendable, Hashable {
        /// Every document of the collection was read.
        case scan
        /// An index served a condition.
        case index(name: String, condition: FieldCondition)
        /// The order of an index served the sort of a request with a limit: the walk stopped
        /// once the limit was reached.
        case indexOrder(name: String)
    }
    /// The access path chosen.
    public var strategy: Strategy
    /// Documents read and tested.
    public var rowsExamined: Int
    /// Documents returned (or counted).
    public var rowsReturned: Int

    /// Whether an index was used.
    public var usedIndex: Bool { if case .scan = strategy { return false } else { return true } }

    public var description: String {
        switch strategy {
        case .scan: return "scan: examined \(rowsExamined), returned \(rowsReturned)"
        case let .index(name, condition): return "index '\(name)' for \(condition): examined \(rowsExamined), returned \(rowsReturned)"
        case let .indexOrder(name): return "index '\(name)' in sort order: examined \(rowsExamined), returned \(rowsReturned)"
        }
    }
}

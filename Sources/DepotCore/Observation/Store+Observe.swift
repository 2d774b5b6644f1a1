extension Store {
    /// A live query: the results of `request` now, and again after each commit that touches
    /// `D`'s collection in this store's alias (see ``StoreObservation``).
    ///
    /// ```swift
    /// for try await rich in store.observe(FetchRequest<Employee>().matching(\.salary, .greaterThan(100))) {
    ///     print(rich.count)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - request: what to fetch.
    ///   - alsoTracking: more collections (of this alias) whose commits trigger a re-read, such as
    ///     those of the documents `D` references.
    public func observe<D: Document>(_ request: FetchRequest<D>, alsoTracking: Set<String> = []) -> StoreObservation<[D]> {
        StoreObservation(store: self, aliases: [alias], collections: alsoTracking.union([D.collection]),
                         read: { tx in try tx.fetch(request) })
    }

    /// A live value computed by `read` in a read transaction: now, and again after each commit
    /// that touches one of `collections` (see ``StoreObservation``).
    ///
    /// ```swift
    /// let totals = store.observe(collections: [Employee.collection]) { tx in
    ///     try tx.fetch(FetchRequest<Employee>()).reduce(0) { $0 + $1.salary }
    /// }
    /// for try await total in totals { print(total) }
    /// ```
    ///
    /// - Parameters:
    ///   - collections: the collection names whose commits trigger a re-read (a document type's
    ///     is `D.collection`; the key/value kit's is `"$kv"`).
    ///   - aliases: the aliases whose commits count; nil (the default) means this store's alias.
    ///   - read: runs in a read transaction of this store's alias, on a queue of the
    ///     observation's own; keep it free of side effects.
    public func observe<Value: Sendable>(collections: Set<String>, aliases: Set<String>? = nil,
                                         _ read: @escaping @Sendable (DocumentTransaction) throws -> Value) -> StoreObservation<Value> {
        StoreObservation(store: self, aliases: aliases ?? [alias], collections: collections, read: read)
    }
}

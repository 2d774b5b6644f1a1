extension Store {
    /// When a `Target` is deleted (by any writer, in any alias of this store), cascades to or
    /// denies the delete for the `Source` documents whose `keyPath` references it.
    ///
    /// The rule finds the reference in the stored field named as the property (or as an index
    /// on `keyPath` declares it); pass `field` with the coded field path when `CodingKeys`
    /// stores the property under another name. A stored `Source` document without that field
    /// (and no default for it in `Source.fieldDefaults`) makes the delete fail with
    /// `DepotError.Code/invalidDeleteRule` (nothing deleted).
    public func registerDeleteRule<Source: Document, Target: Document>(_ rule: DeleteRule, from source: Source.Type,
                                                                       via keyPath: KeyPath<Source, Reference<Target>> & Sendable,
                                                                       field: String? = nil) throws {
        guard rule != .nullify else {
            throw DepotError.invalidDeleteRule("nullify needs an optional reference field (Reference<\(Target.self)>?) in \(Source.self)")
        }
        if field?.isEmpty == true { throw DepotError.invalidDeleteRule("registerDeleteRule(from: \(Source.self)): the field path is empty") }
        let path = field ?? Self.field(Source.self, keyPath)
        core.register(RegisteredDeleteRule(rule: rule, source: Source.collection, field: path, target: Target.collection,
                                           fieldRequired: Source.fieldDefaults[path] == nil))
    }

    /// When a `Target` is deleted, nullifies, cascades to or denies the delete for the `Source`
    /// documents whose optional `keyPath` references it; `field`: the coded field path when
    /// `CodingKeys` stores the property under another name (an empty one is ignored).
    public func registerDeleteRule<Source: Document, Target: Document>(_ rule: DeleteRule, from source: Source.Type,
                                                                       via keyPath: KeyPath<Source, Reference<Target>?> & Sendable,
                                                                       field: String? = nil) {
        let path = field.flatMap { $0.isEmpty ? nil : $0 } ?? Self.field(Source.self, keyPath)
        core.register(RegisteredDeleteRule(rule: rule, source: Source.collection, field: path, target: Target.collection))
    }

    /// When an `Owner` is deleted, deletes the documents its `keyPath` references too, with
    /// their own rules applied: one reference or an array of them, eager (a `Document`-typed
    /// property) or lazy (``Reference``). This is Core Data's cascade on the owner's
    /// relationship — DLData's `Company.employees` — where `registerDeleteRule(_:from:via:)`
    /// is the rule on the referencing side.
    ///
    /// `field`: the coded field path when `CodingKeys` stores the property under another name
    /// (an empty one is ignored). An owner of a non-optional property stored without that field
    /// (and no default for it in `Owner.fieldDefaults`) fails the delete with
    /// `DepotError.Code/invalidDeleteRule` (nothing deleted).
    public func registerCascade<Owner: Document, Value>(from owner: Owner.Type, via keyPath: KeyPath<Owner, Value> & Sendable,
                                                        field: String? = nil) {
        let path = field.flatMap { $0.isEmpty ? nil : $0 } ?? Self.field(Owner.self, keyPath)
        core.register(RegisteredDeleteRule(rule: .cascade, source: Owner.collection, field: path, target: Owner.collection, owning: true,
                                           fieldRequired: !(Value.self is any OptionalValue.Type) && Owner.fieldDefaults[path] == nil))
    }

    /// ``registerCascade(from:via:field:)`` for a collection and a field path, for collections without
    /// a Swift type (seeded or schemaless documents).
    ///
    /// - Throws: `DepotError.Code/invalidCollectionName` or `DepotError.Code/invalidDeleteRule`
    ///   for an invalid collection name or an empty field path.
    public func registerCascade(fromCollection collection: String, field: String) throws {
        try StoreLayout.validateCollection(collection)
        guard !field.isEmpty else { throw DepotError.invalidDeleteRule("registerCascade(fromCollection: '\(collection)'): the field path is empty") }
        core.register(RegisteredDeleteRule(rule: .cascade, source: collection, field: field, target: collection, owning: true))
    }

    private static func field<Source: Document>(_ source: Source.Type, _ keyPath: AnyKeyPath) -> String {
        Source.indexes.first { $0.keyPath == keyPath }?.field ?? DocumentIndex<Source>.fieldName(of: keyPath)
    }
}

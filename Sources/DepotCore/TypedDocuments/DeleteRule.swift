extension Store {
    /// When a `Target` is deleted (by any writer, in any alias of this store), cascades to or
    /// denies the delete for the `Source` documents whose `keyPath` references it.
    public func registerDeleteRule<Source: Document, Target: Document>(_ rule: DeleteRule, from source: Source.Type,
                                                                       via keyPath: KeyPath<Source, Reference<Target>> & Sendable) throws {
        guard rule != .nullify else {
            throw DepotError.invalidDeleteRule("nullify needs an optional reference field (Reference<\(Target.self)>?) in \(Source.self)")
        }
        core.register(RegisteredDeleteRule(rule: rule, source: Source.collection, field: Self.field(Source.self, keyPath), target: Target.collection))
    }

    /// When a `Target` is deleted, nullifies, cascades to or denies the delete for the `Source`
    /// documents whose optional `keyPath` references it.
    public func registerDeleteRule<Source: Document, Target: Document>(_ rule: DeleteRule, from source: Source.Type,
                                                                       via keyPath: KeyPath<Source, Reference<Target>?> & Sendable) {
        core.register(RegisteredDeleteRule(rule: rule, source: Source.collection, field: Self.field(Source.self, keyPath), target: Target.collection))
    }

    /// When an `Owner` is deleted, deletes the documents its `keyPath` references too, with
    /// their own rules applied: one reference or an array of them, eager (a `Document`-typed
    /// property) or lazy (``Reference``). This is Core Data's cascade on the owner's
    /// relationship — DLData's `Company.employees` — where `registerDeleteRule(_:from:via:)`
    /// is the rule on the referencing side.
    public func registerCascade<Owner: Document, Value>(from owner: Owner.Type, via keyPath: KeyPath<Owner, Value> & Sendable) {
        let field = Self.field(Owner.self, keyPath)
        core.register(RegisteredDeleteRule(rule: .cascade, source: Owner.collection, field: field, target: Owner.collection, owning: true))
    }

    /// ``registerCascade(from:via:)`` for a collection and a field path, for collections without
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

extension DocumentTransaction {
    /// Applies the delete rules registered for the collection of `target` before the record
    /// under `key` is deleted. Returns false, doing nothing, when that record's delete is
    /// already under way (a cascade came back to it): the delete further up deletes it.
    @discardableResult
    func applyDeleteRules(_ target: RecordTarget, key: UnsafeRawBufferPointer) throws -> Bool {
        let rules = deleteRules(of: target)
        if rules.isEmpty { return true }
        let marker = ChangeRecorder.Key(alias: target.alias, collection: target.collection, key: [UInt8](key))
        guard context.deleting.insert(marker).inserted else { return false } // a cascade came back to it
        defer { context.deleting.remove(marker) }
        let reference = DocumentValue.reference(collection: target.collection, id: target.kind.value(ofKey: key))
        for rule in rules {
            if rule.owning {
                try deleteOwned(by: target, key: key, field: rule.field)
                continue
            }
            guard let source = try context.existingTarget(alias: target.alias, collection: rule.source) else { continue }
            let referencing = try keys(in: source, whereField: rule.field, is: reference)
            if referencing.isEmpty { continue }
            switch rule.rule {
            case .deny:
                throw DepotError.deleteDenied(collection: target.collection, id: displayIDOfKey(key, kind: target.kind),
                                              referencedBy: rule.source, count: referencing.count)
            case .cascade:
                for k in referencing { _ = try k.withUnsafeBytes { try deleteRecord(source, key: $0) } }
            case .nullify:
                for k in referencing {
                    try k.withUnsafeBytes { sourceKey in
                        guard let (flags, document) = try storedDocument(source, key: sourceKey) else { return }
                        var changed = document
                        changed.setValue(.null, atPath: rule.field)
                        let bytes = changed.binary()
                        try writeRecord(source, key: sourceKey, flags: flags, displayID: { displayIDOfKey(sourceKey, kind: source.kind) }) {
                            $0.append(contentsOf: bytes)
                        }
                    }
                }
            }
        }
        return true
    }

    /// The keys of the records of `source` whose `field` holds `value`: through an index on the
    /// field when the collection has one (candidates re-checked), else by a scan.
    private func keys(in source: RecordTarget, whereField field: String, is value: DocumentValue) throws -> [[UInt8]] {
        var candidates: [[UInt8]] = []
        let schema = try context.schema(alias: source.alias, collection: source.collection)
        if let index = schema.indexes.first(where: { $0.field == field && !schema.legacyIndexes.contains($0.name) }),
           let ks = try context.txn.keyspace(named: StoreLayout.indexDatabase(alias: source.alias, collection: source.collection, index: index.name),
                                             create: false, multiValue: !index.unique) {
            try context.txn.scan(ks, lower: nil, upper: nil, prefix: IndexKeyEncoding.encode(value), reverse: false) { _, documentKey in
                candidates.append([UInt8](documentKey))
                return true
            }
        } else {
            try context.txn.scan(source.keyspace, prefix: nil, reverse: false) { key, _ in
                candidates.append([UInt8](key))
                return true
            }
        }
        return try candidates.filter { key in
            try key.withUnsafeBytes { k in try storedDocument(source, key: k)?.document.value(atPath: field) == value }
        }
    }

    /// Deletes the documents that the `field` of the record under `key` references (one
    /// reference or an array of them), each through the record pipeline (their rules apply).
    private func deleteOwned(by owner: RecordTarget, key: UnsafeRawBufferPointer, field: String) throws {
        guard let value = try storedDocument(owner, key: key)?.document[path: field] else { return }
        var references: [(collection: String, id: DocumentValue)] = []
        switch value {
        case .reference(let collection, let id): references = [(collection, id)]
        case .array(let items):
            for case .reference(let collection, let id) in items { references.append((collection, id)) }
        default: return
        }
        for reference in references {
            guard let owned = try context.existingTarget(alias: owner.alias, collection: reference.collection),
                  let ownedKey = owned.kind.key(for: reference.id) else { continue }
            _ = try ownedKey.withUnsafeBytes { try deleteRecord(owned, key: $0) }
        }
    }

    private func storedDocument(_ target: RecordTarget, key: UnsafeRawBufferPointer) throws -> (flags: UInt8, document: DocumentValue)? {
        try context.txn.withValue(forKey: key, in: target.keyspace) { bytes in
            let (header, document) = try openDocument(bytes, collection: target.collection, key: key, kind: target.kind)
            return (header.flags, document)
        }
    }
}

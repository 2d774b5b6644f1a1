/// The delete rules a collection's records are deleted with (registered by the document layer,
/// kept by ``EngineCore``): before a record is deleted, the records that reference it are
/// denied, cascaded or nullified, each through the record pipeline.
extension TransactionContext {
    /// The delete rules that apply when a record of `target` is deleted (looked up once).
    package func deleteRules(of target: RecordTarget) -> [RegisteredDeleteRule] {
        if let rules = target.deleteRules { return rules }
        let rules = target.isKeyValue ? [] : engine.deleteRules(for: target.collection)
        target.deleteRules = rules
        return rules
    }

    /// Applies the delete rules registered for the collection of `target` before the record
    /// under `key` is deleted. Returns false, doing nothing, when that record's delete is
    /// already under way (a cascade came back to it): the delete further up deletes it.
    @discardableResult
    func applyDeleteRules(_ target: RecordTarget, key: UnsafeRawBufferPointer) throws -> Bool {
        let rules = deleteRules(of: target)
        if rules.isEmpty { return true }
        let marker = ChangeRecorder.Key(alias: target.alias, collection: target.collection, key: [UInt8](key))
        guard deleting.insert(marker).inserted else { return false } // a cascade came back to it
        defer { deleting.remove(marker) }
        let reference = DocumentValue.reference(collection: target.collection, id: target.kind.value(ofKey: key))
        for rule in rules {
            if rule.owning {
                try deleteOwned(by: target, key: key, rule: rule)
                continue
            }
            guard let source = try existingTarget(alias: target.alias, collection: rule.source) else { continue }
            let referencing = try keys(in: source, rule: rule, is: reference)
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

    /// The keys of the records of `source` whose rule field holds `value`: through an index on
    /// the field when the collection has one (candidates re-checked), else by a scan.
    private func keys(in source: RecordTarget, rule: RegisteredDeleteRule, is value: DocumentValue) throws -> [[UInt8]] {
        let field = rule.field
        var candidates: [[UInt8]] = []
        let schema = try schema(alias: source.alias, collection: source.collection)
        if let index = schema.indexes.first(where: { $0.field == field && !schema.legacyIndexes.contains($0.name) }),
           let ks = try txn.keyspace(named: StoreLayout.indexDatabase(alias: source.alias, collection: source.collection, index: index.name),
                                     create: false, multiValue: !index.unique) {
            try txn.scan(ks, lower: nil, upper: nil, prefix: IndexKeyEncoding.encode(value), reverse: false) { _, documentKey in
                candidates.append([UInt8](documentKey))
                return true
            }
        } else {
            try txn.scan(source.keyspace, prefix: nil, reverse: false) { key, _ in
                candidates.append([UInt8](key))
                return true
            }
        }
        return try candidates.filter { key in
            try key.withUnsafeBytes { k in
                guard let document = try storedDocument(source, key: k)?.document else { return false }
                guard let found = document.value(atPath: field) else {
                    if rule.fieldRequired { throw Self.missingRuleField(rule) }
                    return false
                }
                return found == value
            }
        }
    }

    /// The error of a rule whose field a stored document of its source lacks.
    private static func missingRuleField(_ rule: RegisteredDeleteRule) -> DepotError {
        DepotError.invalidDeleteRule("the delete rule of '\(rule.source)' on the field '\(rule.field)' found a stored '\(rule.source)' document without that field: "
            + "the property is stored under another coded name (CodingKeys); register the rule with `field:` set to the coded field path (nothing was deleted)")
    }

    /// Deletes the documents that the `field` of the record under `key` references (one
    /// reference or an array of them), each through the record pipeline (their rules apply).
    private func deleteOwned(by owner: RecordTarget, key: UnsafeRawBufferPointer, rule: RegisteredDeleteRule) throws {
        guard let document = try storedDocument(owner, key: key)?.document else { return }
        guard let value = document[path: rule.field] else {
            if rule.fieldRequired { throw Self.missingRuleField(rule) }
            return
        }
        var references: [(collection: String, id: DocumentValue)] = []
        switch value {
        case .reference(let collection, let id): references = [(collection, id)]
        case .array(let items):
            for case .reference(let collection, let id) in items { references.append((collection, id)) }
        default: return
        }
        for reference in references {
            guard let owned = try existingTarget(alias: owner.alias, collection: reference.collection),
                  let ownedKey = owned.kind.key(for: reference.id) else { continue }
            _ = try ownedKey.withUnsafeBytes { try deleteRecord(owned, key: $0) }
        }
    }

    /// The stored record of `key` in `target` as a schemaless document, with its flags.
    private func storedDocument(_ target: RecordTarget, key: UnsafeRawBufferPointer) throws -> (flags: UInt8, document: DocumentValue)? {
        try txn.withValue(forKey: key, in: target.keyspace) { bytes in
            let (header, document) = try RecordReader.document(bytes, alias: target.alias, collection: target.collection, key: key, kind: target.kind)
            return (header.flags, document)
        }
    }
}

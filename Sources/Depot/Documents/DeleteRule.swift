import DepotLMDB

/// What happens to the documents that reference a deleted document through a lazy
/// ``Reference`` field (Core Data's delete rules). Without a rule — the default — deleting never
/// follows references.
public enum DeleteRule: String, Sendable, Hashable {
    /// The referencing field is set to null (optional references only).
    case nullify
    /// The referencing documents are deleted too (and their own rules applied).
    case cascade
    /// The delete fails with ``DepotError/Code/deleteDenied`` while any document references it.
    case deny
}

/// A registered rule: documents of `source` whose `field` references a document of `target`.
struct RegisteredDeleteRule: Sendable, Hashable {
    var rule: DeleteRule
    var source: String
    var field: String
    var target: String
}

extension Store {
    /// When a `Target` is deleted (by any writer, in any alias of this store), cascades to or
    /// denies the delete for the `Source` documents whose `keyPath` references it.
    public func registerDeleteRule<Source: Document, Target: Document>(_ rule: DeleteRule, from source: Source.Type,
                                                                       via keyPath: KeyPath<Source, Reference<Target>> & Sendable) throws {
        guard rule != .nullify else {
            throw DepotError.invalidState("nullify needs an optional reference field (Reference<\(Target.self)>?) in \(Source.self)")
        }
        core.register(RegisteredDeleteRule(rule: rule, source: Source.collection, field: Self.field(Source.self, keyPath), target: Target.collection))
    }

    /// When a `Target` is deleted, nullifies, cascades to or denies the delete for the `Source`
    /// documents whose optional `keyPath` references it.
    public func registerDeleteRule<Source: Document, Target: Document>(_ rule: DeleteRule, from source: Source.Type,
                                                                       via keyPath: KeyPath<Source, Reference<Target>?> & Sendable) {
        core.register(RegisteredDeleteRule(rule: rule, source: Source.collection, field: Self.field(Source.self, keyPath), target: Target.collection))
    }

    private static func field<Source: Document>(_ source: Source.Type, _ keyPath: AnyKeyPath) -> String {
        Source.indexes.first { $0.keyPath == keyPath }?.field ?? DocumentIndex<Source>.fieldName(of: keyPath)
    }
}

extension DocumentTransaction {
    /// Applies the delete rules registered for the collection of `target` before the record
    /// under `key` is deleted.
    func applyDeleteRules(_ target: RecordTarget, key: UnsafeRawBufferPointer) throws {
        if target.deleteRules == nil { target.deleteRules = target.isKeyValue ? [] : context.core.deleteRules(for: target.collection) }
        guard let rules = target.deleteRules, !rules.isEmpty else { return }
        let marker = ChangeRecorder.Key(alias: target.alias, collection: target.collection, key: [UInt8](key))
        guard context.deleting.insert(marker).inserted else { return } // a cascade came back to it
        defer { context.deleting.remove(marker) }
        let reference = DocumentValue.reference(collection: target.collection, id: target.kind.value(ofKey: key))
        for rule in rules {
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

    private func storedDocument(_ target: RecordTarget, key: UnsafeRawBufferPointer) throws -> (flags: UInt8, document: DocumentValue)? {
        try context.txn.withValue(forKey: key, in: target.keyspace) { bytes in
            let (header, payload) = try openRecord(bytes, collection: target.collection, key: key, kind: target.kind)
            return (header.flags, try DocumentValue(binary: payload))
        }
    }
}

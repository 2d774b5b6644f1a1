
/// Connects the binary codec to the document layer: identified sub-documents are parked as
/// their own records and written as references; references are resolved from the same
/// transaction when read, so every parent sees a child's latest version.
final class ReferenceHook: BinaryReferenceEncoding, BinaryReferenceDecoding {
    /// The transaction view this hook parks and resolves in: set by the view right after it is
    /// created (it creates its hook first, so that the hook is a constant of the view).
    unowned var owner: DocumentTransaction?

    init() {}

    /// ``owner``, or a typed error if the hook is used before its view set it (never, by construction).
    private var transaction: DocumentTransaction {
        get throws {
            guard let owner else { throw DepotError.transactionMisuse("a reference hook was used before its transaction was set up") }
            return owner
        }
    }

    func reference(for value: any Encodable) throws -> (collection: String, id: DocumentValue)? {
        if let lazy = value as? any LazyReference { return (lazy.referencedCollection, lazy.referencedID) }
        guard let document = value as? any Document else { return nil }
        return try parkReferenced(document)
    }

    private func parkReferenced<D: Document>(_ document: D) throws -> (collection: String, id: DocumentValue) {
        guard let facts = try transaction.facts(D.self, create: true) else {
            throw DepotError.storageInconsistent("the collection of \(D.self) could not be created")
        }
        let target = facts.target
        let context = try transaction.context
        let skip = try document.id.withKeyBytes { key -> Bool in
            // A document already being parked: a cycle of eager references, which no read could
            // ever resolve (it fails with the same error). Refused before anything is committed;
            // a cycle is stored with a `LazyReference` on one of its edges.
            if let start = context.parking.firstIndex(where: { $0.matches(alias: target.alias, collection: target.collection, key: key) }) {
                let chain = context.parking[start...].map { "\($0.collection)/\(displayKey($0))" }
                    + ["\(target.collection)/\(displayID(document.id.documentValue))"]
                throw DepotError.referenceCycle(chain: chain)
            }
            guard !context.parkedReferences.isEmpty,
                  let previous = context.parkedReferences[.init(target: ObjectIdentifier(target), key: PackedKey(key))] else { return false }
            return Self.isUnchanged(document, previous: previous, facts: facts)
        }
        if !skip {
            try transaction.park(document)
            if let entry = Self.parkedEntry(document, facts: facts) {
                document.id.withKeyBytes { key in
                    context.parkedReferences[.init(target: ObjectIdentifier(target), key: PackedKey(key))] = entry
                }
            }
        }
        return (target.collection, document.id.documentValue)
    }

    /// Whether `document` equals what was parked for it earlier in this transaction (the record
    /// pipeline forgets the entry whenever the record is written another way).
    private static func isUnchanged<D: Document>(_ document: D, previous: TransactionContext.ParkedValue, facts: TypeFacts<D>) -> Bool {
        switch previous {
        case .value(let old):
            guard facts.isEquatable, let new = document as? any Equatable else { return false }
            return new.isEqual(to: old)
        case .bytes(let old):
            return plainBytes(document) == old
        }
    }

    private static func parkedEntry<D: Document>(_ document: D, facts: TypeFacts<D>) -> TransactionContext.ParkedValue? {
        if facts.isEquatable, let equatable = document as? any Equatable { return .value(equatable) }
        return plainBytes(document).map(TransactionContext.ParkedValue.bytes)
    }

    private static func plainBytes<D: Document>(_ document: D) -> [UInt8]? {
        var encoder = BinaryEncoder()
        encoder.referenceHook = ContentReferences()
        return try? encoder.encode(document)
    }

    func resolve<T: Decodable>(_ type: T.Type, collection: String, id: DocumentValue) throws -> T {
        if let lazyType = T.self as? any LazyReference.Type {
            // A lazy reference keeps the identity only: nothing is read now.
            guard let lazy = lazyType.make(collection: collection, id: id) as? T else {
                throw DepotError.unresolvableReference(expected: String(describing: T.self))
            }
            return lazy
        }
        guard let documentType = T.self as? any Document.Type else {
            throw DepotError.unresolvableReference(expected: String(describing: T.self))
        }
        let resolved = try resolveDocument(documentType, collection: collection, id: id)
        guard let typed = resolved as? T else {
            throw DepotError.unresolvableReference(expected: String(describing: T.self))
        }
        return typed
    }

    private func resolveDocument<D: Document>(_ type: D.Type, collection: String, id: DocumentValue) throws -> D {
        guard collection == D.collection, let typedID = D.ID(documentValue: id) else {
            throw DepotError.unresolvableReference(expected: String(describing: D.self))
        }
        let context = try transaction.context
        let alias = try transaction.alias
        let cycle = typedID.withKeyBytes { key in
            context.resolving.contains { $0.matches(alias: alias, collection: collection, key: key) }
        }
        if cycle {
            let chain = context.resolving.chain.map { "\($0.collection)/\(displayKey($0))" } + ["\(collection)/\(displayID(id))"]
            throw DepotError.referenceCycle(chain: chain)
        }
        guard let document = try transaction.retrieve(D.self, id: typedID) else {
            let parent = context.resolving.last
            throw DepotError.danglingReference(parentCollection: parent?.collection ?? "?",
                                               parentID: parent.map(displayKey) ?? "?",
                                               childCollection: collection, childID: displayID(id))
        }
        return document
    }

    private func displayKey(_ key: RecordInProgress) -> String {
        guard let kind = try? transaction.context.storedKind(
            alias: key.alias, collection: key.collection,
            name: StoreLayout.documentDatabase(alias: key.alias, collection: key.collection)) else { return "?" }
        return displayID(kind.value(ofKey: key.key))
    }
}

extension Equatable {
    /// Whether `other` is a value of this type equal to this one.
    func isEqual(to other: any Equatable) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}


/// What the document layer needs to know about a document type in one transaction and alias —
/// its collection (a resolved ``RecordTarget``) and whether it is ``Syncable`` — looked up once
/// per transaction instead of on every call. Not generic, so that the hot paths find it without
/// run-time generic metadata; ``TypeFacts`` adds what depends on the type.
@usableFromInline
class AnyTypeFacts {
    @usableFromInline let target: RecordTarget
    @usableFromInline let isSyncable: Bool
    /// Whether the type is `Equatable` (references parked earlier are then compared by value).
    let isEquatable: Bool
    // The vars below are fields of an object confined to one transaction's thread and never
    // accessed overlapping: no run-time exclusivity checks.
    /// Whether the declared indexes' field paths were checked against a stored document.
    @usableFromInline @exclusivity(unchecked) var fieldsChecked: Bool
    /// The type as a type with a generated codec (`@BinaryCodable`), else nil: records are then
    /// encoded and decoded without keyed containers (same bytes).
    @usableFromInline let generated: (any BinaryCodableDocument.Type)?
    /// Whether typed reads decode records straight through the generated codec: the type has
    /// one, no sync status to set from the record's flags and no field defaults to fill in.
    @usableFromInline let decodesDirectly: Bool
    /// Whether typed reads decode records straight through `Decodable` (no generated codec, no
    /// sync status, no field defaults): the decode of ``decodesDirectly`` with keyed containers.
    @usableFromInline let decodesPlainlyDirectly: Bool
    /// Stored field paths of the key paths projections read (see `field(_:of:)`), by key path identity.
    @exclusivity(unchecked) var fieldPaths: [ObjectIdentifier: (keyPath: AnyKeyPath, path: StoredFieldPath)] = [:]
    /// The entry of `fieldPaths` used last (projections in a loop read one key path): found without hashing.
    /// (The key path is kept alive here and by its `fieldPaths` entry: its identity stays its own.)
    @usableFromInline @exclusivity(unchecked) final var lastKeyPath: AnyKeyPath?
    @usableFromInline @exclusivity(unchecked) final var lastPath: StoredFieldPath?

    /// Whether the type declares defaults for fields older records may lack.
    let hasFieldDefaults: Bool

    init(target: RecordTarget, isSyncable: Bool, isEquatable: Bool, fieldsChecked: Bool,
         generated: (any BinaryCodableDocument.Type)?, hasFieldDefaults: Bool) {
        self.hasFieldDefaults = hasFieldDefaults
        self.target = target
        self.isSyncable = isSyncable
        self.isEquatable = isEquatable
        self.fieldsChecked = fieldsChecked
        self.generated = generated
        decodesDirectly = generated != nil && !isSyncable && !hasFieldDefaults
        decodesPlainlyDirectly = generated == nil && !isSyncable && !hasFieldDefaults
    }
}

/// The facts of `D`, with its declared indexes.
final class TypeFacts<D: Document>: AnyTypeFacts {
    let indexes: [DocumentIndex<D>]
    /// Stored field paths of key paths, by value (see `fieldPath(of:)`).
    @exclusivity(unchecked) var fieldPathsByValue: [AnyKeyPath: StoredFieldPath] = [:]

    /// What `D` declares (shared by the store core's transactions).
    let declaration: TypeDeclaration<D>

    init(target: RecordTarget, declaration: TypeDeclaration<D>) {
        self.indexes = declaration.indexes
        self.declaration = declaration
        super.init(target: target, isSyncable: declaration.isSyncable, isEquatable: declaration.isEquatable,
                   fieldsChecked: declaration.fieldsChecked, generated: declaration.generated,
                   hasFieldDefaults: declaration.hasFieldDefaults)
    }
}

extension DocumentTransaction {
    /// The facts of `D` in this view's alias; nil when its collection does not exist and
    /// `create` is false. In a write transaction the collection's stored schema is reconciled
    /// with what `D` declares the first time `D` is used.
    func facts<D: Document>(_ type: D.Type, create: Bool) throws -> TypeFacts<D>? {
        // Safe: entries under ObjectIdentifier(D.self) are only ever TypeFacts<D>.
        try anyFacts(D.self, create: create).map { unsafeDowncast($0, to: TypeFacts<D>.self) }
    }

    /// The facts of `D` without its indexes: found without generic metadata when cached.
    /// Inlinable: the facts used last are found without a call. Confirms a schema version check
    /// left for later first (see `TransactionContext.confirmPendingVersion()`).
    @inlinable
    func anyFacts<D: Document>(_ type: D.Type, create: Bool) throws -> AnyTypeFacts? {
        try context.confirmPendingVersion()
        return try unconfirmedFacts(D.self, create: create)
    }

    /// ``anyFacts(_:create:)`` without confirming a schema version check left for later: for a
    /// read that confirms it before it hands out what it read (``retrieveConfirmingVersion(_:id:)``).
    @inlinable
    func unconfirmedFacts<D: Document>(_ type: D.Type, create: Bool) throws -> AnyTypeFacts? {
        if viewFactsGeneration == context.factsGeneration, lastFactsType == ObjectIdentifier(D.self), let lastFacts {
            return lastFacts
        }
        return try lookUpFacts(D.self, create: create)
    }

    /// ``anyFacts(_:create:)`` past the facts used last.
    @usableFromInline
    func lookUpFacts<D: Document>(_ type: D.Type, create: Bool) throws -> AnyTypeFacts? {
        if let cached = cachedFacts(ObjectIdentifier(D.self)) { return cached }
        return try makeFacts(D.self, create: create)
    }

    /// The facts this view holds for a type, if any.
    @inline(__always)
    func cachedFacts(_ typeID: ObjectIdentifier) -> AnyTypeFacts? {
        guard viewFactsGeneration == context.factsGeneration else { return nil }
        if lastFactsType == typeID { return lastFacts }
        guard let facts = viewFacts[typeID] else { return nil }
        lastFactsType = typeID
        lastFacts = facts
        return facts
    }

    private func makeFacts<D: Document>(_ type: D.Type, create: Bool) throws -> AnyTypeFacts? {
        // Integer IDs are stored in 8 bytes: a wider type (Int128) would not fit (nor convert).
        if let integer = D.ID.self as? any FixedWidthInteger.Type, integer.bitWidth > 64 {
            throw DepotError.invalidKey(detail: "\(D.self)'s ID type \(D.ID.self) is \(integer.bitWidth) bits wide: integer IDs are stored in 64 bits (use Int64, UInt64 or a smaller integer)")
        }
        let typeID = ObjectIdentifier(D.self)
        if viewFactsGeneration != context.factsGeneration {
            viewFacts.removeAll(keepingCapacity: true)
            lastFactsType = nil
            lastFacts = nil
            viewFactsGeneration = context.factsGeneration
        }
        let key = TransactionContext.TypeFactsKey(type: typeID, alias: alias)
        if let kept = context.typeFacts(for: key) {
            // Safe: the context keeps only AnyTypeFacts (set below).
            let cached = unsafeDowncast(kept, to: AnyTypeFacts.self)
            viewFacts[typeID] = cached
            return cached
        }
        let declaration = unownedStore.core.declarations.of(D.self)
        if isReadOnly, let target = try context.cachedReadTarget(type: typeID, alias: alias, kind: D.ID.idKind, typeVersion: declaration.version,
                                                                  typeName: { declaration.typeName }) {
            let facts = TypeFacts<D>(target: target, declaration: declaration)
            context.setTypeFacts(facts, for: key)
            if viewFactsGeneration == context.factsGeneration { viewFacts[typeID] = facts }
            return facts
        }
        guard let target = try context.target(alias: alias, collection: D.collection, kind: D.ID.idKind, create: create) else { return nil }
        if !isReadOnly {
            try context.reconcile(target, declared: declaration.definitions, tracksSyncStatus: declaration.tracksSyncStatus,
                                  version: declaration.version, typeName: declaration.typeName)
        } else {
            let stored = try context.schema(alias: alias, collection: D.collection).typeVersion
            if stored > declaration.version {
                throw DepotError.newerVersion(collection: D.collection, stored: stored, declared: declaration.version, typeName: declaration.typeName)
            }
            try context.rememberReadTarget(target, type: typeID, typeVersion: stored)
        }
        let facts = TypeFacts<D>(target: target, declaration: declaration)
        context.setTypeFacts(facts, for: key)
        if viewFactsGeneration == context.factsGeneration { viewFacts[typeID] = facts }
        return facts
    }

    /// ``checkIndexFields(_:document:)`` with the facts of `D` as found by `anyFacts`.
    @usableFromInline
    func checkIndexFields<D: Document>(of document: D, facts: AnyTypeFacts) throws {
        // Safe: facts found under ObjectIdentifier(D.self) are only ever TypeFacts<D>.
        try checkIndexFields(unsafeDowncast(facts, to: TypeFacts<D>.self), document: document)
    }

    /// Checks, with the first document of the type a store core writes (until one passes),
    /// that each declared index's field path holds, in the stored form of `document`, the
    /// value its key path gives — otherwise queries through the index would disagree with a
    /// scan (a renamed coding key, a computed property).
    func checkIndexFields<D: Document>(_ facts: TypeFacts<D>, document: D) throws {
        if facts.fieldsChecked { return }
        var plain = BinaryEncoder()
        plain.referenceHook = ContentReferences() // references as stored, nothing parked
        let stored: DocumentValue
        do {
            stored = try DocumentValue(binary: try plain.encode(document))
        } catch {
            return // the park itself reports encoding errors
        }
        for index in facts.indexes {
            let expected = IndexKeyEncoding.encode(index.extract(document))
            let found = IndexKeyEncoding.encode(stored[path: index.field] ?? .null)
            if expected != found {
                throw DepotError.invalidIndex(collection: D.collection, index: index.name,
                                              detail: "the stored field '\(index.field)' does not hold the value of the index's key path; pass `field:` with the coded field path")
            }
        }
        facts.fieldsChecked = true
        facts.declaration.markFieldsChecked()
    }
}

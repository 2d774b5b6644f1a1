
/// The changes a ``Store`` collects while autosave is off (GarageStorage's unit of work): an
/// in-memory overlay keyed by alias, collection and ID where the last write wins.
///
/// Reads through the store see the overlay on top of a read snapshot (no writer is taken);
/// ``Store/save()`` applies the changes, in the order they were made, in one write transaction
/// through the record pipeline; ``Store/rollback()`` drops them. Cost per change is O(1) (one
/// dictionary entry, one encode to validate the document and find the documents it references).
///
/// A value type: reads take a copy (copy-on-write, so no copying while nobody reads).
struct UnitOfWork {
    /// A document: alias, collection and key bytes (the change recorder's key type).
    typealias Key = ChangeRecorder.Key

    struct CollectionKey: Hashable {
        var alias: String
        var collection: String
    }

    /// One change: a parked document (nil: deleted), and how to apply it. References parked
    /// along with a document have no `apply` of their own: the referencing park writes them.
    struct Entry {
        var sequence: Int
        var document: Any?
        var apply: ((DocumentTransaction) throws -> Void)?
    }

    /// A collection (or a whole alias, `collection` nil) emptied by `deleteAll`/`deleteEverything`.
    struct Clear {
        var sequence: Int
        var alias: String
        var collection: String?
        var apply: (DocumentTransaction) throws -> Void
    }

    /// A sync-status change of a document (GarageStorage's `setSyncStatus` with autosave off).
    struct StatusChange {
        var sequence: Int
        var status: SyncStatus
        var apply: (DocumentTransaction) throws -> Void
    }

    private(set) var entries: [Key: Entry] = [:]
    private(set) var clears: [Clear] = []
    private(set) var statuses: [Key: StatusChange] = [:]
    private var touched: Set<CollectionKey> = []
    private var nextSequence = 0

    var isEmpty: Bool { entries.isEmpty && clears.isEmpty && statuses.isEmpty }
    var count: Int { entries.count + clears.count + statuses.count }

    // MARK: Recording

    mutating func park(_ document: Any, alias: String, collection: String, key: [UInt8], apply: ((DocumentTransaction) throws -> Void)?) {
        nextSequence += 1
        let k = Key(alias: alias, collection: collection, key: key)
        entries[k] = Entry(sequence: nextSequence, document: document, apply: apply)
        if apply != nil { statuses[k] = nil } // the park stores the document's own status
        touched.insert(CollectionKey(alias: alias, collection: collection))
    }

    /// Records a delete. With `keepingPark` (the collection cascades to what its documents
    /// reference), a park of the same document before it is kept, applied first, so that the
    /// delete cascades to what the parked document referenced, as with autosave on.
    mutating func delete(alias: String, collection: String, key: [UInt8], keepingPark: Bool = false,
                         apply: @escaping (DocumentTransaction) throws -> Void) {
        nextSequence += 1
        let k = Key(alias: alias, collection: collection, key: key)
        var steps = apply
        if keepingPark, let parked = entries[k], parked.document != nil, let park = parked.apply {
            steps = { tx in
                try park(tx)
                try apply(tx)
            }
        }
        entries[k] = Entry(sequence: nextSequence, document: nil, apply: steps)
        statuses[k] = nil
        touched.insert(CollectionKey(alias: alias, collection: collection))
    }

    /// Records a sync-status change (applied after the changes before it).
    mutating func setStatus(_ status: SyncStatus, alias: String, collection: String, key: [UInt8], apply: @escaping (DocumentTransaction) throws -> Void) {
        nextSequence += 1
        statuses[Key(alias: alias, collection: collection, key: key)] = StatusChange(sequence: nextSequence, status: status, apply: apply)
        touched.insert(CollectionKey(alias: alias, collection: collection))
    }

    /// The pending status of a document, if one was set after its last park.
    func pendingStatus(alias: String, collection: String, key: [UInt8]) -> SyncStatus? {
        if statuses.isEmpty { return nil }
        return statuses[Key(alias: alias, collection: collection, key: key)]?.status
    }

    /// Empties a collection (or every collection of `alias`): earlier entries there are dropped.
    mutating func clear(alias: String, collection: String?, apply: @escaping (DocumentTransaction) throws -> Void) {
        nextSequence += 1
        entries = entries.filter { $0.key.alias != alias || (collection != nil && $0.key.collection != collection) }
        statuses = statuses.filter { $0.key.alias != alias || (collection != nil && $0.key.collection != collection) }
        clears.append(Clear(sequence: nextSequence, alias: alias, collection: collection, apply: apply))
        if let collection { touched.insert(CollectionKey(alias: alias, collection: collection)) }
    }

    /// The changes to apply, in the order they were made (each document's last write only).
    func operations() -> [(DocumentTransaction) throws -> Void] {
        var steps: [(Int, (DocumentTransaction) throws -> Void)] = clears.map { ($0.sequence, $0.apply) }
        for entry in entries.values { if let apply = entry.apply { steps.append((entry.sequence, apply)) } }
        for change in statuses.values { steps.append((change.sequence, change.apply)) }
        steps.sort { $0.0 < $1.0 }
        return steps.map(\.1)
    }

    /// The sequence number of the latest change.
    var lastSequence: Int { nextSequence }

    /// Forgets every change; the change numbers keep counting (see ``removeThrough(sequence:)``).
    mutating func discardAll() {
        entries.removeAll()
        clears.removeAll()
        statuses.removeAll()
        touched.removeAll()
    }

    /// Forgets the changes up to `sequence` (they were saved); later ones stay.
    mutating func removeThrough(sequence: Int) {
        entries = entries.filter { $0.value.sequence > sequence }
        clears.removeAll { $0.sequence <= sequence }
        statuses = statuses.filter { $0.value.sequence > sequence }
        touched = Set((Array(entries.keys) + Array(statuses.keys)).map { CollectionKey(alias: $0.alias, collection: $0.collection) })
        for clear in clears { if let c = clear.collection { touched.insert(CollectionKey(alias: clear.alias, collection: c)) } }
    }

    // MARK: Reading

    /// What the unit of work says about one document: `.some(nil)` deleted (or its collection
    /// emptied), `.some(document)` parked, nil: nothing (read the store).
    struct Pending<D> { var document: D? }

    private func isCleared(alias: String, collection: String) -> Bool {
        clears.contains { $0.alias == alias && ($0.collection == nil || $0.collection == collection) }
    }

    func touches(alias: String, collection: String) -> Bool {
        touched.contains(CollectionKey(alias: alias, collection: collection)) || clears.contains { $0.alias == alias && $0.collection == nil }
    }

    func lookup<D: Document>(_ type: D.Type, alias: String, id: D.ID) throws -> Pending<D>? {
        if entries.isEmpty && clears.isEmpty { return nil }
        let key = Key(alias: alias, collection: D.collection, key: id.keyBytes)
        if let entry = entries[key] {
            guard let document = entry.document else { return Pending(document: nil) }
            guard let typed = document as? D else {
                throw DepotError.documentTypeMismatch("the unit of work holds a \(Swift.type(of: document)) in collection '\(D.collection)', not a \(D.self)")
            }
            return Pending(document: typed)
        }
        return isCleared(alias: alias, collection: D.collection) ? Pending(document: nil) : nil
    }

    /// The parked documents of a collection, in key order (or reverse).
    private func parked<D: Document>(_ type: D.Type, alias: String, reverse: Bool) throws -> [(key: [UInt8], document: D?)] {
        var list: [(key: [UInt8], document: D?)] = []
        for (key, entry) in entries where key.alias == alias && key.collection == D.collection {
            if let document = entry.document {
                guard let typed = document as? D else {
                    throw DepotError.documentTypeMismatch("the unit of work holds a \(Swift.type(of: document)) in collection '\(D.collection)', not a \(D.self)")
                }
                list.append((key.key, typed))
            } else {
                list.append((key.key, nil))
            }
        }
        list.sort { reverse ? $1.key.lexicographicallyPrecedes($0.key) : $0.key.lexicographicallyPrecedes($1.key) }
        return list
    }

    /// Visits stored and pending documents of `D` merged in key order.
    func merge<D: Document>(_ type: D.Type, alias: String, reverse: Bool,
                            stored: (_ visit: (D) throws -> Bool) throws -> Void, _ body: (D) throws -> Bool) throws {
        try withoutActuallyEscaping(body) { body in try mergeEscaping(D.self, alias: alias, reverse: reverse, stored: stored, body) }
    }

    private func mergeEscaping<D: Document>(_ type: D.Type, alias: String, reverse: Bool,
                                            stored: (_ visit: (D) throws -> Bool) throws -> Void, _ body: @escaping (D) throws -> Bool) throws {
        let pending = try parked(D.self, alias: alias, reverse: reverse)
        var next = 0
        var stopped = false
        func before(_ a: [UInt8], _ b: [UInt8]) -> Bool { reverse ? b.lexicographicallyPrecedes(a) : a.lexicographicallyPrecedes(b) }
        if !isCleared(alias: alias, collection: D.collection) {
            try stored { document in
                let key = document.id.keyBytes
                while next < pending.count, before(pending[next].key, key) {
                    if let d = pending[next].document, try !body(d) { stopped = true; return false }
                    next += 1
                }
                if next < pending.count, pending[next].key == key {
                    defer { next += 1 }
                    if let d = pending[next].document, try !body(d) { stopped = true; return false }
                    return true
                }
                if try !body(document) { stopped = true; return false }
                return true
            }
        }
        if stopped { return }
        while next < pending.count {
            if let d = pending[next].document, try !body(d) { return }
            next += 1
        }
    }

    /// The stored count corrected by the pending changes of `D`.
    func adjustedCount<D: Document>(_ type: D.Type, alias: String, stored: Int, exists: (D.ID) throws -> Bool) throws -> Int {
        let cleared = isCleared(alias: alias, collection: D.collection)
        var count = cleared ? 0 : stored
        for (key, entry) in entries where key.alias == alias && key.collection == D.collection {
            let wasStored: Bool
            if cleared {
                wasStored = false
            } else {
                guard let id = key.key.withUnsafeBytes({ D.ID(documentValue: D.ID.idKind.value(ofKey: $0)) }) else { continue }
                wasStored = try exists(id)
            }
            if entry.document != nil && !wasStored { count += 1 }
            if entry.document == nil && wasStored { count -= 1 }
        }
        return count
    }
}

/// Finds the identified documents a document references (as the reference hook would park
/// them), without a transaction: the unit of work shows them to reads before `save()`.
final class ReferenceCollector: BinaryReferenceEncoding {
    var found: [any Document] = []

    func reference(for value: any Encodable) throws -> (collection: String, id: DocumentValue)? {
        if let lazy = value as? any LazyReference { return (lazy.referencedCollection, lazy.referencedID) }
        guard let document = value as? any Document else { return nil }
        found.append(document)
        return Self.identity(of: document)
    }

    private static func identity<D: Document>(of document: D) -> (collection: String, id: DocumentValue) {
        (D.collection, document.id.documentValue)
    }
}

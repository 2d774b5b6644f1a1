/// What one commit changed, grouped by alias and collection.
///
/// - created: absent before the transaction, present after;
/// - updated: present before and after (parked again);
/// - deleted: present before, absent after.
///
/// A document created and deleted in the same transaction appears nowhere; work rolled back
/// (a thrown write, a rolled-back savepoint) never appears.
public struct ChangeSet: Sendable, Hashable {
    /// The changes of one collection in one alias.
    public struct CollectionChanges: Sendable, Hashable {
        /// The alias (store) the collection belongs to.
        public var alias: String
        /// The collection name.
        public var collection: String
        /// IDs of created documents, in key order.
        public var created: [DocumentValue]
        /// IDs of updated documents, in key order.
        public var updated: [DocumentValue]
        /// IDs of deleted documents, in key order.
        public var deleted: [DocumentValue]

        /// Creates the changes of one collection.
        public init(alias: String, collection: String, created: [DocumentValue] = [], updated: [DocumentValue] = [], deleted: [DocumentValue] = []) {
            self.alias = alias
            self.collection = collection
            self.created = created
            self.updated = updated
            self.deleted = deleted
        }
    }

    /// Per alias and collection, sorted by alias then collection.
    public var collections: [CollectionChanges]
    /// True when the commit was made by another process or another store handle (see the kits'
    /// external change watcher); false for commits of this process.
    public var isExternal: Bool
    /// The LMDB transaction ID of the commit, when known.
    public var transactionID: Int?

    /// Creates a change set.
    public init(collections: [CollectionChanges], isExternal: Bool = false, transactionID: Int? = nil) {
        self.collections = collections
        self.isExternal = isExternal
        self.transactionID = transactionID
    }

    /// Whether nothing changed.
    public var isEmpty: Bool { collections.allSatisfy { $0.created.isEmpty && $0.updated.isEmpty && $0.deleted.isEmpty } }

    /// The changes of `collection` in `alias`.
    public func changes(in collection: String, alias: String = Store.defaultAlias) -> CollectionChanges? {
        collections.first { $0.alias == alias && $0.collection == collection }
    }

    /// Typed IDs of documents of type `D` created in `alias`.
    public func created<D: Document>(_ type: D.Type, alias: String = Store.defaultAlias) -> [D.ID] {
        (changes(in: D.collection, alias: alias)?.created ?? []).compactMap { D.ID(documentValue: $0) }
    }
    /// Typed IDs of documents of type `D` updated in `alias`.
    public func updated<D: Document>(_ type: D.Type, alias: String = Store.defaultAlias) -> [D.ID] {
        (changes(in: D.collection, alias: alias)?.updated ?? []).compactMap { D.ID(documentValue: $0) }
    }
    /// Typed IDs of documents of type `D` deleted in `alias`.
    public func deleted<D: Document>(_ type: D.Type, alias: String = Store.defaultAlias) -> [D.ID] {
        (changes(in: D.collection, alias: alias)?.deleted ?? []).compactMap { D.ID(documentValue: $0) }
    }

    /// Only the parts that match an alias and/or a set of collections.
    package func filtered(alias: String?, collections names: Set<String>?) -> ChangeSet {
        var copy = self
        copy.collections = collections.filter { c in
            (alias == nil || c.alias == alias) && (names == nil || names!.contains(c.collection))
        }
        return copy
    }
}

/// Collects what a transaction does to each document, with an undo log for savepoints.
///
/// Cost per recorded change is O(1): collections are interned into slots once per transaction
/// (the record pipeline keeps each target's slot), and the change set is built once, at commit.
final class ChangeRecorder {
    /// A document as consumers of the recorder see it.
    struct Key: Hashable {
        var alias: String
        var collection: String
        var key: [UInt8]
        func hash(into hasher: inout Hasher) {
            hasher.combine(alias)
            hasher.combine(collection)
            key.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }
    struct State: Equatable {
        var existedBefore: Bool
        var existsNow: Bool
        var idKind: IDKind
    }
    private struct SlotKey: Hashable {
        var slot: Int
        var key: PackedKey
    }
    private struct Slot: Hashable {
        var alias: String
        var collection: String
    }
    private struct Flags: Equatable {
        var existedBefore: Bool
        var existsNow: Bool
    }

    private var slots: [(alias: String, collection: String, kind: IDKind)] = []
    private var slotIndex: [Slot: Int] = [:]
    private var states: [SlotKey: Flags] = [:]
    private var undo: [(SlotKey, Flags?)] = []

    /// The slot of a collection (interned on first use; kept for the transaction's lifetime).
    func slot(alias: String, collection: String, kind: IDKind) -> Int {
        let name = Slot(alias: alias, collection: collection)
        if let found = slotIndex[name] {
            slots[found].kind = kind
            return found
        }
        slots.append((alias, collection, kind))
        slotIndex[name] = slots.count - 1
        return slots.count - 1
    }

    /// Records that `key` of the collection in `slot` now exists (or not); `existedBefore`
    /// counts only the first time the key is recorded.
    func record(slot: Int, key: UnsafeRawBufferPointer, existedBefore: Bool, existsNow: Bool) {
        let k = SlotKey(slot: slot, key: PackedKey(key))
        let old = states.updateValue(Flags(existedBefore: existedBefore, existsNow: existsNow), forKey: k)
        if let old { states[k] = Flags(existedBefore: old.existedBefore, existsNow: existsNow) }
        undo.append((k, old))
    }

    /// A point to roll back to.
    var mark: Int { undo.count }

    /// Undoes everything recorded after `mark`.
    func revert(to mark: Int) {
        while undo.count > mark {
            let (key, old) = undo.removeLast()
            states[key] = old
        }
    }

    var isEmpty: Bool { states.isEmpty }

    /// The keys recorded since `mark`, each once, with their current state.
    func touched(since mark: Int) -> [(Key, State)] {
        var seen = Set<SlotKey>()
        var result: [(Key, State)] = []
        for (key, _) in undo[min(mark, undo.count)...] where seen.insert(key).inserted {
            if let flags = states[key] {
                let slot = slots[key.slot]
                result.append((Key(alias: slot.alias, collection: slot.collection, key: key.key.bytes),
                               State(existedBefore: flags.existedBefore, existsNow: flags.existsNow, idKind: slot.kind)))
            }
        }
        return result
    }

    /// The change set of everything recorded (built once: each ID is appended in place).
    func changeSet(transactionID: Int?) -> ChangeSet {
        var created = Array(repeating: [PackedKey](), count: slots.count)
        var updated = created, deleted = created
        for (key, flags) in states {
            switch (flags.existedBefore, flags.existsNow) {
            case (false, true): created[key.slot].append(key.key)
            case (true, true): updated[key.slot].append(key.key)
            case (true, false): deleted[key.slot].append(key.key)
            case (false, false): continue
            }
        }
        var result: [ChangeSet.CollectionChanges] = []
        for (i, slot) in slots.enumerated() where !(created[i].isEmpty && updated[i].isEmpty && deleted[i].isEmpty) {
            func ids(_ keys: inout [PackedKey]) -> [DocumentValue] {
                keys.sort()
                return keys.map { k in k.withUnsafeBytes { slot.kind.value(ofKey: $0) } }
            }
            result.append(.init(alias: slot.alias, collection: slot.collection, created: ids(&created[i]),
                                updated: ids(&updated[i]), deleted: ids(&deleted[i])))
        }
        result.sort { ($0.alias, $0.collection) < ($1.alias, $1.collection) }
        return ChangeSet(collections: result, transactionID: transactionID)
    }
}

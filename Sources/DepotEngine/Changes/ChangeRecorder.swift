/// Collects what a transaction does to each document, with an undo log for savepoints.
///
/// Cost per recorded change is O(1): collections are interned into slots once per transaction
/// (the record pipeline keeps each target's slot), and the change set is built once, at commit.
@usableFromInline
package final class ChangeRecorder {
    /// A document as consumers of the recorder see it.
    @usableFromInline
    package struct Key: Hashable {
        package var alias: String
        package var collection: String
        package var key: [UInt8]
        /// The document `key` of `collection` in `alias`.
        package init(alias: String, collection: String, key: [UInt8]) {
            self.alias = alias
            self.collection = collection
            self.key = key
        }
        @usableFromInline
        package func hash(into hasher: inout Hasher) {
            hasher.combine(alias)
            hasher.combine(collection)
            key.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }
    /// Whether a document existed before the transaction and exists now, and its key's kind.
    package struct State: Equatable {
        package var existedBefore: Bool
        package var existsNow: Bool
        package var idKind: IDKind
        /// A document's states before and after, and how its key reads as an ID.
        package init(existedBefore: Bool, existsNow: Bool, idKind: IDKind) {
            self.existedBefore = existedBefore
            self.existsNow = existsNow
            self.idKind = idKind
        }
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

    /// An empty recorder (one per transaction).
    package init() {}

    private var slots: [(alias: String, collection: String, kind: IDKind)] = []
    private var slotIndex: [Slot: Int] = [:]
    private var states: [SlotKey: Flags] = [:]
    private var undo: [(SlotKey, Flags?)] = []

    /// The slot of a collection (interned on first use; kept for the transaction's lifetime).
    package func slot(alias: String, collection: String, kind: IDKind) -> Int {
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
    package func record(slot: Int, key: UnsafeRawBufferPointer, existedBefore: Bool, existsNow: Bool) {
        let k = SlotKey(slot: slot, key: PackedKey(key))
        let old = states.updateValue(Flags(existedBefore: existedBefore, existsNow: existsNow), forKey: k)
        if let old { states[k] = Flags(existedBefore: old.existedBefore, existsNow: existsNow) }
        undo.append((k, old))
    }

    /// A point to roll back to.
    package var mark: Int { undo.count }

    /// Undoes everything recorded after `mark`.
    package func revert(to mark: Int) {
        while undo.count > mark {
            let (key, old) = undo.removeLast()
            states[key] = old
        }
    }

    package var isEmpty: Bool { states.isEmpty }

    /// The keys recorded since `mark`, each once, with their current state.
    package func touched(since mark: Int) -> [(Key, State)] {
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
    package func changeSet(transactionID: Int?) -> ChangeSet {
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

/// A map from keys to values for the per-transaction tables that usually hold one entry (the
/// collections a transaction resolved, the document types it used): the first entry is kept
/// apart and found by comparing keys, with no hashing and no table allocated per transaction;
/// the others go to a dictionary. Invariant: `rest` is empty whenever `first` is nil.
struct FirstEntryMap<Key: Hashable, Value>: Sequence {
    private var first: (key: Key, value: Value)?
    private var rest: [Key: Value] = [:]

    init() {}

    /// Whether the map holds nothing.
    var isEmpty: Bool { first == nil }

    /// The value of `key`; setting nil removes it.
    subscript(key: Key) -> Value? {
        get {
            if let first, first.key == key { return first.value }
            return rest.isEmpty ? nil : rest[key]
        }
        set {
            if let current = first, current.key == key {
                if let newValue {
                    first = (key, newValue)
                } else if let promoted = rest.first {
                    rest[promoted.key] = nil
                    first = (promoted.key, promoted.value)
                } else {
                    first = nil
                }
            } else if first == nil {
                if let newValue { first = (key, newValue) }
            } else {
                rest[key] = newValue
            }
        }
    }

    /// Every value.
    var values: LazyMapSequence<FirstEntryMap, Value> { lazy.map(\.value) }

    /// Removes every entry (the dictionary keeps its storage when `keepingCapacity`).
    mutating func removeAll(keepingCapacity: Bool = false) {
        first = nil
        rest.removeAll(keepingCapacity: keepingCapacity)
    }

    /// Removes the entries whose value `shouldBeRemoved` picks.
    mutating func removeAll(where shouldBeRemoved: (Value) -> Bool) {
        let kept = filter { !shouldBeRemoved($0.value) }
        removeAll(keepingCapacity: true)
        for (key, value) in kept { self[key] = value }
    }

    func makeIterator() -> Iterator { Iterator(head: first, tail: rest.makeIterator()) }

    /// The first entry, then the others.
    struct Iterator: IteratorProtocol {
        var head: (key: Key, value: Value)?
        var tail: Dictionary<Key, Value>.Iterator

        mutating func next() -> (key: Key, value: Value)? {
            if let current = head {
                head = nil
                return current
            }
            return tail.next()
        }
    }
}

/// The collections a transaction resolved, by name: ``TransactionContext/targets``.
///
/// Most transactions touch one collection, and find it several times (the write, its index and
/// sync entries, its change record): the first one resolved is kept apart and found by comparing
/// its two names, with no hashing and no table allocated per transaction; the others go to a
/// dictionary. Invariant: `rest` is empty whenever `first` is nil.
struct CollectionTargets: Sequence {
    typealias Name = TransactionContext.CollectionName
    private var first: (name: Name, target: RecordTarget)?
    private var rest: [Name: RecordTarget] = [:]

    init() {}

    /// The target resolved for `name`; setting nil forgets it.
    subscript(name: Name) -> RecordTarget? {
        get {
            if let first, first.name.collection == name.collection && first.name.alias == name.alias { return first.target }
            return rest.isEmpty ? nil : rest[name]
        }
        set {
            if let current = first, current.name == name {
                if let newValue {
                    first = (name, newValue)
                } else if let promoted = rest.first {
                    rest[promoted.key] = nil
                    first = (promoted.key, promoted.value)
                } else {
                    first = nil
                }
            } else if first == nil {
                if let newValue { first = (name, newValue) }
            } else {
                rest[name] = newValue
            }
        }
    }

    /// Every target resolved.
    var values: LazyMapSequence<CollectionTargets, RecordTarget> { lazy.map(\.value) }

    /// Forgets every target (the dictionary keeps its storage when `keepingCapacity`).
    mutating func removeAll(keepingCapacity: Bool) {
        first = nil
        rest.removeAll(keepingCapacity: keepingCapacity)
    }

    /// Forgets the targets `shouldBeRemoved` picks.
    mutating func removeAll(where shouldBeRemoved: (RecordTarget) -> Bool) {
        let kept = filter { !shouldBeRemoved($0.value) }
        removeAll(keepingCapacity: true)
        for (name, target) in kept { self[name] = target }
    }

    func makeIterator() -> Iterator { Iterator(head: first.map { ($0.name, $0.target) }, tail: rest.makeIterator()) }

    /// The first target, then the others.
    struct Iterator: IteratorProtocol {
        var head: (key: Name, value: RecordTarget)?
        var tail: Dictionary<Name, RecordTarget>.Iterator

        mutating func next() -> (key: Name, value: RecordTarget)? {
            if let current = head {
                head = nil
                return current
            }
            return tail.next()
        }
    }
}

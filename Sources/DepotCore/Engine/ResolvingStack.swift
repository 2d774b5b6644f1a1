/// The records being decoded right now, outermost first: what reference resolution reads to
/// detect cycles and to name the parent of a dangling reference.
///
/// Every typed read decodes inside one entry, and most records hold no references, so the
/// innermost entry is kept without retaining anything (its target and key are borrowed from
/// the caller's frame for the length of the decode) and only turned into an
/// ``TransactionContext/InProgress`` (with its alias and collection names) when a nested
/// record is decoded inside it — that is, when a reference is resolved.
@usableFromInline
struct ResolvingStack {
    /// The record decoded now: its collection's target and its key, unretained.
    @usableFromInline
    struct Current {
        let target: Unmanaged<RecordTarget>
        let key: UnsafeRawBufferPointer

        @usableFromInline
        init(target: Unmanaged<RecordTarget>, key: UnsafeRawBufferPointer) {
            self.target = target
            self.key = key
        }

        var entry: TransactionContext.InProgress {
            let target = target.takeUnretainedValue()
            return .init(alias: target.alias, collection: target.collection, key: key)
        }
    }

    /// The outer records, materialized.
    private var outer: [TransactionContext.InProgress] = []
    /// The innermost record, when it was entered with its target.
    @usableFromInline var current: Current?

    /// Every record being decoded, outermost first.
    var chain: [TransactionContext.InProgress] {
        guard let current else { return outer }
        return outer + [current.entry]
    }

    /// Whether a record being decoded matches `predicate` (without building ``chain``).
    func contains(where predicate: (TransactionContext.InProgress) -> Bool) -> Bool {
        if outer.contains(where: predicate) { return true }
        return current.map { predicate($0.entry) } ?? false
    }

    /// The innermost record being decoded, if any.
    var last: TransactionContext.InProgress? { current?.entry ?? outer.last }

    /// Whether no record is being decoded (without building an entry).
    var isEmpty: Bool { current == nil && outer.isEmpty }

    /// Enters the record of `key` in `target` as the innermost one (before decoding it); pass
    /// the result to ``leave(_:)`` after. `target` and `key` must outlive the decode (the
    /// caller holds both). Two stores when no record is being decoded.
    @inlinable @inline(__always)
    mutating func enter(_ target: RecordTarget, key: UnsafeRawBufferPointer) -> Current? {
        let saved = current
        if let saved { materialize(saved) }
        current = Current(target: Unmanaged.passUnretained(target), key: key)
        return saved
    }

    /// Keeps an entered record as an outer one (a record is decoded inside it).
    @usableFromInline
    mutating func materialize(_ entered: Current) {
        outer.append(entered.entry)
    }

    /// Enters a record without a target (unidentified values) as the innermost one.
    mutating func enter(_ entry: TransactionContext.InProgress) -> Current? {
        let saved = current
        if let saved { outer.append(saved.entry) }
        outer.append(entry)
        current = nil
        return saved
    }

    /// Leaves the innermost record, entered by `enter` with the result `saved`.
    @inlinable @inline(__always)
    mutating func leave(_ saved: Current?) {
        if current != nil && saved == nil {
            current = nil // the usual case: the one record being decoded was entered with its target
        } else {
            leaveNested(saved)
        }
    }

    /// ``leave(_:)`` of a nested record or of one entered without a target.
    @usableFromInline
    mutating func leaveNested(_ saved: Current?) {
        if current == nil { outer.removeLast() }  // entered as an entry
        current = saved
        if saved != nil { outer.removeLast() }
    }
}

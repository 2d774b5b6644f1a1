/// The records being decoded right now, outermost first: what reference resolution reads to
/// detect cycles and to name the parent of a dangling reference.
///
/// Every typed read decodes inside one entry, and most records hold no references, so the
/// innermost entry is kept without retaining anything (its target and key are borrowed from
/// the caller's frame for the length of the decode) and only turned into a
/// ``RecordInProgress`` (with its alias and collection names) when a nested
/// record is decoded inside it — that is, when a reference is resolved.
///
/// ``TransactionContext`` keeps one; DepotCore's typed read path, inlined into callers, enters
/// and leaves records through the inlinable ``enter(_:key:)`` and ``leave(_:)``.
@usableFromInline
package struct ResolvingStack {
    /// The record decoded now: its collection's target and its key, unretained.
    @usableFromInline
    package struct Current {
        @usableFromInline let target: Unmanaged<RecordTarget>
        @usableFromInline let key: UnsafeRawBufferPointer

        @usableFromInline
        init(target: Unmanaged<RecordTarget>, key: UnsafeRawBufferPointer) {
            self.target = target
            self.key = key
        }

        var entry: RecordInProgress {
            let target = target.takeUnretainedValue()
            return .init(alias: target.alias, collection: target.collection, key: key)
        }
    }

    /// The outer records, materialized.
    @usableFromInline private(set) var outer: [RecordInProgress] = []
    /// The innermost record, when it was entered with its target.
    @usableFromInline var current: Current?

    /// No record being decoded.
    package init() {}

    /// Every record being decoded, outermost first.
    package var chain: [RecordInProgress] {
        guard let current else { return outer }
        return outer + [current.entry]
    }

    /// Whether a record being decoded matches `predicate` (without building ``chain``).
    package func contains(where predicate: (RecordInProgress) -> Bool) -> Bool {
        if outer.contains(where: predicate) { return true }
        return current.map { predicate($0.entry) } ?? false
    }

    /// The innermost record being decoded, if any.
    package var last: RecordInProgress? { current?.entry ?? outer.last }

    /// Whether no record is being decoded (without building an entry). Inlinable: every read
    /// transaction's end asks (is its context reusable).
    @inlinable
    package var isEmpty: Bool { current == nil && outer.isEmpty }

    /// Enters the record of `key` in `target` as the innermost one (before decoding it); pass
    /// the result to ``leave(_:)`` after. `target` and `key` must outlive the decode (the
    /// caller holds both). Two stores when no record is being decoded.
    @inlinable @inline(__always)
    package mutating func enter(_ target: RecordTarget, key: UnsafeRawBufferPointer) -> Current? {
        let saved = current
        if let saved { materialize(saved) }
        current = Current(target: Unmanaged.passUnretained(target), key: key)
        return saved
    }

    /// Keeps an entered record as an outer one (a record is decoded inside it).
    @usableFromInline
    package mutating func materialize(_ entered: Current) {
        outer.append(entered.entry)
    }

    /// Enters a record without a target (unidentified values) as the innermost one.
    package mutating func enter(_ entry: RecordInProgress) -> Current? {
        let saved = current
        if let saved { outer.append(saved.entry) }
        outer.append(entry)
        current = nil
        return saved
    }

    /// Leaves the innermost record, entered by `enter` with the result `saved`.
    @inlinable @inline(__always)
    package mutating func leave(_ saved: Current?) {
        if current != nil && saved == nil {
            current = nil // the usual case: the one record being decoded was entered with its target
        } else {
            leaveNested(saved)
        }
    }

    /// ``leave(_:)`` of a nested record or of one entered without a target.
    @usableFromInline
    package mutating func leaveNested(_ saved: Current?) {
        if current == nil { outer.removeLast() }  // entered as an entry
        current = saved
        if saved != nil { outer.removeLast() }
    }
}

#if Postgres
/// The keyspaces a write under key locks (see ``KeyLocks``) has to do with: the lock it holds
/// on each (shared or exclusive), whether a keyspace locked ahead of use (see ``WriteHint``)
/// was checked to exist yet, and whether it used it.
///
/// A write uses a few keyspaces: they are kept in an array, searched from the start (for a
/// few, cheaper than hashing, and nothing is allocated until the first one), with an index by
/// ID once there are more than ``indexedFrom`` so that a write of many keyspaces does not
/// search through all of them for each statement.
struct HeldKeyspaces {
    private struct Entry {
        let id: Int32
        /// nil: not locked; false: shared; true: exclusive.
        var lock: Bool?
        /// Locked ahead of use and not yet checked to exist.
        var unverified = false
        /// Locked for use (not only ahead of it).
        var used = false
    }

    private var entries: [Entry] = []
    /// Each entry's place by ID, once there are more than ``indexedFrom`` entries.
    private var positions: [Int32: Int] = [:]
    /// The entries searched one by one at most.
    static let indexedFrom = 16

    private func position(_ id: Int32) -> Int? {
        if entries.count > Self.indexedFrom { return positions[id] }
        return entries.firstIndex { $0.id == id }
    }

    /// The entry of `id`, added when missing.
    private mutating func entry(_ id: Int32) -> Int {
        if let found = position(id) { return found }
        entries.append(Entry(id: id))
        if entries.count > Self.indexedFrom {
            if positions.isEmpty {
                for (place, entry) in entries.enumerated() { positions[entry.id] = place }
            } else {
                positions[id] = entries.count - 1
            }
        }
        return entries.count - 1
    }

    /// The lock held on `id`: nil when none, false when shared, true when exclusive.
    func lock(_ id: Int32) -> Bool? {
        position(id).flatMap { entries[$0].lock }
    }

    /// Records the lock now held on `id`.
    mutating func setLock(_ id: Int32, exclusive: Bool) {
        entries[entry(id)].lock = exclusive
    }

    /// Records that the write locks `id` for use.
    mutating func use(_ id: Int32) {
        entries[entry(id)].used = true
    }

    /// Whether `id` was locked ahead of use and not checked to exist since.
    func isUnverified(_ id: Int32) -> Bool {
        position(id).map { entries[$0].unverified } ?? false
    }

    /// Records whether `id` is still to be checked to exist.
    mutating func setUnverified(_ id: Int32, _ unverified: Bool) {
        if !unverified, position(id) == nil { return }
        entries[entry(id)].unverified = unverified
    }

    /// The keyspaces locked ahead of use and not checked to exist since.
    var unverified: Set<Int32> {
        Set(entries.lazy.filter(\.unverified).map(\.id))
    }

    /// The keyspaces used under a shared lock, in ID order.
    func usedShared() -> [Int32] {
        entries.lazy.filter { $0.used && $0.lock == false }.map(\.id).sorted()
    }

    /// Forgets every lock and check (a savepoint rolled back released the locks taken in it);
    /// which keyspaces were used is kept.
    mutating func releaseLocks() {
        for place in entries.indices {
            entries[place].lock = nil
            entries[place].unverified = false
        }
    }
}
#endif

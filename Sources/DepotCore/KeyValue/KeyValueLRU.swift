/// The saved entries of a ``KeyValueStore`` cache by last use, oldest first: a binary min-heap of
/// `(lastUse, key)` with lazy deletion. Every time a saved entry is used (or becomes saved), its
/// new use is pushed; stale pairs (the entry was used again, changed, dropped or is unsaved) are
/// skipped when they come to the top. O(log n) per use and per eviction, where finding the
/// oldest entry by scanning the cache cost O(n) each time.
struct KeyValueLRU {
    private var heap: [(use: UInt64, key: KeyValueCacheKey)] = []

    /// Pairs held, stale ones included.
    var count: Int { heap.count }

    /// Records that `key` was last used at `use`.
    mutating func push(_ use: UInt64, _ key: KeyValueCacheKey) {
        heap.append((use, key))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            if heap[parent].use <= heap[child].use { break }
            heap.swapAt(parent, child)
            child = parent
        }
    }

    /// Removes pairs from the top until one is current (`isCurrent(use, key)`), removes that
    /// one too and returns its key; nil when none is.
    mutating func popOldest(where isCurrent: (UInt64, KeyValueCacheKey) -> Bool) -> KeyValueCacheKey? {
        while let top = heap.first {
            removeTop()
            if isCurrent(top.use, top.key) { return top.key }
        }
        return nil
    }

    /// Replaces the contents with `pairs` (to drop stale pairs once they outnumber live ones).
    mutating func rebuild(_ pairs: [(use: UInt64, key: KeyValueCacheKey)]) {
        heap = pairs.sorted { $0.use < $1.use } // a sorted array is a valid heap
    }

    private mutating func removeTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].use < heap[smallest].use { smallest = left }
            if right < heap.count && heap[right].use < heap[smallest].use { smallest = right }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

/// How many closures the group-commit writer expects before it commits: its memory of who has
/// been writing. Writer thread only.
///
/// Callers that wait for each write and then write again (a closed loop: workers, pipelines)
/// come back right after their batch is resumed; waiting a moment for them keeps batches whole.
/// Without that, parts of the callers can settle into alternate batches, each part queueing
/// while the other commits, at twice the commits for the same writes. Callers that write once
/// (a request handler's task) never come back, and waiting for them only adds latency. The
/// pacer tells them apart by the caller's task: a caller is expected back when it wrote in one of
/// the last two batches and had also written in one of the two batches before that one.
///
/// Caller sets are sorted arrays reused from batch to batch: the pacer runs under the writer's
/// queue lock once per batch, so it does not hash there, and once warm it allocates only to sort
/// batches of more than about 20 callers (the standard library's merge buffer).
struct GroupCommitPacer {
    /// Callers of the last batch and of the one before it (sorted, no duplicates).
    private var lastCallers: [Int] = []
    private var earlierCallers: [Int] = []
    /// Callers of the last batch that had written in one of the two batches before it.
    private var lastReturning: [Int] = []
    /// Callers expected back: returning callers of the last two batches.
    private(set) var expectedBack: [Int] = []
    /// Scratch storage, kept for its capacity.
    private var current: [Int] = []
    private var returning: [Int] = []
    /// Closures expected for the next batch: callers expected back plus the other callers'
    /// closures queued when the last batch finished.
    private(set) var expected = 1
    /// When the last batch finished (monotonic nanoseconds).
    private var finishedAt: UInt64 = 0

    /// Records a committed batch: its callers' task identities, the callers of the closures
    /// already queued (by others while it ran, or left over from a batch capped at its maximum
    /// size) and the time.
    mutating func finished(callers: some Sequence<Int>, queued: some Sequence<Int>, at now: UInt64) {
        current.removeAll(keepingCapacity: true)
        current.append(contentsOf: callers)
        Self.sortUnique(&current)
        returning.removeAll(keepingCapacity: true)
        for caller in current where Self.contains(lastCallers, caller) || Self.contains(earlierCallers, caller) {
            returning.append(caller)
        }
        Self.union(returning, lastReturning, into: &expectedBack)
        swap(&lastReturning, &returning)
        swap(&earlierCallers, &lastCallers) // earlier = the last batch's callers
        swap(&lastCallers, &current)        // last = this batch's callers
        var count = expectedBack.count
        for caller in queued where !Self.contains(expectedBack, caller) { count += 1 }
        expected = count
        finishedAt = now
    }

    /// The batch to wait for when work is found at `now`: the expected batch, or 1 (do not
    /// wait) once `patience` has passed since the last batch finished — the callers it expected
    /// did not come back, and a caller arriving after an idle spell does not wait for them.
    func target(at now: UInt64, patience: UInt64) -> Int {
        now &- finishedAt > patience ? 1 : max(expected, 1)
    }

    /// Sorts `values` and drops repeats.
    private static func sortUnique(_ values: inout [Int]) {
        values.sort()
        var kept = 0
        for index in values.indices where kept == 0 || values[index] != values[kept - 1] {
            values[kept] = values[index]
            kept += 1
        }
        values.removeLast(values.count - kept)
    }

    /// Whether sorted `values` hold `value` (binary search).
    private static func contains(_ values: [Int], _ value: Int) -> Bool {
        var low = 0, high = values.count
        while low < high {
            let mid = low + (high - low) / 2
            if values[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low < values.count && values[low] == value
    }

    /// The sorted union of sorted `a` and `b` (no repeats) into `out`.
    private static func union(_ a: [Int], _ b: [Int], into out: inout [Int]) {
        out.removeAll(keepingCapacity: true)
        var i = 0, j = 0
        while i < a.count || j < b.count {
            let next: Int
            if j == b.count || (i < a.count && a[i] < b[j]) {
                next = a[i]; i += 1
            } else if i == a.count || b[j] < a[i] {
                next = b[j]; j += 1
            } else {
                next = a[i]; i += 1; j += 1
            }
            out.append(next)
        }
    }
}

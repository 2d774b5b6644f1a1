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
struct GroupCommitPacer {
    /// Callers of the last batch and of the one before it.
    private var lastCallers: Set<Int> = []
    private var earlierCallers: Set<Int> = []
    /// Callers of the last batch that had written in one of the two batches before it.
    private var lastReturning: Set<Int> = []
    /// Callers expected back: returning callers of the last two batches.
    private(set) var expectedBack: Set<Int> = []
    /// Closures expected for the next batch: callers expected back plus the other callers'
    /// closures queued when the last batch finished.
    private(set) var expected = 1
    /// When the last batch finished (monotonic nanoseconds).
    private var finishedAt: UInt64 = 0

    /// Records a committed batch: its callers' task identities, the callers of the closures
    /// already queued (by others while it ran, or left over from a batch capped at its maximum
    /// size) and the time.
    mutating func finished(callers: some Sequence<Int>, queued: some Sequence<Int>, at now: UInt64) {
        let current = Set(callers)
        let returning = current.filter { lastCallers.contains($0) || earlierCallers.contains($0) }
        expectedBack = returning.union(lastReturning)
        lastReturning = returning
        earlierCallers = lastCallers
        lastCallers = current
        var count = expectedBack.count
        for caller in queued where !expectedBack.contains(caller) { count += 1 }
        expected = count
        finishedAt = now
    }

    /// The batch to wait for when work is found at `now`: the expected batch, or 1 (do not
    /// wait) once `patience` has passed since the last batch finished — the callers it expected
    /// did not come back, and a caller arriving after an idle spell does not wait for them.
    func target(at now: UInt64, patience: UInt64) -> Int {
        now &- finishedAt > patience ? 1 : max(expected, 1)
    }
}

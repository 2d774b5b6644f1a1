/// A live query (GRDB's `ValueObservation`): an `AsyncSequence` of fresh results, read once when
/// iteration starts and again after each commit that touches the observed collections —
/// commits of this process, and of other processes while an ``ExternalChangeWatcher`` runs.
///
/// ```swift
/// let request = FetchRequest<Employee>().sorted(by: SortDescriptor(\.name))
/// for try await employees in store.observe(request) {
///     print(employees.map(\.name))
/// }
/// ```
///
/// Make one with ``Store/observe(_:alsoTracking:)`` or
/// ``Store/observe(collections:aliases:_:)``. Each iteration (each `makeAsyncIterator()`) is an
/// independent observation that starts when it is made and stops when its task is cancelled or
/// the iterator is released.
///
/// - **Coalescing**: a commit only marks the observation stale (on the committing thread, nothing
///   more). The read runs when the consumer asks for the next value, on a queue of the
///   observation's own; all commits that arrive while the consumer is busy or a read runs merge
///   into one read. So a burst of commits costs a few reads, never one per commit, reads never
///   outnumber the values handed out, and the last commit is always followed by a read that
///   sees it.
/// - **Snapshots**: every value comes from one read transaction, which ends before the value is
///   handed out; no transaction is held across an `await`.
/// - **Errors**: when a read throws, the sequence throws that error and ends.
/// - **What counts**: only the change sets' alias and collection names. A fetch that resolves
///   references to documents of other collections does not see changes to those unless they
///   are tracked too (`alsoTracking:`). Values are not compared: a commit that changes the
///   collection without changing the result still yields (equal) results.
/// - **Limit**: a write transaction records changes only if the store had an observer when the
///   transaction began; one already under way when the store's first observer registers is not
///   noticed (the next commit to the collections is).
public struct StoreObservation<Value: Sendable>: AsyncSequence, Sendable {
    /// The values: the read's results.
    public typealias Element = Value

    let store: Store
    let aliases: Set<String>
    let collections: Set<String>
    let read: @Sendable (DocumentTransaction) throws -> Value

    /// Starts an observation: registers for change sets; the first ``Iterator/next()`` reads.
    public func makeAsyncIterator() -> Iterator {
        let runner = ObservationRunner(store: store, aliases: aliases, collections: collections, read: read)
        runner.start()
        return Iterator(token: StopToken(runner: runner))
    }

    /// Iterates one observation; releasing it (or cancelling its task) stops the observation.
    public struct Iterator: AsyncIteratorProtocol {
        let token: StopToken

        /// The first value at once; then, after the next commit that touches the observed
        /// collections, a fresh one. Nil once the task is cancelled (or after a read failed).
        ///
        /// - Throws: the error of a read that failed (the sequence then ends).
        public mutating func next() async throws -> Value? {
            try await token.runner.next()
        }
    }

    /// Stops the runner when the last copy of an iterator goes away.
    ///
    /// `Sendable`: its one field is immutable and Sendable.
    final class StopToken: Sendable {
        let runner: ObservationRunner<Value>
        init(runner: ObservationRunner<Value>) { self.runner = runner }
        deinit { runner.stop() }
    }
}

import DepotLMDB
import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

/// What a consuming task saw, shared with the test (guarded by `lock`).
final class Seen<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Value] = []
    private var ended = false
    private var reads = 0
    var all: [Value] { lock.withLock { values } }
    var last: Value? { lock.withLock { values.last } }
    var count: Int { lock.withLock { values.count } }
    var isEnded: Bool { lock.withLock { ended } }
    var readCount: Int { lock.withLock { reads } }
    func append(_ value: Value) { lock.withLock { values.append(value) } }
    func end() { lock.withLock { ended = true } }
    func didRead() { lock.withLock { reads += 1 } }
}

/// Polls `condition` until it holds or `seconds` pass; returns whether it held.
///
/// The deadline is generous on purpose: the observing task needs a thread of Swift's cooperative
/// pool (as wide as the machine has cores), which synchronous tests running beside it (process
/// crashes, I/O faults) can hold for well over a minute on 2 cores. A passing test waits only
/// until its condition holds.
func eventually(seconds: Double = 300, _ condition: () -> Bool) async -> Bool {
    await pollAsync(seconds: seconds, condition)
}

/// A synchronous write (in async code `store.write` picks the async, group-committed one).
func commit(_ store: Store, _ body: (DocumentTransaction) throws -> Void) throws {
    try store.write(body)
}

func employee(_ id: String, _ salary: Int) -> Employee {
    Employee(id: id, name: id, salary: salary, address: Address(street: "s", zip: "z"))
}

@Suite("Live queries")
struct LiveQueryTests {
    func fastStore(_ folder: TemporaryFolder) throws -> Store {
        var options = StoreOptions()
        options.environment.unsafeDurability = [.noSync] // this suite is about notices, not durability
        return try Store(path: folder.path, options: options)
    }

    @Test func yieldsTheResultsAtStartAndAfterACommit() async throws {
        let folder = TemporaryFolder("depot-live")
        let store = try fastStore(folder)
        try commit(store) { tx in
            try tx.park(employee("a", 100))
            try tx.park(employee("b", 200))
        }
        let request = FetchRequest<Employee>().matching(\.salary, .greaterThan(150))
        var iterator = store.observe(request).makeAsyncIterator()
        #expect(try await iterator.next()?.map(\.id) == ["b"])
        try commit(store) { tx in try tx.park(employee("c", 300)) }
        #expect(try await iterator.next()?.map(\.id) == ["b", "c"])
    }

    @Test func commitsToOtherCollectionsOrAliasesDoNotYield() async throws {
        let folder = TemporaryFolder("depot-live")
        let store = try fastStore(folder)
        let seen = Seen<[String]>()
        let observation = store.observe(collections: [Employee.collection]) { tx in
            seen.didRead()
            return try tx.fetch(FetchRequest<Employee>()).map(\.id)
        }
        var iterator = observation.makeAsyncIterator()
        #expect(try await iterator.next() == [])
        #expect(seen.readCount == 1)
        // Another collection, and the same collection in another alias: no re-read.
        for i in 0..<20 { try commit(store) { tx in try tx.park(Counter(id: Int64(i), value: i)) } }
        try commit(store.alias("Archive")) { tx in try tx.park(employee("old", 1)) }
        try commit(store) { tx in try tx.park(employee("new", 1)) }
        #expect(try await iterator.next() == ["new"])
        #expect(seen.readCount == 2, "only the commit to Employee in this alias caused a read")
    }

    @Test func changeSetFilterMatchesAliasAndCollection() throws {
        let folder = TemporaryFolder("depot-live")
        let store = try fastStore(folder)
        let runner = ObservationRunner(store: store, aliases: ["default"], collections: ["Employee"], read: { _ in 0 })
        let id = DocumentValue.string("x")
        #expect(runner.touches(ChangeSet(collections: [.init(alias: "default", collection: "Employee", updated: [id])])))
        #expect(runner.touches(ChangeSet(collections: [.init(alias: "default", collection: "Employee", deleted: [id])], isExternal: true)))
        #expect(!runner.touches(ChangeSet(collections: [.init(alias: "Archive", collection: "Employee", created: [id])])))
        #expect(!runner.touches(ChangeSet(collections: [.init(alias: "default", collection: "Counter", created: [id])])))
        #expect(!runner.touches(ChangeSet(collections: [.init(alias: "default", collection: "Employee")])))
    }

    @Test func externalChangeSetsTriggerAReRead() async throws {
        // The watcher hands other processes' change sets to the same observers (see the CLI
        // suite for a real second process); here one is published as the watcher does.
        let folder = TemporaryFolder("depot-live")
        let store = try fastStore(folder)
        var iterator = store.observe(FetchRequest<Employee>()).makeAsyncIterator()
        #expect(try await iterator.next()?.count == 0)
        let external = ChangeSet(collections: [.init(alias: "default", collection: Employee.collection, created: [.string("x")])], isExternal: true)
        store.core.publish(external, from: store)
        #expect(try await iterator.next()?.count == 0, "re-read on the external notice")
    }

    @Test func manyCommitsCoalesceAndEndOnTheFinalState() async throws {
        let folder = TemporaryFolder("depot-live")
        let store = try fastStore(folder)
        let commits = 10_000
        try commit(store) { tx in try tx.park(Counter(id: 1, value: 0)) }
        let seen = Seen<Int>()
        let observation = store.observe(collections: [Counter.collection]) { tx in
            seen.didRead()
            return try tx.retrieve(Counter.self, id: 1)?.value ?? -1
        }
        let consumer = Task {
            for try await value in observation {
                seen.append(value)
                if value == commits { break }
            }
            seen.end()
        }
        #expect(await eventually { seen.count >= 1 }, "the value at start")
        let writer = Task.detached {
            for i in 1...commits { try commit(store) { tx in try tx.park(Counter(id: 1, value: i)) } }
        }
        try await writer.value
        let arrived = await eventually(seconds: 300) { seen.isEnded }
        consumer.cancel()
        #expect(arrived, "the final state is delivered")
        #expect(seen.last == commits)
        #expect(seen.count <= commits, "coalesced: \(seen.count) yields for \(commits) commits")
        #expect(seen.readCount <= seen.count + 1, "reads never outnumber the values handed out")
        #expect(seen.readCount <= commits, "coalesced: \(seen.readCount) reads for \(commits) commits")
        #expect(seen.all == seen.all.sorted(), "values never go back in time")
        print("live query: \(commits) commits → \(seen.readCount) reads, \(seen.count) yields")
    }

    /// The bound the documentation promises: every commit that arrives while the consumer is
    /// busy merges into one read, and that read sees the last commit.
    @Test func commitsWhileTheConsumerIsBusyCostOneRead() async throws {
        let folder = TemporaryFolder("depot-live")
        let store = try fastStore(folder)
        try commit(store) { tx in try tx.park(Counter(id: 1, value: 0)) }
        let seen = Seen<Int>()
        let observation = store.observe(collections: [Counter.collection]) { tx in
            seen.didRead()
            return try tx.retrieve(Counter.self, id: 1)?.value ?? -1
        }
        var iterator = observation.makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        #expect(seen.readCount == 1)
        for i in 1...500 { try commit(store) { tx in try tx.park(Counter(id: 1, value: i)) } }
        #expect(seen.readCount == 1, "no read runs before the consumer asks")
        #expect(try await iterator.next() == 500, "one read sees the last commit")
        #expect(seen.readCount == 2, "500 commits while the consumer was busy cost exactly one read")
    }

    @Test func cancellationEndsTheSequenceAndReleasesTheObserver() async throws {
        let folder = TemporaryFolder("depot-live")
        let store = try fastStore(folder)
        let seen = Seen<Int>()
        let observation = store.observe(FetchRequest<Employee>())
        let consumer = Task {
            for try await employees in observation { seen.append(employees.count) }
            seen.end()
        }
        #expect(await eventually { seen.count == 1 })
        #expect(store.core.hasObservers)
        consumer.cancel()
        #expect(await eventually { seen.isEnded }, "the loop ends on cancellation")
        #expect(await eventually { !store.core.hasObservers }, "the observer is unregistered")
        try commit(store) { tx in try tx.park(employee("late", 1)) }
        #expect(seen.count == 1)
    }

    @Test func releasingTheIteratorReleasesTheObserver() async throws {
        let folder = TemporaryFolder("depot-live")
        let store = try fastStore(folder)
        do {
            var iterator = store.observe(FetchRequest<Employee>()).makeAsyncIterator()
            #expect(try await iterator.next() == [])
            #expect(store.core.hasObservers)
        }
        #expect(await eventually { !store.core.hasObservers })
    }

    @Test func aFailingReadEndsTheSequenceWithItsError() async throws {
        let folder = TemporaryFolder("depot-live")
        let store = try fastStore(folder)
        struct Boom: Error {}
        var iterator = store.observe(collections: [Employee.collection]) { _ -> Int in throw Boom() }.makeAsyncIterator()
        do {
            _ = try await iterator.next()
            Issue.record("the read's error is thrown")
        } catch {
            #expect(error is Boom)
        }
        #expect(try await iterator.next() == nil)
        #expect(await eventually { !store.core.hasObservers })
    }

    @Test func readmeExample() async throws {
        let folder = TemporaryFolder("depot-live")
        let store = try fastStore(folder)
        try commit(store) { tx in
            try tx.park(employee("Bo", 150))
            try tx.park(employee("Al", 120))
            try tx.park(employee("Cy", 90))
        }
        // As in the README (each loop stops after its first value here).
        let request = FetchRequest<Employee>().matching(\.salary, .greaterThan(100)).sorted(by: SortDescriptor(\.name))
        for try await rich in store.observe(request) {
            #expect(rich.map(\.name) == ["Al", "Bo"])
            break
        }
        let payroll = store.observe(collections: [Employee.collection]) { tx in
            try tx.fetch(FetchRequest<Employee>()).reduce(0) { $0 + $1.salary }
        }
        for try await total in payroll {
            #expect(total == 360)
            break
        }
    }
}

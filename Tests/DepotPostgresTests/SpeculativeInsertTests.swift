#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import Synchronization
import Testing

/// A ticket with a non-unique index: its park is the document layer's insert taken on trust.
struct Ticket: Document, Equatable {
    static var collection: String { "Ticket" }
    var id: Int
    var title: String
    var count: Int
    static var indexes: [DocumentIndex<Ticket>] { [.init(\.title)] }
}

/// A document with more indexes than an insert taken on trust takes entries with it (8): the
/// rest go in statements of their own.
struct Wide: Document, Equatable {
    static var collection: String { "Wide" }
    var id: Int
    var f0 = 0, f1 = 0, f2 = 0, f3 = 0, f4 = 0, f5 = 0, f6 = 0, f7 = 0, f8 = 0, f9 = 0
    static var indexes: [DocumentIndex<Wide>] {
        [.init(\.f0), .init(\.f1), .init(\.f2), .init(\.f3), .init(\.f4), .init(\.f5), .init(\.f6), .init(\.f7), .init(\.f8), .init(\.f9)]
    }

    init(id: Int, base: Int) {
        self.id = id
        (f0, f1, f2, f3, f4) = (base, base + 1, base + 2, base + 3, base + 4)
        (f5, f6, f7, f8, f9) = (base + 5, base + 6, base + 7, base + 8, base + 9)
    }
}

/// Inserts taken on trust (``PostgresConfiguration/speculativeInserts``): a new document costs
/// one round trip, and a document that was stored after all (an update) never commits on the
/// wrong answer — the write runs again and updates it.
@Suite("PostgreSQL inserts taken on trust", .enabled(if: PostgresTestServer.isAvailable, "DEPOT_POSTGRES_URL is not set"))
struct SpeculativeInsertTests {
    /// `putExpectingAbsent` on a present key: the first run is answered on trust, fails, and the
    /// write runs again with the stored value shown; nothing is replaced.
    @Test func aPresentKeyRunsTheWriteAgainWithTheStoredValue() throws {
        try PostgresTestServer.withDriver { driver in
            try driver.write { txn in
                let space = try #require(try txn.keyspace(named: "t", create: true, multiValue: false))
                try txn.store([10], forKey: [1], in: space)
            }
            var answers: [Bool] = []
            var seen: [[UInt8]] = []
            try driver.write { txn in
                let space = try #require(try txn.keyspace(named: "t", create: false, multiValue: false))
                let answer = try [11].withUnsafeBytes { v in
                    try [UInt8(1)].withUnsafeBytes { try txn.putExpectingAbsent(v, forKey: $0, in: space) { seen.append([UInt8]($0)) } }
                }
                answers.append(answer)
            }
            #expect(answers == [true, false], "the first run takes the insert on trust, the second waits for the answer")
            #expect(seen == [[10]])
            #expect(driver.speculationMisses == 1)
            #expect(driver.writeRetries == 0)
            let stored = try driver.read { txn in try txn.keyspace(named: "t", create: false, multiValue: false).flatMap { try txn.value([1], in: $0) } }
            #expect(stored == [10])
        }
    }

    /// Another host dropped and made anew the keyspace of an insert taken on trust (this host's
    /// handle is stale): the insert's statement fails as a put's does, the write is retried
    /// (not counted as a miss) and the key lands in the keyspace that has the name now. The same
    /// for a put, which does not wait for the epoch either.
    @Test(arguments: [true, false])
    func anInsertIntoAKeyspaceDroppedMeanwhileIsRetried(onTrust: Bool) throws {
        try PostgresTestServer.withHosts(2) { hosts in
            let writer = hosts[0], other = hosts[1]
            try remakeKeyspace("t", cachedBy: writer, remadeBy: other)
            let inserted = try writer.write { txn in
                let space = try #require(try txn.keyspace(named: "t", create: true, multiValue: false))
                guard onTrust else {
                    try txn.store([10], forKey: [1], in: space)
                    return true
                }
                return try [UInt8(10)].withUnsafeBytes { v in try [UInt8(1)].withUnsafeBytes { try txn.putExpectingAbsent(v, forKey: $0, in: space) { _ in } } }
            }
            #expect(inserted)
            #expect(writer.speculationMisses == 0)
            // On trust the stale handle went out and failed; a put waited for the epoch first.
            if onTrust { #expect(writer.writeRetries >= 1) }
            let stored = try other.read { txn in try txn.keyspace(named: "t", create: false, multiValue: false).flatMap { try txn.value([1], in: $0) } }
            #expect(stored == [10])
        }
    }

    /// Parking a stored document (an update the document layer first takes as an insert): the
    /// revision, the index and the change set are an update's, also when the closure catches
    /// the failure of a read made after the park.
    @Test func parkingAStoredDocumentUpdatesIt() throws {
        try PostgresTestServer.withDriver { driver in
            let store = try Store(driver: driver)
            try store.write { tx in try tx.park(Ticket(id: 1, title: "old", count: 1)) }
            var runs = 0
            try store.write { tx in
                runs += 1
                try tx.park(Ticket(id: 1, title: "new", count: 2))
                // A read after the park waits for its answer: in the run taken on trust it
                // throws, and the closure swallows that; the write still runs again.
                _ = try? tx.retrieve(Ticket.self, id: 2)
            }
            #expect(runs == 2)
            #expect(driver.speculationMisses == 1)
            try store.read { tx throws in
                #expect(try tx.retrieve(Ticket.self, id: 1) == Ticket(id: 1, title: "new", count: 2))
                #expect(try tx.revision(of: Ticket.self, id: 1) == 2)
                #expect(try tx.fetch(FetchRequest<Ticket>().matching(\.title, .equalTo("new"))).map(\.id) == [1])
                #expect(try tx.fetch(FetchRequest<Ticket>().matching(\.title, .equalTo("old"))).isEmpty, "the old index entry was left behind")
            }
        }
    }

    /// Inside a savepoint nothing is taken on trust (a failure there would be undone alone and
    /// the transaction could commit): the answer is awaited.
    @Test func aSavepointWaitsForTheAnswer() throws {
        try PostgresTestServer.withDriver { driver in
            try driver.write { txn in
                let space = try #require(try txn.keyspace(named: "t", create: true, multiValue: false))
                try txn.store([10], forKey: [1], in: space)
            }
            let answer = try driver.write { txn in
                let space = try #require(try txn.keyspace(named: "t", create: false, multiValue: false))
                return try txn.savepoint {
                    try [11].withUnsafeBytes { v in try [UInt8(1)].withUnsafeBytes { try txn.putExpectingAbsent(v, forKey: $0, in: space) { _ in } } }
                }
            }
            #expect(!answer)
            #expect(driver.speculationMisses == 0)
        }
    }

    /// Writers of two hosts parking the same documents at once: every park counts once (each
    /// document's final revision is the number of parks), whether it was taken on trust,
    /// missed, or waited for its answer.
    @Test func concurrentParksOfOneDocumentEachCountOnce() throws {
        try PostgresTestServer.withHosts(2) { hosts in
            let stores = try hosts.map { try Store(driver: $0) }
            let documents = 10, threads = 6
            let run = concurrently(threads: threads, steps: documents) { index, id in
                _ = try stores[index % 2].write { tx in try tx.park(Ticket(id: id, title: "t\(index)", count: index)) }
            }
            #expect(run.finished)
            #expect(run.failures == [])
            try stores[0].read { tx in
                for id in 0..<documents {
                    #expect(try tx.revision(of: Ticket.self, id: id) == UInt64(threads), "document \(id)")
                }
                let indexed = try (0..<threads).flatMap { try tx.fetch(FetchRequest<Ticket>().matching(\.title, .equalTo("t\($0)"))).map(\.id) }
                #expect(indexed.sorted() == Array(0..<documents), "each document is indexed once, under its last title")
            }
            #expect(hosts.map(\.speculationMisses).reduce(0, +) > 0, "no park was taken on trust and then missed")
        }
    }

    /// Index entries join the insert they belong to (up to 8; the rest are put on their own):
    /// every index finds every document, in one write of several documents and in one write
    /// each, and after an update that missed its trust the old entries are gone.
    @Test func everyIndexEntryOfAnInsertTakenOnTrustIsStored() throws {
        try PostgresTestServer.withDriver { driver in
            let store = try Store(driver: driver)
            try store.write { tx in for id in 0..<3 { try tx.park(Wide(id: id, base: id * 100)) } }
            for id in 3..<6 { try store.write { tx in try tx.park(Wide(id: id, base: id * 100)) } }
            try store.write { tx in try tx.park(Wide(id: 4, base: 4_000)) }
            #expect(driver.speculationMisses == 1)
            let paths: [any KeyPath<Wide, Int> & Sendable] = [\.f0, \.f1, \.f2, \.f3, \.f4, \.f5, \.f6, \.f7, \.f8, \.f9]
            try store.read { tx in
                for id in 0..<6 {
                    let base = id == 4 ? 4_000 : id * 100
                    for (offset, path) in paths.enumerated() {
                        let found = try tx.fetch(FetchRequest<Wide>().matching(path, .equalTo(base + offset))).map(\.id)
                        #expect(found == [id], "document \(id), index f\(offset)")
                    }
                }
                for (offset, path) in paths.enumerated() {
                    #expect(try tx.fetch(FetchRequest<Wide>().matching(path, .equalTo(400 + offset))).isEmpty, "a stale entry in index f\(offset)")
                }
            }
        }
    }

    /// A write of ten new documents: each document's statement also takes the next one's key
    /// lock, so the write costs about a statement a document (13 at most with its opening and
    /// `COMMIT`, 22 when each lock was a statement of its own). One of them stored before: the
    /// write runs again, updates it and stores the others once, each found by its index.
    @Test func aBatchOfNewDocumentsCostsAStatementEach() throws {
        try PostgresTestServer.withDriver { driver in
            let store = try Store(driver: driver)
            try store.write { tx in try tx.park(Ticket(id: 0, title: "warm", count: 0)) }
            var counts: [Int] = []
            for batch in 1...3 {
                let before = driver.idleStatementsSent
                try store.write { tx in for i in 0..<10 { try tx.park(Ticket(id: batch * 100 + i, title: "b\(batch)", count: i)) } }
                counts.append(driver.idleStatementsSent - before)
            }
            #expect(counts.min() ?? 99 <= 13, "statements per write of 10 documents: \(counts)")
            try store.write { tx in try tx.park(Ticket(id: 405, title: "old", count: -1)) }
            try store.write { tx in for i in 0..<10 { try tx.park(Ticket(id: 400 + i, title: "b4", count: i)) } }
            #expect(driver.speculationMisses >= 1)
            try store.read { tx in
                for batch in 1...4 {
                    let found = try tx.fetch(FetchRequest<Ticket>().matching(\.title, .equalTo("b\(batch)"))).map(\.id).sorted()
                    #expect(found == (0..<10).map { batch * 100 + $0 }, "batch \(batch)")
                }
                #expect(try tx.fetch(FetchRequest<Ticket>().matching(\.title, .equalTo("old"))).isEmpty)
                #expect(try tx.revision(of: Ticket.self, id: 405) == 2)
                #expect(try tx.revision(of: Ticket.self, id: 404) == 1)
            }
        }
    }

    /// A document retrieved and parked back in one write (an update) is never taken as new:
    /// no miss, no second run of the write, and its revision moves on by one each time.
    @Test func aRetrievedDocumentParkedBackIsNotTakenOnTrust() throws {
        try PostgresTestServer.withDriver { driver in
            let store = try Store(driver: driver)
            try store.write { tx in try tx.park(Ticket(id: 1, title: "a", count: 0)) }
            var runs = 0
            for _ in 0..<3 {
                try store.write { tx in
                    runs += 1
                    guard var ticket = try tx.retrieve(Ticket.self, id: 1) else { return }
                    ticket.count += 1
                    try tx.park(ticket)
                }
            }
            #expect(driver.speculationMisses == 0)
            #expect(runs == 3, "a write ran again")
            #expect(try store.retrieve(Ticket.self, id: 1)?.count == 3)
            #expect(try store.read { tx in try tx.revision(of: Ticket.self, id: 1) } == 4)
        }
    }

    /// With the option off, nothing is taken on trust; `speculative_inserts=false` in a URL.
    @Test func theOptionTurnsItOff() throws {
        let url = "postgres://u@h/db?speculative_inserts=false"
        #expect(try PostgresConfiguration(url: url).speculativeInserts == false)
        #expect(throws: PostgresDriverError.self) { try PostgresConfiguration(url: "postgres://u@h/db?speculative_inserts=maybe") }
        try PostgresTestServer.withDriver(configure: { $0.speculativeInserts = false }) { driver in
            let store = try Store(driver: driver)
            try store.write { tx in try tx.park(Ticket(id: 1, title: "a", count: 1)) }
            try store.write { tx in try tx.park(Ticket(id: 1, title: "b", count: 2)) }
            #expect(driver.speculationMisses == 0)
            #expect(try store.read { tx in try tx.revision(of: Ticket.self, id: 1) } == 2)
        }
    }
}
#endif

import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

/// A document with indexed numbers and dates (many ties), an indexed string and an optional.
struct IOEntry: Document, Equatable {
    var id: Int
    var score: Int
    var price: Double
    var at: Date
    var name: String
    var rank: Int?
    var group: Int
    static var indexes: [DocumentIndex<IOEntry>] {
        [.init(\.score), .init(\.price), .init(\.at), .init(\.name), .init(\.rank), .init(\.group, unique: false)]
    }
}

/// An older shape of `IONew`'s collection, without `score`.
struct IOOld: Document {
    static var collection: String { "IONew" }
    var id: Int
}

/// A score filled in when decoded where the stored document has none.
struct IONew: Document, Equatable {
    var id: Int
    var score: Int
    static var indexes: [DocumentIndex<IONew>] { [.init(\.score)] }
    init(id: Int, score: Int) {
        self.id = id
        self.score = score
    }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        score = try c.decodeIfPresent(Int.self, forKey: .score) ?? 50
    }
}

/// A sorted request with a limit walks the index of its sort field in order and stops at the
/// limit (its cost follows the limit, not the collection), and returns exactly what sorting
/// every match returns — ties, offsets, conditions, filters, counts and both orders included.
@Suite("Queries: sorted requests with a limit walk the index in order")
struct IndexOrderTests {
    let folder = TemporaryFolder()

    private func filled(_ n: Int, seed: UInt64) throws -> Store {
        let store = try Store(path: folder.path)
        var rng = SplitMix64(seed: seed)
        try store.write { tx in
            for i in 0..<n {
                let r = rng.next()
                try tx.park(IOEntry(id: Int(rng.next() % 1_000_000), score: Int(r % 40) - 20, price: Double(r % 17) / 4,
                                    at: Date(timeIntervalSince1970: Double(r % 23) * 3600), name: "n\(r % 31)",
                                    rank: i % 3 == 0 ? nil : Int(r % 7), group: Int(r % 5)))
            }
        }
        return store
    }

    /// The window of the whole sorted result: what the request with a limit must return.
    private func expected(_ tx: DocumentTransaction, _ request: FetchRequest<IOEntry>, offset: Int, limit: Int) throws -> [IOEntry] {
        Array(try tx.fetch(request).dropFirst(offset).prefix(limit))
    }

    @Test func agreesWithSortingEveryMatch() throws {
        let store = try filled(600, seed: 7)
        var rng = SplitMix64(seed: 99)
        let sorts: [SortDescriptor<IOEntry>] = [SortDescriptor(\.score), SortDescriptor(\.score, order: .reverse),
                                               SortDescriptor(\.price), SortDescriptor(\.price, order: .reverse),
                                               SortDescriptor(\.at), SortDescriptor(\.at, order: .reverse)]
        try store.read { tx in
            for round in 0..<200 {
                let sort = sorts[Int(rng.next() % UInt64(sorts.count))]
                var request = FetchRequest<IOEntry>().sorted(by: sort)
                switch round % 4 {
                case 1: request = request.filter { $0.group != 2 }
                case 2: request = request.matching(\.score, .greaterThan(Int(rng.next() % 30) - 15))
                case 3: request = request.matching(\.group, .equalTo(Int(rng.next() % 5)))
                default: break
                }
                let offset = Int(rng.next() % 20)
                let limit = Int(rng.next() % 25)
                let result = try tx.execute(request.offset(offset).limit(limit))
                let want = try expected(tx, request, offset: offset, limit: limit)
                #expect(result.documents == want, "round \(round): \(result.plan)")
                #expect(try tx.count(request.offset(offset).limit(limit)) == want.count)
            }
        }
    }

    @Test func stopsAtTheLimit() throws {
        let store = try filled(2_000, seed: 3)
        try store.read { tx in
            let result = try tx.execute(FetchRequest<IOEntry>().sorted(by: SortDescriptor(\.price, order: .reverse)).limit(5))
            #expect(result.plan.strategy == .indexOrder(name: "price"))
            #expect(result.plan.usedIndex)
            // Five, and the rest of the last one's tie (prices repeat about every 17 documents).
            #expect(result.plan.rowsExamined < 400, "\(result.plan)")
            #expect(result.documents == Array(try tx.fetch(FetchRequest<IOEntry>().sorted(by: SortDescriptor(\.price, order: .reverse))).prefix(5)))
        }
    }

    @Test func stringsOptionalsAndSeveralSortsSortEveryMatch() throws {
        let store = try filled(300, seed: 11)
        try store.read { tx in
            for request in [FetchRequest<IOEntry>().sorted(by: SortDescriptor(\.name)),
                            FetchRequest<IOEntry>().sorted(by: SortDescriptor(\.rank)),
                            FetchRequest<IOEntry>().sorted(by: SortDescriptor(\.score), SortDescriptor(\.price))] {
                let result = try tx.execute(request.limit(7))
                #expect(result.plan.strategy == .scan)
                #expect(result.documents == (try expected(tx, request, offset: 0, limit: 7)))
            }
        }
    }

    @Test func aValueFilledInWhenDecodedSortsEveryMatch() throws {
        let store = try Store(path: folder.path)
        try store.write { tx in for i in 0..<5 { try tx.park(IOOld(id: i)) } }
        try store.write { tx in for i in 5..<40 { try tx.park(IONew(id: i, score: i)) } }
        try store.read { tx in
            for order in [SortOrder.forward, .reverse] {
                let request = FetchRequest<IONew>().sorted(by: SortDescriptor(\.score, order: order))
                let all = try tx.fetch(request)
                #expect(all.count == 40)
                let result = try tx.execute(request.limit(6))
                #expect(result.documents == Array(all.prefix(6)), "\(order): \(result.plan)")
            }
        }
    }
}

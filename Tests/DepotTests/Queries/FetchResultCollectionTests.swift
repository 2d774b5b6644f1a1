import Depot
import DepotTestSupport
import Foundation
import Testing

/// Issue 29: the README's `result.map(\.name)` compiles: a fetch result is a collection.
@Suite("FetchResult is a collection")
struct FetchResultCollectionTests {
    struct Worker: Document {
        var id: Int
        var name: String
        var salary: Int
    }

    @Test func mapsCountsAndIteratesItsDocuments() throws {
        let folder = TemporaryFolder("depot-fetch-result")
        let store = try Store(path: folder.path)
        try store.write { tx in for i in 0..<5 { try tx.park(Worker(id: i, name: "W\(i)", salary: 100 * i)) } }
        let request = FetchRequest<Worker>().matching(\.salary, .greaterThan(150)).sorted(by: SortDescriptor(\.name))
        let result = try store.read { try $0.execute(request) }
        #expect(result.map(\.name) == ["W2", "W3", "W4"])
        #expect(result.count == 3 && result.first?.id == 2 && result[2].id == 4)
        var seen = 0
        for worker in result { seen += worker.salary }
        #expect(seen == 900)
        #expect(result.plan.rowsReturned == 3)
    }
}

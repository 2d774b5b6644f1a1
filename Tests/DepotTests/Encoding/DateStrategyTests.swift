import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

struct Hire: Document, Equatable {
    var id: String
    var name: String
    var hired: Date
    var review: Review
    struct Review: Codable, Equatable { var due: Date }
}

struct DayHire: Document, Equatable {
    static var dateStrategy: DateStrategy? { .formatted("yyyy-MM-dd") }
    var id: String
    var hired: Date
}

@Suite("Date strategies")
struct DateStrategyTests {
    let folder = TemporaryFolder()
    let store: Store
    init() throws { store = try Store(path: folder.sub("store")) }

    private func seedFile(_ json: String) throws -> URL {
        let dir = folder.sub("seeds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let url = URL(fileURLWithPath: dir + "/Main.seed.json")
        try Data(json.utf8).write(to: url)
        return url
    }

    @Test(arguments: [DateStrategy.iso8601, .secondsSince1970, .millisecondsSince1970, .secondsSinceReferenceDate, .formatted("yyyy-MM-dd HH:mm:ss")])
    func everyStrategyRoundTrips(_ strategy: DateStrategy) {
        let date = Date(timeIntervalSince1970: 1_700_000_123)
        #expect(strategy.date(from: strategy.value(for: date)) == date)
        #expect(strategy.date(from: .bool(true)) == nil)
    }

    @Test func seededDatesAreStoredExactlyWhateverTheirWrittenForm() throws {
        store.registerSeedType(Hire.self)
        store.registerSeedType(DayHire.self)
        let hired = Date(timeIntervalSince1970: 1_700_000_000)
        try store.seed(from: try seedFile(#"{"Hire": [{"id": "h1", "name": "Ada", "hired": "2023-11-14T22:13:20Z", "review": {"due": "2024-01-01T00:00:00Z"}}]}"#))
        var options = SeedOptions()
        options.dateStrategy = .secondsSince1970
        try store.seed(from: try seedFile(#"{"Hire": [{"id": "h2", "name": "Bob", "hired": 1700000000, "review": {"due": 1704067200}}], "DayHire": [{"id": "d1", "hired": "2024-02-29"}]}"#),
                       options: options)
        let ada = try #require(try store.retrieve(Hire.self, id: "h1"))
        #expect(ada.hired == hired && ada.review.due == Date(timeIntervalSince1970: 1_704_067_200))
        #expect(try store.retrieve(Hire.self, id: "h2") == Hire(id: "h2", name: "Bob", hired: hired, review: .init(due: Date(timeIntervalSince1970: 1_704_067_200))))
        #expect(try store.retrieve(DayHire.self, id: "d1")?.hired == Date(timeIntervalSince1970: 1_709_164_800), "the type's own format wins")
        // Stored as dates, not as the strings or numbers of the seed files.
        let stored = try store.read { tx in try exported(tx, "Hire") }
        #expect(stored.allSatisfy { if case .date? = $0.document["hired"] { return true } else { return false } })
        // Export writes them the way it is asked to.
        let line = try #require(stored.first).jsonLine(dateStrategy: .millisecondsSince1970)
        #expect(line.contains("\"hired\":1700000000000"))
        #expect(try #require(stored.first).jsonLine().contains("\"hired\":\"2023-11-14T22:13:20Z\""))
    }

    /// A fractional number in a date field was read as seconds since 2001 whatever the
    /// strategy (1700000000.5 under `.secondsSince1970` landed 31 years late), and a number
    /// under `.iso8601` was taken the same way: the strategy reads numbers now, and one that
    /// writes text refuses them at the field's JSON path.
    @Test func numbersInDateFieldsFollowTheStrategy() throws {
        store.registerSeedType(Hire.self)
        var options = SeedOptions()
        options.dateStrategy = .secondsSince1970
        try store.seed(from: try seedFile(#"{"Hire": [{"id": "h1", "name": "Ada", "hired": 1700000000.5, "review": {"due": 1704067200.25}}]}"#), options: options)
        let ada = try #require(try store.retrieve(Hire.self, id: "h1"))
        #expect(ada.hired == Date(timeIntervalSince1970: 1_700_000_000.5) && ada.review.due == Date(timeIntervalSince1970: 1_704_067_200.25))
        options.dateStrategy = .millisecondsSince1970
        try store.seed(from: try seedFile(#"{"Hire": [{"id": "h2", "name": "Bob", "hired": 1700000000000.5, "review": {"due": 1704067200000}}]}"#), options: options)
        #expect(try store.retrieve(Hire.self, id: "h2")?.hired == Date(timeIntervalSince1970: 1_700_000_000.0005))
        for (json, path) in [(#"{"Hire": [{"id": "h3", "name": "C", "hired": 1.5, "review": {"due": "2024-01-01T00:00:00Z"}}]}"#, "$.Hire[0].hired"),
                             (#"{"Hire": {"id": "h3", "name": "C", "hired": "2024-01-01T00:00:00Z", "review": {"due": 2.5}}}"#, "$.Hire.review.due")] {
            let error = #expect(throws: DepotError.self) { try store.seed(from: try seedFile(json)) }
            #expect(error?.seedProblem == .typeMismatch && error?.fieldPath == path, "\(String(describing: error))")
        }
        #expect(try store.retrieve(Hire.self, id: "h3") == nil)
    }

    @Test func aDateThatDoesNotParseFailsTheSeed() throws {
        store.registerSeedType(Hire.self)
        let error = #expect(throws: DepotError.self) {
            try store.seed(from: try seedFile(#"{"Hire": [{"id": "h1", "name": "Ada", "hired": "last tuesday", "review": {"due": "2024-01-01T00:00:00Z"}}]}"#))
        }
        #expect(error?.seedProblem == .typeMismatch)
        #expect(try store.count(Hire.self) == 0)
    }
}

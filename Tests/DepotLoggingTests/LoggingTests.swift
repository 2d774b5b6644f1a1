import Depot
import DepotLMDB
import DepotLogging
import DepotTestSupport
import Foundation
import Logging
import Testing

/// A swift-log handler that keeps what it is given.
final class CollectingHandler: LogHandler, @unchecked Sendable {
    // @unchecked Sendable: `records` is guarded by `lock`.
    struct Record { var level: Logger.Level; var message: String; var metadata: Logger.Metadata; var source: String }
    private let lock = NSLock()
    private var records: [Record] = []
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lock.withLock { records.append(Record(level: event.level, message: "\(event.message)", metadata: event.metadata ?? [:], source: event.source)) }
    }

    var all: [Record] { lock.withLock { records } }
}

/// A logger whose events land in `collector`.
func collectingLogger(_ collector: CollectingHandler, level: Logger.Level) -> Logger {
    var logger = Logger(label: "depot.test") { _ in collector }
    logger.logLevel = level
    return logger
}

@Suite("DepotLogging (swift-log adapter)")
struct LoggingTests {
    @Test func mapGrowthIsLoggedAtInfoWithoutValues() throws {
        let collector = CollectingHandler()
        var options = EnvironmentOptions()
        options.mapSize = 64 * 1024
        options.logger = DepotLogger(collectingLogger(collector, level: .info))
        let folder = TemporaryFolder("depot-logging")
        let env = try Environment.open(path: folder.path, options: options)
        let db = try env.openDatabase("blobs", key: BigEndian<UInt32>.self, value: StringCodec.self)
        let secret = String(repeating: "secret-value-", count: 300)
        for batch in 0..<20 as Range<UInt32> {
            try env.write { txn in
                for k in 0..<20 as Range<UInt32> { try txn.put(secret, forKey: batch * 20 + k, in: db) }
            }
        }
        let growth = collector.all.filter { $0.message == "map grown" }
        #expect(!growth.isEmpty, "writing about 80 KiB into a 64 KiB map grows it")
        #expect(growth.allSatisfy { $0.level == .info && $0.source == "DepotLMDB" })
        #expect(growth.first?.metadata["from"] == "65536")
        #expect(!collector.all.contains { "\($0.message) \($0.metadata)".contains("secret-value") }, "never stored values")
        #expect(!collector.all.contains { $0.level == .debug }, "info logger drops debug events")
    }

    @Test func groupCommitBatchesAreLoggedAtDebug() async throws {
        let collector = CollectingHandler()
        var options = EnvironmentOptions()
        options.logger = DepotLogger(collectingLogger(collector, level: .debug))
        let folder = TemporaryFolder("depot-logging-gc")
        let env = try Environment.open(path: folder.path, options: options)
        let db = try env.openDatabase("kv", key: StringCodec.self, value: StringCodec.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<16 {
                group.addTask { try await env.write { txn in try txn.put("v", forKey: "k\(i)", in: db) } }
            }
            try await group.waitForAll()
        }
        let batches = collector.all.filter { $0.message == "group commit: batch finished" }
        #expect(!batches.isEmpty)
        let written = batches.compactMap { record -> Int? in
            guard case .string(let text)? = record.metadata["batch"] else { return nil }
            return Int(text)
        }.reduce(0, +)
        #expect(written == 16, "every async write is in exactly one logged batch")
    }

    @Test func levelsMapBothWays() {
        for level in Logger.Level.allCases {
            #expect(Logger.Level(DepotLogger.Level(level)) == level)
        }
        #expect(DepotLogger.disabled.isEnabled(.critical) == false)
        let logger = DepotLogger(minimumLevel: .warning) { _ in }
        #expect(logger.isEnabled(.error) && !logger.isEnabled(.info))
        #expect(logger == logger && logger != DepotLogger(minimumLevel: .warning) { _ in })
    }
}

/// A repository whose saves fail, to see the error Persistent cannot throw from deinit.
final class FailingRepository: PersistentRepository, @unchecked Sendable {
    struct Refused: Error, CustomStringConvertible { var description: String { "refused by the test repository" } }
    let logger: DepotLogger
    init(logger: DepotLogger) { self.logger = logger }
    func load(_ key: String) throws -> [UInt8]? { nil }
    func save(_ bytes: [UInt8]?, forKey key: String) throws { throw Refused() }
    func observe(_ key: String, _ handler: @escaping @Sendable () -> Void) throws -> AnyObject? { nil }
}

@Suite("Background errors are logged")
struct BackgroundErrorLoggingTests {
    @Test func persistentDeinitSaveFailureIsLoggedAtError() throws {
        let collector = CollectingHandler()
        let repository = FailingRepository(logger: DepotLogger(collectingLogger(collector, level: .info)))
        do {
            let object = try Persistent<String>(key: "greeting", repository: repository)
            object.value = "top secret greeting"
        }
        let errors = collector.all.filter { $0.level == .error }
        #expect(errors.count == 1)
        #expect(errors.first?.message.contains("deinit") == true)
        #expect(errors.first?.metadata["key"] == "greeting")
        #expect(!collector.all.contains { "\($0.message) \($0.metadata)".contains("top secret") })
    }
}

import DepotLMDB
import DepotTestSupport
import Foundation
import Testing

@testable import Depot
@testable import DepotCore

/// Issue 30 item 2: every public numeric option is checked where it is given; an out-of-range
/// value is a typed error naming the option and its range, never a trap, a hang or a spin.
@Suite struct OptionRangeTests {
    /// The error an out-of-range option must be: `.invalidOption` naming the option.
    private func expectInvalidOption(_ name: String, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("\(name): an out-of-range value was accepted")
        } catch let error as DepotError {
            #expect(error.code == .invalidOption, "\(name): \(error)")
            #expect(error.message.contains(name), "\(name): the message names the option: \(error.message)")
            #expect(error.message.contains("allowed"), "\(name): the message gives the range: \(error.message)")
        } catch {
            Issue.record("\(name): not a DepotError: \(error)")
        }
    }

    /// The error an out-of-range environment option must be: `EINVAL` naming the option.
    private func expectInvalidEnvironment(_ name: String, _ change: (inout EnvironmentOptions) -> Void) {
        let folder = TemporaryFolder()
        var options = StoreOptions()
        change(&options.environment)
        do {
            _ = try Store(path: folder.path, options: options)
            Issue.record("\(name): an out-of-range value was accepted")
        } catch let error as DepotError {
            // LMDB's refusal, wrapped: code storage, matched by LMDB's pattern.
            #expect(error.code == .storage, "\(name): \(error)")
            #expect(LMDBError.invalidArgument ~= error, "\(name): \(error)")
            #expect(error.description.contains("'\(name)'") && error.description.contains("allowed"), "\(error)")
        } catch {
            Issue.record("\(name): not a DepotError: \(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/data.mdb"), "\(name): nothing is created")
    }

    @Test func watcherIntervalsOutsideTheRangeAreRefused() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        // -50 ms and -1 ns trapped on the watcher thread, 10^12 s and Int64.max s trapped on
        // overflow, zero spun a core.
        for interval: Duration in [.milliseconds(-50), .nanoseconds(-1), .zero, .nanoseconds(999_999),
                                   .seconds(5) + .nanoseconds(1), .seconds(1_000_000_000_000), .seconds(Int64.max)] {
            expectInvalidOption("watchExternalChanges(every:)") { _ = try store.watchExternalChanges(every: interval) }
        }
        for interval: Duration in [ExternalChangeWatcher.minimumInterval, ExternalChangeWatcher.maximumInterval] {
            let watcher = try store.watchExternalChanges(every: interval)
            watcher.stop()
        }
    }

    @Test func fileRepositoryIntervalsOutsideTheRangeAreRefused() throws {
        let folder = TemporaryFolder()
        let url = URL(fileURLWithPath: folder.path)
        for interval in [0, -1, 0.000_5, 3_601, .nan, .infinity, -.infinity] {
            expectInvalidOption("FileRepository(interval:)") { _ = try FileRepository(folder: url, interval: interval) }
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path), "a refused repository creates no folder")
        _ = try FileRepository(folder: url, interval: FileRepository.intervalRange.lowerBound)
        _ = try FileRepository(folder: url, interval: FileRepository.intervalRange.upperBound)
    }

    @Test func groupCommitBoundsOutsideTheRangeAreRefused() {
        // maxBatchSize 0 or -5 busy-looped the writer and hung every async write;
        // maxQueueLength 0 or -1 hung every async write.
        for value in [0, -5, Int.min] {
            expectInvalidEnvironment("groupCommit.maxBatchSize") { $0.groupCommit.maxBatchSize = value }
            expectInvalidEnvironment("groupCommit.maxQueueLength") { $0.groupCommit.maxQueueLength = value }
        }
        for value: Duration in [.nanoseconds(-1), .seconds(3_601), .seconds(Int64.max)] {
            expectInvalidEnvironment("groupCommit.maxWait") { $0.groupCommit.maxWait = value }
            expectInvalidEnvironment("groupCommit.adaptiveWait") { $0.groupCommit.adaptiveWait = value }
        }
    }

    @Test func environmentOptionsOutsideTheRangeAreRefused() {
        expectInvalidEnvironment("mapSize") { $0.mapSize = -1 }
        expectInvalidEnvironment("maxMapSize") { $0.maxMapSize = 4095 }
        for value in [-1, EnvironmentOptions.maxSlotCount + 1, Int.max] {
            expectInvalidEnvironment("maxDatabases") { $0.maxDatabases = value }
            expectInvalidEnvironment("maxReaders") { $0.maxReaders = value }
        }
        expectInvalidEnvironment("maxReaders") { $0.maxReaders = 0 }
        expectInvalidEnvironment("readTransactionPoolSize") { $0.readTransactionPoolSize = -1 }
        expectInvalidEnvironment("readTransactionPoolSize") { $0.readTransactionPoolSize = EnvironmentOptions.maxSlotCount + 1 }
        expectInvalidEnvironment("readTransactionPoolSize") { $0.readTransactionPoolSize = Int.max }
        expectInvalidEnvironment("fileMode") { $0.fileMode = 0o10000 }
        expectInvalidEnvironment("directoryMode") { $0.directoryMode = .max }
    }

    @Test func theExtremesOfTheRangesWork() async throws {
        for (batch, queue) in [(1, 1), (Int.max, Int.max)] {
            let folder = TemporaryFolder()
            var options = StoreOptions()
            options.environment.groupCommit.maxBatchSize = batch
            options.environment.groupCommit.maxQueueLength = queue
            options.environment.groupCommit.maxWait = .zero
            let store = try Store(path: folder.path, options: options)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { try await store.write { _ in } } }
                try await group.waitForAll()
            }
        }
    }

    @Test func aReservationOutsideTheRangeIsRefused() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let db = try env.openDatabase("r", key: StringCodec.self, value: BytesCodec.self)
        for count in [-1, Int.min, Int(UInt32.max) + 1] {
            let error = #expect(throws: LMDBError.self) {
                try env.write { txn in try txn.putReserving(count: count, forKey: "k", in: db) { _ in } }
            }
            #expect(error == .invalidArgument && error?.description.contains("putReserving(count:)") == true, "\(String(describing: error))")
        }
        try env.write { txn in try txn.putReserving(count: 0, forKey: "k", in: db) { _ in } }
        #expect(try env.read { try $0.get("k", in: db) } == [])
    }

    @Test func clampedOptionsStayUsable() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        #expect(store.enableUndo(levels: -3).levels == 1)
        let kv = store.keyValue(maxEntries: -1, maxBytes: Int.min)
        #expect(kv.maxEntries == 1 && kv.maxBytes == 1)
    }
}

#if Postgres
import Depot
import Foundation

/// A document with one indexed field (`group`, 100 groups) and a 100-byte payload.
struct BenchItem: Document {
    static var collection: String { "BenchItem" }
    var id: Int
    var group: Int
    var payload: String
    static var indexes: [DocumentIndex<BenchItem>] { [.init(\.group)] }

    init(_ id: Int) {
        self.id = id
        group = id % 100
        payload = Self.payload
    }

    /// The same 100 bytes in every document (as pgbench's `repeat('x', 100)`), made once: the
    /// bench times the store, not building a string per write.
    static let payload = String(repeating: "x", count: 100)
}

/// ``BenchItem`` without its index: one row per document, as pgbench's one-row insert writes
/// (the apples-to-apples figure beside the indexed one).
struct PlainBenchItem: Document {
    static var collection: String { "PlainBenchItem" }
    var id: Int
    var group: Int
    var payload: String

    init(_ id: Int) {
        self.id = id
        group = id % 100
        payload = BenchItem.payload
    }
}

/// Document-level figures through `Store`: single-document durable inserts, reads by ID,
/// indexed queries, and concurrent writers (each its own thread, one document per commit).
func measureDocuments(_ label: String, _ store: Store, documents: Int, writerCounts: [Int]) throws {
    var samples: [Double] = []
    for i in 0..<documents {
        samples.append(try microseconds { _ = try store.write { tx in try tx.park(BenchItem(i)) } })
    }
    report("\(label) doc insert", samples)
    samples = []
    for i in 0..<documents * 2 {
        samples.append(try microseconds {
            if try store.read({ tx in try tx.retrieve(BenchItem.self, id: i % documents) }) == nil { print("missing document \(i % documents)") }
        })
    }
    report("\(label) doc get by id", samples)
    samples = []
    let expected = (0..<documents).filter { $0 % 100 == 7 }.count
    for _ in 0..<min(documents, 200) {
        samples.append(try microseconds {
            let found = try store.read { tx in try tx.fetch(FetchRequest<BenchItem>().matching(\.group, .equalTo(7))) }
            if found.count != expected { print("indexed query found \(found.count), expected \(expected)") }
        })
    }
    report("\(label) indexed query (\(expected) docs)", samples)

    var next = documents
    for writers in writerCounts {
        let perWriter = max(1, min(documents, 400) / writers)
        let latencies = Locked<[Double]>([])
        let failures = Locked(0)
        let firstFailure = Locked<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        let first = next
        next += writers * perWriter
        let start = ContinuousClock.now
        for w in 0..<writers {
            let thread = Thread {
                var mine: [Double] = []
                for j in 0..<perWriter {
                    let id = first + w * perWriter + j
                    do {
                        mine.append(try microseconds { _ = try store.write { tx in try tx.park(BenchItem(id)) } })
                    } catch {
                        failures.withLock { $0 += 1 }
                        firstFailure.withLock { if $0 == nil { $0 = "\(error)" } }
                    }
                }
                latencies.withLock { $0 += mine }
                done.signal()
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
        for _ in 0..<writers { done.wait() }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let all = latencies.withLock { $0 }
        report("\(label) \(writers) writer\(writers == 1 ? "" : "s") commit", all)
        let failed = failures.withLock { $0 }
        print(String(format: "%@ %d writer%@: %.0f commits/s%@", label, writers, writers == 1 ? "" : "s", Double(all.count) / seconds,
                     failed > 0 ? " (\(failed) failed; first: \(firstFailure.withLock { $0 } ?? "?"))" : ""))
    }
}
/// A value shared by the writer threads, touched only under `lock` (`Synchronization.Mutex` would
/// raise the package's Apple platform floor to macOS 15 / iOS 18).
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try lock.withLock { try body(&value) }
    }
}
#endif

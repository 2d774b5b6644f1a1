import Depot
import Foundation

// depot-scaling: per-document cost of the document layer's repeated operations at n, 10n and
// 100n, so that anything whose cost grows with size shows up as a rising curve. Each point is
// measured in a fresh store; the figure is wall-clock nanoseconds per document (best of
// `--repeat` runs, default 2), printed as a table and optionally written as JSON.
//
//   swift run -c release --package-path Benchmarks depot-scaling [--quick] [--json FILE]

struct Department: Document, Equatable {
    var id: String
    var name: String
}

struct Employee: Document, Equatable {
    var id: Int
    var name: String
    var salary: Int
    var department: Department
}

final class CountingObserver: StoreObserver, @unchecked Sendable {
    // @unchecked Sendable: `ids` is only touched under `lock`.
    private let lock = NSLock()
    private var ids = 0
    var count: Int { lock.withLock { ids } }
    func store(_ store: Store, didCommit changes: ChangeSet) {
        lock.withLock { ids += changes.collections.reduce(0) { $0 + $1.created.count + $1.updated.count } }
    }
}

struct Point: Codable {
    var curve: String
    var documents: Int
    var nsPerDocument: Double
}

let arguments = CommandLine.arguments
let quick = arguments.contains("--quick")
let jsonPath = arguments.firstIndex(of: "--json").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
let repeats = arguments.firstIndex(of: "--repeat").flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil } ?? 2
let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("depot-scaling-\(getpid())").path
let departments = [Department(id: "sales", name: "Sales"), Department(id: "research", name: "Research")]

struct Mismatch: Error, CustomStringConvertible { var description: String }

nonisolated(unsafe) var storeNumber = 0 // single-threaded harness

func fresh() throws -> Store {
    try? FileManager.default.removeItem(atPath: scratch)
    storeNumber += 1
    let path = scratch + "/\(storeNumber)"
    var options = StoreOptions()
    options.environment.mapSize = 1 << 30
    options.environment.unsafeDurability = [.noSync, .noMetaSync] // measure the code, not the disk
    return try Store(path: path, options: options)
}

func employee(_ i: Int) -> Employee {
    Employee(id: i, name: "Employee \(i)", salary: i % 200, department: departments[i % 2])
}

func measure(_ n: Int, _ body: (Store) throws -> Void, setUp: (Store) throws -> Void = { _ in }) throws -> Double {
    var best = Double.infinity
    for _ in 0..<repeats {
        let store = try fresh()
        try setUp(store)
        let start = DispatchTime.now().uptimeNanoseconds
        try body(store)
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start)
        best = min(best, elapsed / Double(n))
    }
    return best
}

func insert(observed: Bool) -> (Int) throws -> Double {
    { n in
        let observer = CountingObserver()
        let ns = try measure(n, { store in
            try store.write { tx in for i in 0..<n { try tx.park(employee(i)) } }
        }, setUp: { store in if observed { store.addObserver(observer) } })
        if observed && observer.count != repeats * (n + 2) {
            throw Mismatch(description: "observer saw \(observer.count) documents, expected \(repeats * (n + 2))")
        }
        return ns
    }
}

func autosaveOff(_ n: Int) throws -> Double {
    try measure(n, { store in
        store.autosave = false
        for i in 0..<n { try store.park(employee(i)) }
        _ = try store.retrieve(Employee.self, id: n / 2)
        try store.save()
        let saved = try store.count(Employee.self)
        if saved != n { throw Mismatch(description: "saved \(saved) of \(n)") }
    })
}

/// Undo on: n commits in one group (one undo step), then the step undone.
func undoGroup(_ n: Int) throws -> Double {
    try measure(n, { store in
        let history = store.enableUndo()
        try history.group { for i in 0..<n { try store.write { tx in try tx.park(employee(i)) } } }
        try history.undo()
        let left = try store.count(Employee.self)
        if left != 0 { throw Mismatch(description: "\(left) employees left after undoing the group") }
    })
}

/// Undo on: one transaction with n savepoints that roll back, then n parks.
func undoSavepoints(_ n: Int) throws -> Double {
    struct Rollback: Error {}
    return try measure(n, { store in
        _ = store.enableUndo()
        try store.write { tx in
            for i in 0..<n {
                _ = try? tx.savepoint { try tx.park(employee(i)); throw Rollback() }
                try tx.park(employee(n + i))
            }
        }
    })
}

/// The key/value cache (maxEntries 100): n values set, unsaved, then one save.
func keyValueUnsaved(_ n: Int) throws -> Double {
    try measure(n, { store in
        let kv = store.keyValue(maxEntries: 100)
        for i in 0..<n { kv["k\(i)"] = i }
        try kv.save()
        if kv.statistics.entries != 100 { throw Mismatch(description: "\(kv.statistics.entries) entries cached after save") }
    })
}

/// The key/value cache (maxEntries 1,000): each value set and saved (a full cache evicts).
func keyValueSetSave(_ n: Int) throws -> Double {
    try measure(n, { store in
        let kv = store.keyValue(maxEntries: 1_000)
        for i in 0..<n {
            kv["k\(i)"] = i
            try kv.save("k\(i)")
        }
    })
}

// `--point NAME N`: one measurement only (for callgrind: instructions per document are the
// difference between two sizes divided by the difference in documents).
if let i = arguments.firstIndex(of: "--point"), arguments.indices.contains(i + 2), let n = Int(arguments[i + 2]) {
    let run: (Int) throws -> Double
    switch arguments[i + 1] {
    case "insert": run = insert(observed: false)
    case "insert-observed": run = insert(observed: true)
    case "autosave-off": run = autosaveOff
    case "undo-group": run = undoGroup
    case "undo-savepoints": run = undoSavepoints
    case "kv-unsaved": run = keyValueUnsaved
    case "kv-set-save": run = keyValueSetSave
    default:
        throw Mismatch(description: "unknown point '\(arguments[i + 1])' (insert, insert-observed, autosave-off, undo-group, undo-savepoints, kv-unsaved, kv-set-save)")
    }
    print(String(format: "%@ %d: %.0f ns per document", arguments[i + 1], n, try run(n)))
    exit(0)
}

let base = quick ? 1_000 : 10_000
var points: [Point] = []
let curves: [(String, [Int], (Int) throws -> Double)] = [
    ("insert, one transaction, no observer", [base, base * 10, base * 100], insert(observed: false)),
    ("insert, one transaction, observer attached", [base, base * 10, base * 100], insert(observed: true)),
    ("autosave off: park, read, save", [base / 10, base, base * 10], autosaveOff),
    ("undo on: commits in one group, then undone", [base / 10, base, base * 10], undoGroup),
    ("undo on: rolled-back savepoints in one transaction", [base / 10, base, base * 10], undoSavepoints),
    ("key/value: unsaved sets, then one save", [base, base * 10, base * 100], keyValueUnsaved),
    ("key/value: set and save each, full cache", [base / 10, base, base * 10], keyValueSetSave),
]
print("curve | documents | ns per document | vs first point")
print("---|---:|---:|---:")
for (name, sizes, run) in curves {
    var first: Double?
    for n in sizes {
        let ns = try run(n)
        first = first ?? ns
        points.append(Point(curve: name, documents: n, nsPerDocument: ns))
        print(String(format: "%@ | %d | %.0f | %.2f×", name, n, ns, ns / (first ?? ns)))

    }
}
// The observer's cost relative to none, at each size.
for i in 0..<3 {
    let plain = points[i].nsPerDocument, observed = points[i + 3].nsPerDocument
    print(String(format: "observer cost at %d documents: %.2f×", points[i].documents, observed / plain))
}
try? FileManager.default.removeItem(atPath: scratch)
if let jsonPath {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try encoder.encode(points).write(to: URL(fileURLWithPath: jsonPath))
}

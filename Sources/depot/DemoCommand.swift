import ArgumentParser
import DepotLMDB
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Show the engine at work on an embedded store in a local folder.")

    @Option(help: "The folder to use (created; the stores the demo made there before are replaced, and a subfolder it did not make (kv, growth, documents, seeded) is refused, never emptied).")
    var path: String = "./depot-demo"
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if path.isEmpty { throw ValidationError("--path must not be empty") }
    }

    func run() async throws {
        try reportingErrors {
            var demo = Demo(root: path)
            try demo.run()
        }
    }
}

/// Prints timed steps.
struct Demo {
    let root: String

    mutating func run() throws {
        demoLine("Depot demo in '\(root)' — \(Environment.libraryVersion)")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        // The demo replaces its own stores in the folder: a second demo there at the same time
        // would delete files the first has open. One at a time (the lock ends with the process).
        let lock = open(root + "/.depot-demo.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard lock >= 0 else {
            throw CLIFailure(code: "unwritable", message: "cannot create '\(root)/.depot-demo.lock': \(String(cString: strerror(errno)))")
        }
        defer { close(lock) }
        if flock(lock, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK else {
                throw CLIFailure(code: "unlockable", message: "cannot lock '\(root)/.depot-demo.lock': \(String(cString: strerror(errno)))")
            }
            throw CLIFailure(code: "busy", message: "another depot demo is running in '\(root)': wait for it to end, or pass another --path")
        }
        try keyValueTour()
        try mapGrowthTour()
        try documentTour()
        try seedTour()
        demoLine("\nDone. Look inside with: swift run depot stat --path \(root)/kv  or  swift run depot export --path \(root)/documents")
    }

    /// The demo's subfolder `name` of the root, marked as the demo's (`.depot-demo-store`). One
    /// the demo made before is emptied first when `replace`; an existing folder without the
    /// mark that holds anything (a user's store, their files) is refused, never touched.
    func demoFolder(_ name: String, replace: Bool) throws -> String {
        let path = root + "/" + name, mark = path + "/.depot-demo-store"
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: path, isDirectory: &isDirectory) {
            // A folder that cannot be listed is never taken for an empty one.
            guard isDirectory.boolValue, let contents = try? fm.contentsOfDirectory(atPath: path) else {
                throw CLIFailure(code: "notDemoFolder", message: "'\(path)' is not a folder the demo can list: it is left as it is; pass another --path")
            }
            if !contents.isEmpty && !fm.fileExists(atPath: mark) {
                throw CLIFailure(code: "notDemoFolder",
                                 message: "'\(path)' holds files the demo did not make (or made before it marked its folders): the demo never empties such a folder; remove it yourself, or pass another --path")
            }
            if replace && !contents.isEmpty { try fm.removeItem(atPath: path) }
        }
        try fm.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard fm.createFile(atPath: mark, contents: Data("made by 'depot demo', which may replace this folder\n".utf8)) else {
            throw CLIFailure(code: "unwritable", message: "cannot create '\(mark)': \(String(cString: strerror(errno)))")
        }
        return path
    }

    func step<R>(_ title: String, _ body: () throws -> R) rethrows -> R {
        let start = DispatchTime.now().uptimeNanoseconds
        let result = try body()
        let ms = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        if OutputConvention.json {
            print((try? JSONOutput.line(["step": title, "milliseconds": ms] as [String: Any])) ?? "")
        } else {
            print("  " + title + String(repeating: " ", count: max(0, 58 - title.count)) + String(format: "%10.2f ms", ms))
        }
        return result
    }

    func keyValueTour() throws {
        demoLine("\n1. Key/value binding (DepotLMDB)")
        let env = try Environment.open(path: try demoFolder("kv", replace: false))
        let users = try env.openDatabase("users", key: StringCodec.self, value: StringCodec.self)
        let counters = try env.openDatabase("counters", key: BigEndian<Int64>.self, value: BigEndian<UInt64>.self)
        try env.write { txn in
            try txn.clear(users)
            try txn.clear(counters)
        }
        let n = 100_000
        try step("write \(n) counters in one transaction") {
            try env.write { txn in
                for i in 0..<n { try txn.put(UInt64(i) * 2, forKey: Int64(i - n / 2), in: counters, flags: .append) }
            }
        }
        let sum = try step("read all \(n) back with a cursor scan") {
            try env.read { txn in
                var total: UInt64 = 0
                try txn.forEach(in: counters) { _, value in total &+= value; return true }
                return total
            }
        }
        demoLine("    sum of values: \(sum)")
        let hits = try step("10,000 random point reads") {
            try env.read { txn in
                var found = 0
                for i in 0..<10_000 where try txn.get(Int64((i * 7919) % n - n / 2), in: counters) != nil { found += 1 }
                return found
            }
        }
        demoLine("    found \(hits) of 10000")
        try step("write 3 users") {
            try env.write { txn in
                for (id, name) in [("u1", "Ada Lovelace"), ("u2", "Grace Hopper"), ("u3", "Edsger Dijkstra")] {
                    try txn.put(name, forKey: id, in: users)
                }
            }
        }
        let listed = try env.read { try $0.entries(in: users, range: .prefix("u")) }
        for (key, value) in listed { demoLine("    \(key) = \(value)") }
        struct Rollback: Error {}
        do {
            try env.write { txn in
                try txn.put("Mallory", forKey: "u4", in: users)
                throw Rollback()
            }
        } catch is Rollback {
            let present = try env.read { try $0.get("u4", in: users) } != nil
            demoLine("    rollback: a write that threw left u4 \(present ? "PRESENT (bug!)" : "absent")")
        }
        try env.write { txn in
            try txn.put("Barbara Liskov", forKey: "u4", in: users)
            _ = try? txn.nested { child -> Void in
                try child.put("Mallory", forKey: "u5", in: users)
                throw Rollback()
            }
        }
        let u4 = try env.read { try $0.get("u4", in: users) } ?? "-"
        let u5 = try env.read { try $0.get("u5", in: users) } ?? "absent"
        demoLine("    savepoint: parent kept u4 = \(u4); aborted child left u5 \(u5)")
    }

    func mapGrowthTour() throws {
        demoLine("\n2. Automatic map growth")
        let path = try demoFolder("growth", replace: true)
        var options = EnvironmentOptions()
        options.mapSize = 64 * 1024
        let env = try Environment.open(path: path, options: options)
        let blobs = try env.openDatabase("blobs", key: BigEndian<UInt32>.self, value: BytesCodec.self)
        let before = try env.info().mapSize
        let payload = [UInt8](repeating: 0xAB, count: 4096)
        try step("write 8 MiB into a map that started at 64 KiB") {
            for batch in 0..<32 as Range<UInt32> {
                try env.write { txn in
                    for i in 0..<64 as Range<UInt32> { try txn.put(payload, forKey: batch * 64 + i, in: blobs) }
                }
            }
        }
        let count = try env.read { try $0.count(blobs) }
        demoLine("    map grew from \(before) to \(try env.info().mapSize) bytes; \(count) records, no error seen by the caller")
    }
}

/// A line of the demo's narration (left out with --json, which prints only the timed steps).
func demoLine(_ text: String) {
    if !OutputConvention.json { print(text) }
}

import Foundation

/// The ratios reported per workload: numerator column / denominator column.
let ratioColumns: [(String, String)] = [("lmdb", "c"), ("documents", "c"), ("grdb", "documents"), ("grdb", "lmdb"), ("json", "documents"), ("scan", "documents")]

struct Report {
    let sizes: Sizes
    let samples: [Workload: [String: [Double]]]
    let groupCommit: GroupCommitReport?

    func median(_ workload: Workload, _ engine: String) -> Double? {
        guard let values = samples[workload]?[engine], !values.isEmpty else { return nil }
        return depot_compare.median(values)
    }

    func ratio(_ workload: Workload, _ a: String, _ b: String) -> Double? {
        guard workload.engines.contains(a), workload.engines.contains(b),
              let x = median(workload, a), let y = median(workload, b), y > 0 else { return nil }
        return x / y
    }

    static func format(_ ns: Double?) -> String {
        guard let ns else { return "n/a" }
        return ns < 100 ? String(format: "%.1f", ns) : String(format: "%.0f", ns)
    }

    static func formatRatio(_ r: Double?) -> String {
        guard let r else { return "n/a" }
        return String(format: "%.2fx", r)
    }

    func table() -> String {
        let columns = ["c", "lmdb", "documents", "grdb", "json", "scan"]
        let ratios = [("lmdb", "c"), ("documents", "c"), ("grdb", "documents")]
        var header = ["workload", "ops"] + columns.map { "\($0) ns/op" } + ratios.map { "\($0.0)/\($0.1)" }
        var rows: [[String]] = []
        for w in Workload.wallClock {
            var row = [w.rawValue, "\(w.operations(sizes))"]
            for c in columns {
                row.append(w.engines.contains(c) ? Self.format(median(w, c)) : "-")
            }
            for (a, b) in ratios { row.append(Self.formatRatio(ratio(w, a, b))) }
            rows.append(row)
        }
        // grdb/lmdb is printed too, as grdb/documents is n/a until the document layer lands.
        header.append("grdb/lmdb")
        for (i, w) in Workload.wallClock.enumerated() { rows[i].append(Self.formatRatio(ratio(w, "grdb", "lmdb"))) }
        var out = "median ns/op over \(sizes.rounds) rounds (lower is better; n/a = not measured yet, - = not applicable)\n"
        out += renderTable(header: header, rows: rows)
        out += "\n"
        for w in Workload.wallClock { out += "  \(w.rawValue): \(w.note)\n" }
        return out
    }

    func writeJSON(to path: String, command: String, quick: Bool, seconds: Double) throws {
        var workloads: [String: Any] = [:]
        var ratios: [String: Any] = [:]
        var raw: [String: Any] = [:]
        var best: [String: Any] = [:]
        for w in Workload.wallClock {
            // The fastest round per engine: a robust second view when other processes share the machine.
            best[w.rawValue] = (samples[w] ?? [:]).mapValues { ($0.min() ?? .nan).rounded(places: 2) }
            var entry: [String: Any] = [:]
            for column in Set(["c", "lmdb", "documents", "grdb"] + w.engines) {
                entry[column] = median(w, column).map { $0.rounded(places: 2) as Any } ?? NSNull()
            }
            entry["ops"] = w.operations(sizes)
            workloads[w.rawValue] = entry
            var r: [String: Any] = [:]
            for (a, b) in ratioColumns where w.engines.contains(a) && w.engines.contains(b) {
                r["\(a)/\(b)"] = ratio(w, a, b).map { $0.rounded(places: 3) as Any } ?? NSNull()
            }
            ratios[w.rawValue] = r
            raw[w.rawValue] = (samples[w] ?? [:]).mapValues { $0.map { $0.rounded(places: 2) } }
        }
        var machine: [String: Any] = [
            "cores": Machine.cores, "memoryGiB": Machine.memoryGiB, "kernel": Machine.kernel, "lmdb": Machine.lmdbVersion,
        ]
        if let cpu = Machine.cpuModel { machine["cpu"] = cpu }
        var object: [String: Any] = [
            "workloads": workloads,
            "ratios": ratios,
            "samples": raw,
            "best": best,
            "notes": Dictionary(uniqueKeysWithValues: Workload.wallClock.map { ($0.rawValue, $0.note) }),
            "unit": "median ns/op across rounds",
            "rounds": sizes.rounds,
            "machine": machine,
            "date": ISO8601DateFormatter().string(from: Date()),
            "command": command,
            "quick": quick,
            "seconds": seconds.rounded(places: 1),
        ]
        object["groupCommit"] = groupCommit?.json ?? NSNull()
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try (data + Data("\n".utf8)).write(to: url, options: .atomic)
    }
}

func renderTable(header: [String], rows: [[String]]) -> String {
    let widths = header.indices.map { i in ([header[i]] + rows.map { $0[i] }).map(\.count).max() ?? 0 }
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { i, cell in
            i == 0 ? cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
                   : String(repeating: " ", count: widths[i] - cell.count) + cell
        }.joined(separator: "  ")
    }
    return ([line(header), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")] + rows.map(line))
        .joined(separator: "\n") + "\n"
}

/// Concurrent durable single writes: synchronous transactions vs group commit, per writer count.
struct GroupCommitReport {
    var configs: [(sync: GroupCommitSample, grouped: GroupCommitSample, waited: GroupCommitSample)] = []
    /// The group-commit variant with `GroupCommitOptions.maxWait` set (the writer waits that long for more work).
    static let tunedMaxWait: Duration = .microseconds(200)
    var c: GroupCommitSample?

    /// `noSync` (diagnostics only): no fsync at all, so that the writes/s show the cost of the
    /// hand-off between the tasks and the writer thread rather than the disk's.
    /// `interleaved`: the writers' keys interleave (see ``GroupCommitBench/run``) instead of lying in separate ranges.
    static func measure(sizes: Sizes, scratch: Scratch, noSync: Bool = false, interleaved: Bool = false) async throws -> GroupCommitReport {
        var report = GroupCommitReport()
        let value = benchValue(sizes.valueSize)
        let cFolder = scratch.folder("gc-c")
        report.c = try GroupCommitBench.runC(writes: min(sizes.groupCommitWrites, sizes.durableWrites * 2), folder: cFolder, value: value)
        scratch.remove(cFolder)
        for writers in sizes.groupCommitWriters {
            let a = scratch.folder("gc-sync-\(writers)")
            let sync = try await GroupCommitBench.run(writers: writers, totalWrites: sizes.groupCommitWrites, grouped: false, folder: a, value: value, noSync: noSync, interleaved: interleaved)
            scratch.remove(a)
            let b = scratch.folder("gc-async-\(writers)")
            let grouped = try await GroupCommitBench.run(writers: writers, totalWrites: sizes.groupCommitWrites, grouped: true, folder: b, value: value, noSync: noSync, interleaved: interleaved)
            scratch.remove(b)
            let c = scratch.folder("gc-wait-\(writers)")
            let waited = try await GroupCommitBench.run(writers: writers, totalWrites: sizes.groupCommitWrites, grouped: true,
                                                        maxWait: tunedMaxWait, folder: c, value: value, noSync: noSync,
                                                        interleaved: interleaved)
            scratch.remove(c)
            log(String(format: "group commit, %d writers: sync %.0f, async %.0f, async+maxWait %.0f writes/s",
                       writers, sync.writesPerSecond, grouped.writesPerSecond, waited.writesPerSecond))
            report.configs.append((sync, grouped, waited))
        }
        return report
    }

    func table() -> String {
        var rows: [[String]] = []
        for (sync, grouped, waited) in configs {
            rows.append(["\(sync.writers)", "\(sync.writes)",
                         String(format: "%.0f", sync.writesPerSecond), String(format: "%.2f", sync.p99Ms),
                         String(format: "%.0f", grouped.writesPerSecond), String(format: "%.2f", grouped.p99Ms),
                         String(format: "%.1fx", grouped.writesPerSecond / sync.writesPerSecond),
                         String(format: "%.1f", grouped.meanBatch),
                         String(format: "%.0f", waited.writesPerSecond), String(format: "%.2f", waited.p99Ms),
                         String(format: "%.1fx", waited.writesPerSecond / sync.writesPerSecond),
                         String(format: "%.1f", waited.meanBatch)])
        }
        var out = "durable single-record writes from concurrent tasks (DepotLMDB)\n"
        out += renderTable(header: ["writers", "writes", "sync writes/s", "sync p99 ms", "group writes/s", "group p99 ms", "group/sync",
                                    "mean batch", "wait writes/s", "wait p99 ms", "wait/sync", "wait batch"], rows: rows)
        if let c {
            out += String(format: "C on liblmdb, 1 writer, one durable txn per write: %.0f writes/s, p99 %.2f ms (%d writes)\n",
                          c.writesPerSecond, c.p99Ms, c.writes)
        }
        out += "sync = each write its own `env.write {}` (fsync per write); group = `try await env.write {}` (group commit, default options);\n"
        out += "wait = group commit with GroupCommitOptions.maxWait = \(Self.tunedMaxWait) (the writer waits that long for more work)\n"
        return out
    }

    var json: [String: Any] {
        var object: [String: Any] = [
            "configs": configs.map { sync, grouped, waited -> [String: Any] in
                ["writers": sync.writers, "sync": sync.json, "groupCommit": grouped.json, "groupCommitMaxWait": waited.json,
                 "throughputRatio": (grouped.writesPerSecond / sync.writesPerSecond).rounded(places: 2),
                 "throughputRatioMaxWait": (waited.writesPerSecond / sync.writesPerSecond).rounded(places: 2)]
            },
            "maxWaitMicroseconds": 200,
        ]
        object["c1Writer"] = c?.json ?? NSNull()
        return object
    }
}

#if Postgres
import Depot
import DepotPostgres
import Foundation

extension Compare {
    /// `writers COUNT [SECONDS] [indexed|plain|watched] [threads|tasks]`: ``measureWriters``
    /// alone on a fresh schema, with its commits/s and CPU per commit; `tasks`: the writers are
    /// tasks awaiting `Store.write` (async), as a service's requests would be. The pool is the
    /// driver's default (``PostgresConfiguration/maximumConnections``) unless
    /// `DEPOT_BENCH_CONNECTIONS=N` sets it.
    static func writersAlone(_ arguments: [String], url: String) throws {
        guard let writers = arguments.first.flatMap({ Int($0) }), writers > 0 else {
            throw PostgresDriverError.invalidConfiguration("usage: writers COUNT [SECONDS] [indexed|plain|watched] [threads|tasks]")
        }
        let seconds = arguments.dropFirst().first.flatMap { Double($0) } ?? 3
        let kind = arguments.dropFirst(2).first ?? "indexed"
        guard ["indexed", "plain", "watched"].contains(kind) else {
            throw PostgresDriverError.invalidConfiguration("writers: the kind is indexed, plain or watched, not \(kind)")
        }
        let callers = arguments.dropFirst(3).first ?? "threads"
        guard ["threads", "tasks"].contains(callers) else {
            throw PostgresDriverError.invalidConfiguration("writers: the writers are threads or tasks, not \(callers)")
        }
        var configuration = try PostgresConfiguration(url: url)
        configuration.schema = "writers_" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        if let pool = ProcessInfo.processInfo.environment["DEPOT_BENCH_CONNECTIONS"] {
            guard let size = Int(pool), size > 0 else {
                throw PostgresDriverError.invalidConfiguration("DEPOT_BENCH_CONNECTIONS is a positive number of connections, not \(pool)")
            }
            configuration.maximumConnections = size
        }
        let (result, cpu) = try CPUUse.measuring {
            try measureWriters(configuration, writers: writers, seconds: seconds, firstID: 0, watched: kind == "watched", indexed: kind != "plain",
                               tasks: callers == "tasks")
        }
        let rate = String(format: "%.0f", Double(result.commits) / seconds)
        print("\(writers) writers (\(callers)), \(kind): \(rate) commits/s, CPU per commit µs (client / rest) \(cpu.perCommit(result.commits)); \(note(result, memory: true))")
        print("(schema \(configuration.schema) left in place)")
    }
}
#endif

#if Postgres
import Foundation

/// CPU time used while one figure was measured: by this program (its threads, and the child
/// processes it waited for: pgbench, the writer processes), and by the whole machine (from
/// `/proc/stat`: the server's processes, its WAL writer, anything else running). On a machine
/// whose few cores the client and the server share, a throughput ratio is mostly a ratio of CPU
/// per commit; this says whose CPU it was.
struct CPUUse {
    /// Seconds of CPU of this process and its waited-for children.
    var program: Double
    /// Of ``program``, seconds in the kernel (system calls: sockets, wake-ups).
    var programSystem: Double
    /// Seconds the machine's cores were busy (user, nice, system, irq, softirq), all cores.
    var machine: Double

    /// The counters now (`machine` is 0 where `/proc/stat` cannot be read).
    static func now() -> CPUUse {
        func seconds(_ who: Int32) -> (user: Double, system: Double) {
            var usage = rusage()
            guard getrusage(__rusage_who_t(who), &usage) == 0 else { return (0, 0) }
            func value(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
            return (value(usage.ru_utime), value(usage.ru_stime))
        }
        let (own, children) = (seconds(RUSAGE_SELF.rawValue), seconds(RUSAGE_CHILDREN.rawValue))
        var machine = 0.0
        if let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
           let line = text.split(separator: "\n").first, line.hasPrefix("cpu ") {
            // user nice system idle iowait irq softirq steal …
            let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
            if ticks.count >= 7 {
                machine = (ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6]) / Double(sysconf(Int32(_SC_CLK_TCK)))
            }
        }
        return CPUUse(program: own.user + own.system + children.user + children.system,
                      programSystem: own.system + children.system, machine: machine)
    }

    /// The CPU used between `earlier` and `self`.
    func since(_ earlier: CPUUse) -> CPUUse {
        CPUUse(program: program - earlier.program, programSystem: programSystem - earlier.programSystem, machine: machine - earlier.machine)
    }

    /// Runs `body`; its result and the CPU used meanwhile.
    static func measuring<T>(_ body: () throws -> T) rethrows -> (T, CPUUse) {
        let before = now()
        let result = try body()
        return (result, now().since(before))
    }

    /// "client (of which in the kernel) / rest" in µs per commit (the rest: the server and
    /// anything else on the machine).
    func perCommit(_ commits: Int) -> String {
        guard commits > 0 else { return "—" }
        let client = program / Double(commits) * 1e6, kernel = programSystem / Double(commits) * 1e6
        let rest = max(0, machine - program) / Double(commits) * 1e6
        return String(format: "%.0f (kernel %.0f) / %.0f", client, kernel, rest)
    }
}
#endif
